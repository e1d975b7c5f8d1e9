"""A confirmatory run: the claims a full run left undecided, decided on fresh segments.

``simul reproduce --confirm`` (``make confirm``) reads the claims of the last full run
(``figures/<notebook>/claims.csv`` and the :data:`simul.analysis.claims.REPLAY_FILE` beside it) and
takes each undecided claim whose ``needs n`` — the segments its interval would need, were
the effect as measured — fits in the rest of its split. For that claim alone it decodes
again, on the next ``needs n`` segments of the split (those after the ones the first run
used: a sweep's ``skip_utterances``), the settings its statistic read (each row of the
claim's :class:`simul.analysis.claims.Replay`: its sweep, model and setting), through the record
store (claims that read the same settings share their decodes: the smallest sample is
decoded first, and a larger one of the same settings finds its first segments there), and
bootstraps the same statistic on those fresh segments only, with the same kind and margin.

A two-stage design: the first run sizes the second, and no claim is decided on data that
chose its sample size. The table (``figures/confirm/claims.csv`` and ``.md``, printed at the
end) gives each claim of the run: its first verdict, and for the claims taken again the
fresh sample's effect, interval, n and verdict; ``decided by`` says which stage decided it
("first run", "confirmatory run", or "neither", with the reason when a claim was not taken
again; "pending" for a claim an interrupted run has not reached: the table is saved after
each claim). The sweeps (``runs/confirm/<claim>/``) are resumable like any sweep: run the command
again after an interruption.
"""

from __future__ import annotations

import functools
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from simul.analysis import claims as claims_module
from simul.commands.reproduce import FIGURES_DIR, RUNS_DIR, notebooks

NAME = "confirm"
"""``figures/confirm/`` (the table) and ``runs/confirm/`` (the sweeps)."""

COLUMNS = ("notebook", "claim", "kind", "own", "margin", "first verdict", "first effect [interval]",
           "first n", "needs n", "confirm verdict", "confirm effect [interval]", "confirm n",
           "decided by", "why not taken again")


class ConfirmError(ValueError):
    """The first run's claims or sweeps cannot be read as a confirmatory run needs them."""


@dataclass
class Candidate:
    """One claim of the first run and what the confirmatory run does with it."""
    notebook: str
    first: pd.Series  # its row of claims.csv
    replay: claims_module.Replay | None
    fresh: int = 0  # segments to decode (0: not taken again)
    why_not: str = ""
    evidence: claims_module.Evidence | None = None  # on the fresh segments

    @property
    def id(self) -> str:
        return str(self.first.id)


def _sweep_dir(records: str | Path) -> Path:
    """A summary row's sweep: ``<output>/records/<model>/<split>/<policy>/<setting>.jsonl``."""
    return Path(records).parents[4]


def _read_sweep(output: Path) -> dict:
    path = output / "sweep.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ConfirmError(f"{path}: the first run's sweep cannot be read ({e})") from None
    if "sources" not in data:
        raise ConfirmError(f"{path}: no 'sources' (models and corpus): the sweep was written "
                           "by an older simul; run the first stage again (simul reproduce)")
    return data


@functools.cache
def split_size(corpus: str | Path, pair: str, split: str) -> int:
    """Segments in ``split`` (read once per process: every claim of a split asks)."""
    from simul.corpus import load

    return sum(1 for _ in load(corpus, pair, split, with_audio=False))


def candidates(figures_dir: str | Path = FIGURES_DIR, only: list[str] | None = None, *,
               corpus: str | Path | None = None,
               power: float | None = None) -> list[Candidate]:
    """Every claim of the first run's tables, with how many fresh segments an undecided one
    gets (``fresh``: enough to decide it with probability ``power`` were its effect as
    measured, :meth:`simul.analysis.claims.Evidence.segments_needed`; None: the table's ``needs
    n``, written at :data:`simul.analysis.claims.POWER`) or why it is not taken again
    (``why_not``)."""
    if power is not None:
        _check_power(power)
    out = []
    for nb in notebooks(only):
        path = Path(figures_dir) / nb.name / "claims.csv"
        if not path.is_file() or path.stat().st_size <= 1:
            continue
        replays = claims_module.read_replays(path.with_name(claims_module.REPLAY_FILE))
        for _, row in pd.read_csv(path).iterrows():
            c = Candidate(nb.name, row, replays.get(row.id))
            if str(row.verdict).startswith(claims_module.QUICK_UNDECIDED):
                raise ConfirmError(f"{path}: a quick run's claims; a confirmatory run follows "
                                   "a full run (simul reproduce without --quick)")
            if row.verdict == "undecided":
                _size(c, corpus, power)
            out.append(c)
    return out


def _check_power(power: float) -> None:
    if not 0 < power < 1:
        raise ConfirmError(f"--power: a probability between 0 and 1 (e.g. 0.8), not {power!r}")


def needed(first: pd.Series, replay: claims_module.Replay, power: float) -> int | None:
    """The fresh segments the first run's ``first`` row (effect, interval, n) needs to be
    decided with probability ``power``, with its replay's direction and margin."""
    if pd.isna(first.effect) or pd.isna(first.n) or not first.n:
        return None
    evidence = claims_module.Evidence(float(first.effect), float(first.low), float(first.high),
                                      int(first.n), replay.claimed, replay.margin)
    return evidence.segments_needed(power)


def _size(c: Candidate, corpus: str | Path | None, power: float | None = None) -> None:
    """Set ``c.fresh``, or ``c.why_not``."""
    if c.replay is None:
        c.why_not = ("no replay: the effect is not a statistic of sweep rows"
                     if pd.isna(c.first.n) or not c.first.n else
                     f"no replay saved beside the claims table ({claims_module.REPLAY_FILE})")
        return
    if power is None:
        needs = None if pd.isna(c.first.needs_more) else int(c.first.needs_more)
    else:
        needs = needed(c.first, c.replay, power)
    if needs is None:
        c.why_not = "needs n unknown: the effect is NaN or sits on the verdict's bound"
        return
    rows = c.replay.rows
    first = int(c.first.n)
    data = _read_sweep(_sweep_dir(rows.records.iloc[0]))
    pair, split = data["fingerprint"]["pair"], str(rows.split.iloc[0])
    size = split_size(str(corpus or data["sources"]["corpus"]), pair, split)
    if needs > size - first:
        c.why_not = (f"needs {needs:,} fresh segments; {split} has {size - first} after the "
                     f"first run's {first}")
        return
    c.fresh = needs


def specs(c: Candidate, runs_dir: str | Path, corpus: str | Path | None = None
          ) -> tuple[list[dict], list[Path]]:
    """The sweep specs that decode ``c``'s settings on its fresh segments (one per sweep
    and model of its rows) and, per row of its replay, where the fresh records will be."""
    from simul.sweep.spec import Setting, Spec
    from simul.sweep.summary import records_path

    rows = c.replay.rows
    first = int(c.first.n)
    groups: dict[tuple[Path, str], list[int]] = {}
    for i, r in enumerate(rows.itertuples()):
        groups.setdefault((_sweep_dir(r.records), r.model), []).append(i)
    out, where = [], [None] * len(rows)
    for g, ((sweep_dir, model), members) in enumerate(groups.items()):
        data = _read_sweep(sweep_dir)
        fp = data["fingerprint"]
        if model not in data["sources"]["models"]:
            raise ConfirmError(f"{sweep_dir}/sweep.json: no model {model!r}")
        by_slug = {}
        for policy, params in fp["settings"]:
            setting = Setting(policy, tuple((k, v) for k, v in params))
            by_slug[(policy, setting.slug)] = dict(setting.params)
        entries, order = [], []
        for i in members:
            r = rows.iloc[i]
            key = (r.policy, r.setting)
            if key not in by_slug:
                raise ConfirmError(f"{sweep_dir}/sweep.json: no setting {r.policy} {r.setting}")
            if key not in order:
                order.append(key)
                entries.append({"policy": r.policy, "settings": [by_slug[key]]})
        split = str(rows.split.iloc[members[0]])
        spec = {"name": f"confirm {c.id}", "models": [data["sources"]["models"][model]],
                "pair": fp["pair"], "splits": [split],
                "corpus": str(corpus or data["sources"]["corpus"]),
                "max_utterances": c.fresh, "skip_utterances": first, "policies": entries,
                "output": str(Path(runs_dir) / NAME / c.id / f"{g:02d}-{sweep_dir.name}-{model}")}
        loaded = Spec.load(spec)
        slugs = {(s.policy, s.slug): s for s in loaded.settings}
        for i in members:
            r = rows.iloc[i]
            where[i] = records_path(loaded.output, model, split, slugs[(r.policy, r.setting)])
        out.append(spec)
    return out, where


def decide(c: Candidate, runs_dir: str | Path, corpus: str | Path | None = None, *,
           device: str | None = None, workers: int | None = None, force: bool = True,
           log=print) -> claims_module.Evidence:
    """Decode ``c``'s settings on its fresh segments and bootstrap its statistic there."""
    from simul import sweep

    todo, where = specs(c, runs_dir, corpus)
    for spec in todo:
        log(f"  sweep {spec['output']}: {len(spec['policies'])} setting(s) × {c.fresh} segments")
        sweep.run(spec, device=device, workers=workers, force=force)
    rows = c.replay.rows.copy()
    rows["records"] = [str(p) for p in where]
    r = c.replay
    c.evidence = claims_module.bootstrap(rows, r.statistic, claimed=r.claimed,
                                         margin=r.margin, metrics=r.metrics,
                                         resamples=claims_module.FULL_RESAMPLES)
    return c.evidence


def _interval(effect, low, high) -> str:
    if effect is None or pd.isna(effect):
        return ""
    return f"{effect:+.1f} [{low:+.1f}, {high:+.1f}]"


def table(found: list[Candidate]) -> pd.DataFrame:
    """:data:`COLUMNS`, one row per claim of the first run."""
    rows = []
    for c in found:
        f, e = c.first, c.evidence
        if f.verdict != "undecided":
            by = "first run"
        elif e is not None and e.verdict != "undecided":
            by = "confirmatory run"
        elif c.fresh and e is None:
            by = "pending"  # to be taken again: the run was interrupted before it
        else:
            by = "neither"
        rows.append({
            "notebook": c.notebook, "claim": c.id, "kind": f.get("kind", ""),
            "own": bool(f.get("own", False)),
            "margin": "" if pd.isna(f.get("margin", math.nan)) or not f.margin else f.margin,
            "first verdict": f.verdict, "first effect [interval]": _interval(f.effect, f.low,
                                                                              f.high),
            "first n": "" if pd.isna(f.n) else int(f.n),
            "needs n": c.fresh or ("" if pd.isna(f.needs_more) else int(f.needs_more)),
            "confirm verdict": e.verdict if e is not None else "",
            "confirm effect [interval]": _interval(e.effect, e.low, e.high) if e else "",
            "confirm n": e.n if e is not None else "",
            "decided by": by, "why not taken again": c.why_not})
    return pd.DataFrame(rows, columns=list(COLUMNS))


def counts(t: pd.DataFrame) -> str:
    """"20 hold, 6 contradicted, 13 undecided": the verdicts after both stages."""
    final = [c if c else f for f, c in zip(t["first verdict"], t["confirm verdict"],
                                           strict=True)]
    s = pd.Series(final).value_counts()
    return (f"{s.get('holds', 0)} hold, {s.get('contradicted', 0)} contradicted, "
            f"{s.get('undecided', 0)} undecided")


def run(only: list[str] | None = None, *, figures_dir: str | Path = FIGURES_DIR,
        runs_dir: str | Path = RUNS_DIR, corpus: str | Path | None = None,
        device: str | None = None, workers: int | None = None,
        power: float | None = None, log=print) -> pd.DataFrame:
    """The confirmatory run of the ``only`` notebooks' claims (all by default), each
    undecided claim on enough fresh segments to decide it with probability ``power`` were
    its effect as measured; its table, also saved under ``figures_dir/confirm/``."""
    from simul.analysis.tables import save

    found = candidates(figures_dir, only, corpus=corpus, power=power)
    if not found:
        raise ConfirmError(f"no claims under {figures_dir}/<notebook>/claims.csv: run "
                           "simul reproduce (the first stage) first")
    # smallest first: an interrupted run has decided the most claims it could, and a larger
    # sample of the same settings takes the segments a smaller one decoded from the store
    taken = sorted((c for c in found if c.fresh), key=lambda c: c.fresh)
    log(f"{len(taken)} undecided claim(s) to decide on fresh segments: "
        + ", ".join(f"{c.id} ({c.fresh})" for c in taken))
    def saved() -> pd.DataFrame:  # after each claim: an interrupted run leaves its table
        out = table(found)
        done = sum(c.evidence is not None for c in taken)
        state = "" if done == len(taken) else f" ({done} of {len(taken)} claims taken so far)"
        save(out, Path(figures_dir) / NAME, "claims",
             caption=f"Confirmatory run{state}: {counts(out)} after both stages")
        return out

    for k, c in enumerate(taken, 1):
        t0 = time.perf_counter()
        log(f"[{k}/{len(taken)}] {c.notebook} {c.id}: {c.fresh} fresh segments")
        e = decide(c, runs_dir, corpus, device=device, workers=workers, log=log)
        log(f"  {e.text()} ({(time.perf_counter() - t0) / 60:.1f} min)")
        saved()
    return saved()


def main_confirm(only: list[str] | None, *, figures_dir: str | None, runs_dir: str | None,
                 corpus: str | None, device: str | None = None,
                 power: float | None = None) -> int:
    t0 = time.perf_counter()
    out = run(only, figures_dir=figures_dir or FIGURES_DIR,
              runs_dir=Path(runs_dir or RUNS_DIR), corpus=corpus, device=device, power=power)
    with pd.option_context("display.width", 250, "display.max_rows", 500,
                           "display.max_colwidth", 60):
        print(f"\nconfirmatory run done in {(time.perf_counter() - t0) / 60:.1f} min "
              f"({counts(out)} after both stages):")
        print(out.drop(columns=["why not taken again"]).to_string(index=False))
        why = out[out["why not taken again"] != ""]
        if len(why):
            print("\nnot taken again:")
            for _, r in why.iterrows():
                print(f"  {r['claim']}: {r['why not taken again']}")
    return 0
