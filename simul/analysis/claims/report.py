"""A run's claims as a table (``claims.csv``, ``claims.md``: the paper's claims, then simul's
own questions apart), the replays a confirmatory run needs, and the catalogue of the
declared findings (what each paper's sentence is tested as)."""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from simul.analysis.claims.evidence import POWER, Replay
from simul.analysis.claims.findings import PAPERS, Claim, Finding

REPORT_COLUMNS = ("id", "paper", "where", "sentence", "half", "own", "text", "settings",
                  "kind", "margin", "margin_reason", "verdict", "effect", "low", "high", "n",
                  "needs_more", "holds", "detail", "needs_full_run", "no_interval")
"""A claims table's columns: the finding (``paper``, ``where`` in it, its ``sentence``, the
``half`` of a compound sentence checked, ``own`` for simul's own question, ``text`` the
statistic, the ``settings`` read, ``kind`` and ``margin`` with its reason), then the run:
``effect`` (low, high) with its interval (95 %, 90 % for an equivalence claim) on ``n``
segments, ``needs_more`` the fresh segments an undecided claim would need (at
:data:`~simul.analysis.claims.POWER`), ``no_interval`` why a claim has no effect or interval."""

REPLAY_FILE = "claims.replay.pkl"
"""Next to ``claims.csv``: each measured claim's :class:`Replay` (cloudpickle), which a
confirmatory run (:mod:`simul.commands.confirm`) decodes again on fresh segments. It holds the
statistics' code by reference to simul's modules: read it with the simul that wrote it."""

PROPERTY_NO_INTERVAL = ("a property checked on every word or setting, not an estimate: "
                        "no effect to bootstrap")
"""Why a property has no effect nor interval, unless it says."""

QUICK_UNDECIDED = "not decided: quick run"
"""The start of a quick run's verdict on a claim that needs the full run."""

SHOWN = ["id", "where", "sentence", "half", "kind", "margin", "verdict", "effect", "low",
         "high", "n", "needs_more", "detail"]
"""The columns of ``claims.md``."""


QUICK_NO_INTERVAL = ("a quick run's effect alone: an interval on a handful of segments "
                     "decides nothing (the full run's)")
"""Why a claim that needs the full run has no interval in a quick run."""


def _why_no_interval(claim: Claim, quick: bool = False) -> str:
    e = claim.evidence
    if e is None:
        return claim.no_interval or PROPERTY_NO_INTERVAL
    if math.isnan(e.effect):
        return "the statistic is undefined on these settings (see detail)"
    if e.n == 0:
        return "a point estimate: the rows carry no per-segment records to resample"
    if math.isnan(e.low) or math.isnan(e.high):
        if quick and claim.needs_full_run:
            return QUICK_NO_INTERVAL
        return "the statistic is undefined on every resample"
    return ""


def _row(claim: Claim, quick: bool = False) -> dict:
    e, f = claim.evidence, claim.finding
    verdict = claim.verdict
    if quick and claim.needs_full_run and verdict != "not measured":
        verdict = f"{QUICK_UNDECIDED}, n = {e.n}" if e is not None and e.n else QUICK_UNDECIDED
    return {"id": claim.id, "paper": f.paper if f else "", "where": f.where if f else "",
            "sentence": f.sentence if f else "", "half": f.half if f else "",
            "own": claim.own, "text": claim.text, "settings": f.settings if f else "",
            "kind": claim.kind, "margin": e.margin if e else (f.margin if f else math.nan),
            "margin_reason": f.margin_reason if f else "", "verdict": verdict,
            "effect": e.effect if e else math.nan, "low": e.low if e else math.nan,
            "high": e.high if e else math.nan, "n": e.n if e else pd.NA,
            "needs_more": (e.segments_needed(POWER) if e else None) or pd.NA,
            "holds": verdict == "holds", "detail": claim.detail,
            "needs_full_run": claim.needs_full_run,
            "no_interval": _why_no_interval(claim, quick)}


def quick_caption(table: pd.DataFrame) -> str:
    """The line above a quick run's claims table: what its sample can and cannot decide."""
    n = table.n.dropna()
    size = f"{int(n.max())} segments" if len(n) else "a handful of segments"
    return (f"Quick run ({size}): too few to decide the claims that need the full run "
            f"(needs_full_run); their verdict is \"{QUICK_UNDECIDED}\" and their effect is "
            "shown without an interval, not judged. The others — properties of every word "
            "or setting, or effects a few segments can show — are decided.")


def counts(verdicts: Iterable[str]) -> str:
    """"12 hold, 3 contradicted, 9 undecided, 2 not measured" (the last only when some
    are), and ", 5 not decided (quick run)" for a quick run's."""
    s = pd.Series(list(verdicts), dtype=object).astype(str)
    quick = int(s.str.startswith(QUICK_UNDECIDED).sum())
    c = s.value_counts()
    out = (f"{c.get('holds', 0)} hold, {c.get('contradicted', 0)} contradicted, "
           f"{c.get('undecided', 0)} undecided")
    if c.get("not measured", 0):
        out += f", {c['not measured']} not measured"
    return out + (f", {quick} not decided (quick run)" if quick else "")


def report(claims: Sequence[Claim], out_dir: str | Path | None = None, *,
           quick: bool = False) -> pd.DataFrame:
    """The claims as a table (:data:`REPORT_COLUMNS`); saved as ``claims.csv`` and
    ``claims.md`` under ``out_dir`` (the paper's claims, then simul's own questions in a
    table of their own).

    ``quick`` (a notebook's quick run: ``nb.quick``): a claim that needs the full run gets
    the verdict "not decided: quick run, n = <segments>" (and ``holds`` False) whatever
    its interval says, and ``claims.md`` opens with :func:`quick_caption`."""
    ids = [c.id for c in claims]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise ValueError(f"claims {twice} reported twice")
    table = pd.DataFrame([_row(c, quick) for c in claims], columns=list(REPORT_COLUMNS))
    table[["n", "needs_more"]] = table[["n", "needs_more"]].astype("Int64")
    table["own"] = table["own"].astype(bool)
    if out_dir is not None:
        from simul.analysis.tables import save

        out_dir = Path(out_dir)
        save(table, out_dir, "claims")
        (out_dir / "claims.md").write_text(markdown(table, quick=quick))
        save_replays(claims, out_dir / REPLAY_FILE)
    return table


def markdown(table: pd.DataFrame, *, quick: bool = False) -> str:
    """``claims.md``: the paper's claims with their verdicts counted, then simul's own."""
    parts = [quick_caption(table)] if quick else []
    for own, title in ((False, "The paper's claims"), (True, "simul's own questions (not "
                                                            "the paper's; not counted)")):
        rows = table[table.own == own]
        if not len(rows):
            continue
        shown = rows[SHOWN].copy()
        for col in ("effect", "low", "high", "margin"):
            shown[col] = [("" if pd.isna(v) else f"{v:+.2f}" if col != "margin" else
                           (f"{v:g}" if v else "")) for v in shown[col]]
        for col in ("n", "needs_more"):
            shown[col] = ["" if pd.isna(v) else str(int(v)) for v in shown[col]]
        parts.append(f"## {title}: {counts(rows.verdict)}\n\n"
                     + shown.to_markdown(index=False))
    return "\n\n".join(parts) + "\n"


def save_replays(claims: Sequence[Claim], path: str | Path) -> None:
    """Write the :class:`Replay` of every claim that has one as ``{id: replay}`` (written
    whole or not at all); no file when none has."""
    import cloudpickle

    replays = {}
    for c in claims:
        if c.evidence is None or c.evidence.replay is None:
            continue
        try:  # each alone: a statistic that cannot be pickled costs its own replay only
            replays[c.id] = cloudpickle.dumps(c.evidence.replay)
        except Exception as e:  # noqa: BLE001 — cloudpickle raises many kinds
            warnings.warn(f"claim {c.id}: its statistic cannot be saved for a confirmatory "
                          f"run ({type(e).__name__}: {e})", stacklevel=2)
    path = Path(path)
    if not replays:
        path.unlink(missing_ok=True)
        return
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_bytes(cloudpickle.dumps(replays))  # {id: pickled Replay}
    tmp.replace(path)


def read_replays(path: str | Path) -> dict[str, Replay]:
    """The :class:`Replay` of each claim saved by :func:`report` (``{}`` when there is no
    file)."""
    import pickle

    path = Path(path)
    if not path.is_file():
        return {}
    return {cid: pickle.loads(data) for cid, data in pickle.loads(path.read_bytes()).items()}


def read(out_dir: str | Path) -> pd.DataFrame:
    """A saved claims table."""
    return pd.read_csv(Path(out_dir) / "claims.csv")


CATALOGUE_COLUMNS = ("id", "where", "sentence", "half", "kind", "margin", "statistic",
                     "settings")


def catalogue(findings: Iterable[Finding]) -> pd.DataFrame:
    """The declared findings (:data:`CATALOGUE_COLUMNS`), in order: what each sentence is
    tested as, before any run; a margin with its reason."""
    rows = [{"id": f.id, "where": f.where, "sentence": f.sentence, "half": f.half,
             "kind": f.kind, "margin": f"{f.margin:g} ({f.margin_reason})" if f.margin else "",
             "statistic": f.statistic, "settings": f.settings} for f in findings]
    return pd.DataFrame(rows, columns=list(CATALOGUE_COLUMNS))


def catalogue_markdown(findings: Iterable[Finding]) -> str:
    """The catalogue as Markdown, a table per paper (:data:`~simul.analysis.claims.PAPERS` order),
    simul's own questions after the paper's."""
    findings = list(findings)
    parts = []
    for paper, name in PAPERS.items():
        for own in (False, True):
            chosen = [f for f in findings if f.paper == paper and f.own == own]
            if chosen:
                title = f"{name}: simul's own questions" if own and paper != "simul" else name
                parts.append(f"### {title}\n\n" + catalogue(chosen).to_markdown(index=False))
    return "\n\n".join(parts) + "\n"
