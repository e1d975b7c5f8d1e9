"""Policy tables from a finished sweep: per policy, BLEU / LAAL / LAAL_CA of each setting
on each model, next to that model's offline greedy BLEU.

    simul sweep benchmarks/policies_en-es.yaml
    python benchmarks/policy_tables.py [runs/policies_en-es]
    python benchmarks/policy_tables.py --rates [--models M ...] [--utterances 200]

Prints Markdown and writes ``tables/<policy>.md`` and ``.csv`` next to the summary.

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

from simul import sweep, tables

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
    ap.add_argument("output", nargs="?", default="runs/policies_en-es",
                    help="the sweep's output directory [%(default)s]")
    ap.add_argument("--rates", action="store_true",
                    help="print unit and decision-point rates instead (no sweep needed)")
    ap.add_argument("--models", nargs="*", default=["conformer_bpe_en-es", "blstm_char_en-es"])
    ap.add_argument("--utterances", type=int, default=200)
    args = ap.parse_args(argv)
    if args.rates:
        table = rates(args.models, "en-es", "tst-COMMON", args.utterances)
        print(f"### tst-COMMON, first {args.utterances} segments: rates per second of audio\n")
        print(table.to_markdown(index=False, floatfmt=".1f"))
        return 0
    summary = sweep.read_summary(args.output)
    splits = sorted(set(summary.split))
    for policy, table in policy_tables(summary).items():
        caption = (f"{policy}: {', '.join(splits)}, {int(table.utterances.max())} segments; "
                   "latencies in ms")
        tables.save(table, Path(args.output) / "tables", policy, digits=1, caption=caption)
        print(f"### {caption}\n")
        print(table.drop(columns="utterances").to_markdown(index=False, floatfmt=".1f"), "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
