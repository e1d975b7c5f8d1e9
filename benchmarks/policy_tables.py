"""Policy tables of each pair's sweep (``benchmarks/policies_<pair>.yaml``: en-es and en-de):
per policy, BLEU / LAAL / LAAL_CA of each setting on each model, next to that model's
offline greedy BLEU; and the table of docs/reference/policy_tables.md, every policy's rows
with the models side by side.

    python benchmarks/policy_tables.py --run              # both pairs' sweeps, then the tables
    python benchmarks/policy_tables.py [--pairs en-de]    # the tables of finished sweeps
    python benchmarks/policy_tables.py --rates [--pairs en-de] [--models M ...] [--utterances 200]

``--run`` runs (or resumes) the sweeps first, on every core (``--workers N``). Prints
Markdown and writes ``tables/<policy>.md`` and ``.csv``, and ``tables/page.md`` (the docs'
table), next to each sweep's summary.

``--rates`` prints what explains the rows where a policy collapses: how many target units
per second of audio each model must write to keep pace (references in the model's own
units), against how often the source offers a decision point (words, phonemes). A policy
that writes a fixed number of units per decision point (wait-k over frames, triggers or
words) runs ahead of the speech when its write rate exceeds the unit rate, and then
translates audio it has not heard.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from simul import sweep
from simul.analysis import tables

BENCHMARKS = Path(__file__).resolve().parent
PAIRS = ("en-es", "en-de")
"""The pairs with a spec, ``policies_<pair>.yaml`` beside this file."""

COLUMNS = ["model", "setting", "BLEU", "LAAL", "LAAL_CA", "CA_overhead_ms",
           "offline_greedy_BLEU", "utterances"]


def policy_tables(summary: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Policy name → its table (rows: model, setting)."""
    offline = summary[(summary.policy == "offline") & (summary.setting == "beam=1")]
    greedy = dict(zip(offline.model, offline.BLEU, strict=True))
    missing = sorted(set(summary.model) - set(greedy))
    if missing:
        raise SystemExit(f"no offline beam=1 row for {missing}: the sweep needs it")
    df = summary.assign(CA_overhead_ms=summary.LAAL_CA - summary.LAAL,
                        offline_greedy_BLEU=summary.model.map(greedy))
    return {policy: group[COLUMNS].reset_index(drop=True)
            for policy, group in df.groupby("policy", sort=False)}


def spec_path(pair: str) -> Path:
    """The sweep spec of ``pair``'s policy tables."""
    path = BENCHMARKS / f"policies_{pair}.yaml"
    if not path.is_file():
        raise SystemExit(f"--pairs {pair}: no spec {path} (pairs with one: {', '.join(PAIRS)})")
    return path


def output_of(pair: str) -> Path:
    """Where ``pair``'s sweep writes (its spec's ``output``, relative to the spec)."""
    return sweep.Spec.load(spec_path(pair)).output


def model_label(model: str) -> str:
    """A model's column label: its architecture ("conformer_bpe_en-de" → "Conformer")."""
    kind = model.split("_")[0]
    return {"blstm": "BLSTM", "conformer": "Conformer", "transformer": "Transformer"}.get(
        kind, model)


def page_table(summary: pd.DataFrame) -> pd.DataFrame:
    """The docs' table of one pair: a row per (policy, setting) in the sweep's order, for
    each model its BLEU, LAAL and LAAL_CA (ms)."""
    models = list(dict.fromkeys(summary.model))
    order = list(dict.fromkeys(zip(summary.policy, summary.setting, strict=True)))
    table = pd.DataFrame({"policy": [p for p, _ in order],
                          "setting": [s.replace("_", " ") for _, s in order]})
    for model in models:
        rows = summary[summary.model == model].set_index(["policy", "setting"])
        label = model_label(model)
        for metric, column in (("BLEU", f"{label} BLEU"), ("LAAL", "LAAL"),
                               ("LAAL_CA", "LAAL_CA")):
            digits = 1 if metric == "BLEU" else 0
            table[column if metric == "BLEU" else f"{column} ({label})"] = [
                round(float(rows.loc[key, metric]), digits) if key in rows.index else None
                for key in order]
    return table


def rates(models: list[str], pair: str, split: str, utterances: int) -> pd.DataFrame:
    """Per model: reference units per second of source audio; per source: words and
    phonemes per second (the corpus alignments), over the first ``utterances`` segments."""
    from simul.corpus import DEFAULT_ROOT, load_list
    from simul.models.loader import load

    segments = load_list(DEFAULT_ROOT, pair, split, limit=utterances, with_audio=False)
    seconds = sum(s.duration_ms for s in segments) / 1000.0
    rows = [{"what": "source words (oracle boundaries)",
             "per_second": sum(len(s.alignment.words) for s in segments) / seconds},
            {"what": "source phonemes (oracle boundaries)",
             "per_second": sum(len(s.alignment.phonemes) for s in segments) / seconds}]
    for name in models:
        model = load(name)
        units = sum(len(model.encode_text(s.target)) for s in segments)
        rows.append({"what": f"target units of {name} ({model.unit_type})",
                     "per_second": units / seconds})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", nargs="+", default=list(PAIRS), metavar="PAIR",
                    help="pairs whose tables to make [%(default)s]")
    ap.add_argument("--run", action="store_true",
                    help="run (or resume) each pair's sweep first")
    ap.add_argument("--workers", type=int, default=None,
                    help="--run: local processes [one per core]")
    ap.add_argument("--rates", action="store_true",
                    help="print unit and decision-point rates instead (no sweep needed)")
    ap.add_argument("--models", nargs="*", default=None,
                    help="--rates: models [the pair's spec's]")
    ap.add_argument("--utterances", type=int, default=200)
    args = ap.parse_args(argv)
    for pair in args.pairs:
        spec = sweep.Spec.load(spec_path(pair))
        if args.rates:
            table = rates(args.models or spec.models, pair, "tst-COMMON", args.utterances)
            print(f"### {pair}, tst-COMMON, first {args.utterances} segments: rates per "
                  "second of audio\n")
            print(table.to_markdown(index=False, floatfmt=".1f"), "\n")
            continue
        summary = (sweep.run(spec_path(pair), workers=args.workers) if args.run
                   else sweep.read_summary(spec.output))
        out = Path(spec.output) / "tables"
        splits = sorted(set(summary.split))
        for policy, table in policy_tables(summary).items():
            caption = (f"{pair} {policy}: {', '.join(splits)}, {int(table.utterances.max())} "
                       "segments; latencies in ms")
            tables.save(table, out, policy, digits=1, caption=caption)
            print(f"### {caption}\n")
            print(table.drop(columns="utterances").to_markdown(index=False, floatfmt=".1f"),
                  "\n")
        page = page_table(summary).to_markdown(index=False, floatfmt="g")
        (out / "page.md").write_text(page + "\n")
        print(f"### {pair}: the docs' table ({out / 'page.md'})\n\n{page}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
