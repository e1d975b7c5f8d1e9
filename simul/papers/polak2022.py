"""Polák, Pham, Nguyen, Liu, Mullov, Niehues, Bojar, Waibel 2022 — "CUNI-KIT system for
simultaneous speech translation task at IWSLT 2022": onlinization of an offline model
(incremental blockwise beam search, stable-prefix rules hold-n / LA-n / SP-n, initial wait).

Settings are named as in the paper: a rule label (``"Hold-6"``, ``"LA-2"``, ``"SP-1"``),
a chunk size in ms, and an initial wait (length of the first chunk in ms, 0 for none).

Notebook: ``notebooks/polak2022.ipynb``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from simul.claims import (
    BLEU_MARGIN,
    RATIO_MARGIN,
    Claim,
    Evidence,
    curve_gap,
    evaluate,
    fmt,
    mean_difference,
    monotone_within,
    weakest_step,
)
from simul.metrics.latency import sentence_latency
from simul.metrics.score import reference_length
from simul.papers import notebook
from simul.records import Record
from simul.records import read as read_records

RULE_LABELS = ["Hold-3", "Hold-6", "Hold-12", "LA-2", "LA-3", "LA-4", "SP-1", "SP-2"]
"""§5.2: hold-n with n = 3, 6, 12; LA-n with n = 2, 3, 4; SP-n with n = 1, 2."""
CHUNKS_MS = [250, 500, 1000, 2000]
"""§5.1: chunk sizes."""
INITIAL_WAIT_MS = 2000
"""§5.3 / Table 1: the first chunk lasts 2 s."""
TABLE1_RULE = "LA-2"
FIGURE_RULES = {
    "figure1": ["LA-2", "SP-2", "Hold-6"],
    "figure2": ["Hold-3", "Hold-6", "Hold-12"],
    "figure3": ["SP-1", "SP-2", "LA-2", "LA-3", "LA-4"],
}
REGIMES_MS = {"low": 1000.0, "medium": 2000.0, "high": 4000.0}
"""Table 2: the IWSLT 2022 latency regimes of En-De (AL ≤ 1 s, ≤ 2 s, ≤ 4 s)."""

KNOWN_GAPS = {
    "K22-chunk-dominates": "SP-2 (beam 5, two beams must agree) waits 2.2–4.0 s longer than "
                           "Hold-6 at every chunk size (AL 2642 vs 465 ms at 250 ms): the rule "
                           "spreads AL more (3086 ms) than chunks of 250–2000 ms do (2448 ms)",
    "K22-LA2-best": "LA-2 at 250 ms commits premature sentence ends that two short-chunk "
                    "hypotheses share (23/40 segments with more '.'/'?' than the reference, "
                    "0.84 of its words; 7/40 at 500 ms): BLEU 26.3 at AL 1153 ms where Hold-6 "
                    "has 42.1 at 1035 ms (−10.4 over their shared AL); above SP-1, SP-2, "
                    "Hold-12 (+1.2 to +4.1)",
}
"""The claims that the full run (``make reproduce``) contradicts, with why: strict xfails of
``tests/test_reproduce_full.py``. Measured on the corpus-v2 Conformer (40 tst-COMMON
segments; analysis in ``docs/reference/claims.md``); an undecided claim is not a gap."""

CONFIRMED_GAPS = {
    "K22-3x": "the online system fixed in advance, LA-2 at the grid's largest chunk (2 s), "
              "waits a whole 2 s chunk and two agreeing hypotheses: AL 3784 of offline's "
              "7932 ms on the first 40 segments (2.1×), 1.8× [1.7, 1.9] on 102 fresh ones; "
              "LA-2 at 1 s is 3.1× faster at 1.7 BLEU below offline",
}
"""The claims the full run left undecided and the confirmatory run (``make confirm``)
contradicts on fresh segments, with why: strict xfails of ``tests/test_reproduce_full.py``
once ``figures/confirm/claims.csv`` exists."""

_NAMES = {"hold": "Hold", "la": "LA", "sp": "SP"}


def parse_rule(label: str) -> tuple[str, int]:
    """``"LA-2"`` → ``("la", 2)`` (case-insensitive; ``hold-6``, ``SP-1`` ...)."""
    m = re.fullmatch(r"\s*(hold|la|sp)-?(\d+)\s*", str(label), flags=re.IGNORECASE)
    if not m:
        raise ValueError(f"rule {label!r}: expected e.g. 'Hold-6', 'LA-2' or 'SP-1'")
    return m.group(1).lower(), int(m.group(2))


def rule_label(rule: str, n: int) -> str:
    """``("la", 2)`` → ``"LA-2"``, the paper's name."""
    return f"{_NAMES[rule]}-{int(n)}"


def spec(models: list[str], pair: str, splits: list[str], output: str, *, corpus=None,
         max_utterances=None, rules: Sequence[str] = RULE_LABELS,
         chunks_ms: Sequence[float] = CHUNKS_MS, beam: int = 5,
         initial_wait_ms: float | None = INITIAL_WAIT_MS, table1_rule: str = TABLE1_RULE,
         offline: bool = True) -> dict:
    """A sweep spec: every rule × chunk size (no initial wait); ``table1_rule`` with the
    initial wait at every chunk size shorter than it (Table 1); offline beam search."""
    grid = [{"rule": r, "n": n, "chunk_ms": c} for r, n in map(parse_rule, rules)
            for c in chunks_ms]
    policies = [{"policy": "onlinization", "settings": grid, "fixed": {"beam": beam}}]
    if initial_wait_ms:
        rule, n = parse_rule(table1_rule)
        waited = [{"rule": rule, "n": n, "chunk_ms": c, "initial_wait_ms": initial_wait_ms}
                  for c in chunks_ms if c < initial_wait_ms]
        if waited:
            policies.append({"policy": "onlinization", "settings": waited,
                             "fixed": {"beam": beam}})
    if offline:
        policies.append({"policy": "offline", "fixed": {"beam": beam}})
    return notebook.spec(models, pair, splits, output, policies, corpus=corpus,
                         max_utterances=max_utterances)


def settings(summary: pd.DataFrame) -> pd.DataFrame:
    """The onlinization rows of a sweep summary with the paper's names: ``rule`` (e.g.
    ``"LA-2"``), ``chunk_ms`` and ``initial_wait_ms`` (0 for none)."""
    rows = summary[summary.policy == "onlinization"].copy()
    rows["rule"] = [rule_label(r, n) for r, n in zip(rows.param_rule, rows.param_n, strict=True)]
    rows["chunk_ms"] = rows.param_chunk_ms.astype(float)
    wait = rows.get("param_initial_wait_ms", pd.Series(0.0, index=rows.index))
    rows["initial_wait_ms"] = wait.fillna(0.0).astype(float)
    return rows.reset_index(drop=True)


def curves(summary: pd.DataFrame, rules: Iterable[str] | None = None) -> pd.DataFrame:
    """Figures 1–3: the rules' points without initial wait, sorted by rule then chunk size."""
    rows = settings(summary)
    rows = rows[rows.initial_wait_ms == 0]
    if rules is not None:
        order = list(rules)
        rows = rows[rows.rule.isin(order)].copy()
        rows["_order"] = rows.rule.map(order.index)
        rows = rows.sort_values(["_order", "chunk_ms"]).drop(columns="_order")
    else:
        rows = rows.sort_values(["rule", "chunk_ms"])
    return rows.reset_index(drop=True)


def offline_bleu(summary: pd.DataFrame) -> float:
    rows = summary[summary.policy == "offline"]
    return float(rows.BLEU.iloc[0]) if len(rows) else math.nan


def table1(summary: pd.DataFrame, rule: str = TABLE1_RULE) -> pd.DataFrame:
    """Table 1: ``rule`` with and without the initial wait, at the chunk sizes that have
    both; columns Initial wait, Chunk size (ms), BLEU, AL, AP, DAL."""
    rows = settings(summary)
    rows = rows[rows.rule == rule]
    waited = set(rows[rows.initial_wait_ms > 0].chunk_ms)
    rows = rows[rows.chunk_ms.isin(waited)].sort_values(["initial_wait_ms", "chunk_ms"])
    out = rows[["initial_wait_ms", "chunk_ms", "BLEU", "AL", "AP", "DAL"]]
    return out.rename(columns={"initial_wait_ms": "Initial wait (ms)",
                               "chunk_ms": "Chunk size (ms)"}).reset_index(drop=True)


def negative_al(summary: pd.DataFrame) -> pd.DataFrame:
    """§5.4: every setting's AL (reference length) next to the max-length AL of eq. (6)
    (``AL_K22``) and the mean length difference |Y| − |Y*| in words, sorted by AL."""
    rows = settings(summary).sort_values("AL", kind="stable")
    out = rows[["rule", "chunk_ms", "initial_wait_ms", "BLEU", "AL", "AL_K22", "length_diff"]]
    return out.rename(columns={"AL_K22": "AL max-length (eq. 6)",
                               "length_diff": "|Y| − |Y*| (words)"}).reset_index(drop=True)


def utterance_al(records: Iterable[Record]) -> pd.DataFrame:
    """Per utterance: AL (eq. 4–5, reference length), max-length AL (eq. 6), hypothesis and
    reference words. Utterances without an output word have no latency and are left out."""
    rows = []
    for r in records:
        if not r.delays:
            continue
        ref = reference_length(r.reference)
        rows.append({"index": r.index, "segment_id": r.segment_id,
                     "AL": sentence_latency("AL", r.delays, r.source_length, ref),
                     "AL_K22": sentence_latency("AL_K22", r.delays, r.source_length, ref),
                     "hyp_words": len(r.delays), "ref_words": ref})
    return pd.DataFrame(rows, columns=["index", "segment_id", "AL", "AL_K22", "hyp_words",
                                       "ref_words"])


def setting_label(rule: str, chunk_ms: float, initial_wait_ms: float = 0.0) -> str:
    """``"LA-2, 250 ms"``; ``"LA-2, 250 ms, wait 2000 ms"`` with an initial wait."""
    wait = f", wait {initial_wait_ms:g} ms" if initial_wait_ms else ""
    return f"{rule}, {chunk_ms:g} ms{wait}"


def read_utterances(summary: pd.DataFrame, output: str | Path) -> dict[str, pd.DataFrame]:
    """:func:`utterance_al` of every onlinization setting, read from the sweep's records
    under ``output``; keyed by :func:`setting_label`."""
    out = {}
    for row in settings(summary).itertuples():
        records = read_records(Path(output) / row.records)
        out[setting_label(row.rule, row.chunk_ms, row.initial_wait_ms)] = utterance_al(records)
    return out


def negative_utterances(per_setting: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """§5.4 per setting (``{label: utterance_al(...)}``): how many utterances have a
    negative AL, how many of those have a hypothesis longer than the reference, and the
    smallest AL and max-length AL."""
    rows = []
    for label, utts in per_setting.items():
        neg = utts[utts.AL < 0]
        rows.append({"setting": label, "utterances": len(utts), "AL < 0": len(neg),
                     "of which |Y| > |Y*|": int((neg.hyp_words > neg.ref_words).sum()),
                     "min AL": float(utts.AL.min()) if len(utts) else math.nan,
                     "min AL max-length": float(utts.AL_K22.min()) if len(utts) else math.nan})
    return pd.DataFrame(rows)


def regimes(summary: pd.DataFrame, thresholds: dict[str, float] | None = None, *,
            rule: str | None = TABLE1_RULE, latency: str = "AL") -> pd.DataFrame:
    """Table 2: per latency regime, the best-BLEU setting of ``rule`` (None: any rule) whose
    ``latency`` is within the regime's limit; then offline. A regime no setting reaches
    gets a row of NaN."""
    thresholds = REGIMES_MS if thresholds is None else thresholds
    rows = settings(summary)
    if rule is not None:
        rows = rows[rows.rule == rule]
    out = []
    for name, limit in thresholds.items():
        inside = rows[rows[latency] <= limit].dropna(subset=["BLEU"])
        entry = {"Latency regime": name, f"{latency} limit (ms)": limit}
        if len(inside):
            best = inside.loc[inside.BLEU.idxmax()]
            entry.update({"Rule": best.rule, "Chunk size (ms)": best.chunk_ms,
                          "Initial wait (ms)": best.initial_wait_ms,
                          **{m: best[m] for m in ("BLEU", "AL", "AP", "DAL")}})
        out.append(entry)
    off = summary[summary.policy == "offline"]
    if len(off):
        out.append({"Latency regime": "offline",
                    **{m: float(off[m].iloc[0]) for m in ("BLEU", "AL", "AP", "DAL")}})
    cols = ["Latency regime", f"{latency} limit (ms)", "Rule", "Chunk size (ms)",
            "Initial wait (ms)", "BLEU", "AL", "AP", "DAL"]
    return pd.DataFrame(out).reindex(columns=cols)


# --------------------------------------------------------------------------- claims
def _plain(rows: pd.DataFrame) -> pd.DataFrame:
    """The rules' settings without initial wait."""
    r = settings(rows)
    return r[r.initial_wait_ms == 0]


def _chunk_minus_rule(rows: pd.DataFrame) -> float:
    """Figure 1's rules: mean AL range across chunk sizes − mean AL range across rules."""
    fig1 = _plain(rows)
    fig1 = fig1[fig1.rule.isin(FIGURE_RULES["figure1"])]
    spread = lambda s: s.max() - s.min()  # noqa: E731
    return float(fig1.groupby("rule").AL.agg(spread).mean()
                 - fig1.groupby("chunk_ms").AL.agg(spread).mean())


def _gaps_to(reference: str, rows: pd.DataFrame, *, above: bool) -> dict[str, float]:
    """Mean BLEU gap, at matched AL, of ``reference``'s curve over each other rule's
    (``above``) or of each other rule's over it; LA-n rules are left out for LA-2."""
    plain = _plain(rows)
    ref = plain[plain.rule == reference]
    out = {}
    for rule, group in plain.groupby("rule"):
        if rule == reference or (reference.startswith("LA-") and rule.startswith("LA-")):
            continue
        out[rule] = curve_gap(ref, group) if above else curve_gap(group, ref)
    return out


def _smallest_known(gaps: dict[str, float]) -> float:
    known = [g for g in gaps.values() if not math.isnan(g)]
    return min(known) if known else math.nan


def _waited_minus_not(rule: str):
    """AL with the initial wait − without, at the smallest chunk size that has both."""
    def statistic(rows: pd.DataFrame) -> float:
        t1 = table1(rows, rule)
        pair = t1[t1["Chunk size (ms)"] == t1["Chunk size (ms)"].min()] \
            .set_index("Initial wait (ms)").AL
        return float(pair.iloc[1] - pair.iloc[0]) if len(pair) == 2 else math.nan
    return statistic


def _rows(summary: pd.DataFrame, rules: Iterable[str], *, offline: bool = False,
          chunk_ms: float | None = None) -> pd.DataFrame:
    """The summary rows a claim reads (all its statistic needs, so that its bootstrap and a
    confirmatory run decode no other setting): ``rules`` without initial wait (at
    ``chunk_ms`` only, when given) and, with ``offline``, the offline rows."""
    online = (summary.policy == "onlinization").to_numpy()
    nan = pd.Series(math.nan, index=summary.index)
    labels = [rule_label(r, n) if o else "" for o, r, n in zip(
        online, summary.get("param_rule", nan), summary.get("param_n", nan), strict=True)]
    wait = summary.get("param_initial_wait_ms", nan).fillna(0.0).to_numpy()
    keep = online & pd.Series(labels).isin(list(rules)).to_numpy() & (wait == 0)
    if chunk_ms is not None:
        keep &= summary.get("param_chunk_ms", nan).astype(float).to_numpy() == chunk_ms
    if offline:
        keep |= (summary.policy == "offline").to_numpy()
    return summary[keep].reset_index(drop=True)


def _largest_chunk(rows: pd.DataFrame, rule: str) -> pd.Series | None:
    """``rule``'s setting without initial wait at the largest chunk size of the grid: the
    online system of the abstract's "almost on par with the offline setting while being 3×
    faster", fixed before the data (None when the grid has no such setting)."""
    plain = _plain(rows)
    plain = plain[plain.rule == rule]
    return plain.loc[plain.chunk_ms.idxmax()] if len(plain) else None


def _offline_row(rows: pd.DataFrame, model: str | None = None) -> pd.Series | None:
    off = rows[rows.policy == "offline"]
    if model is not None:
        off = off[off.model == model]
    return off.iloc[0] if len(off) else None


def _online_minus_offline(rule: str):
    """BLEU of ``rule`` at the largest chunk size − offline BLEU."""
    def statistic(rows: pd.DataFrame) -> float:
        online, off = _largest_chunk(rows, rule), _offline_row(rows)
        if online is None or off is None:
            return math.nan
        return float(online.BLEU - off.BLEU)
    return statistic


SPEEDUP = 3.0
"""The abstract: the onlinized system is "3× faster than offline in terms of latency"."""


def _speedup_minus_3(rule: str):
    """AL(offline) / AL(``rule`` at the largest chunk size) − :data:`SPEEDUP`; NaN when the
    online AL is not positive (no ratio to take)."""
    def statistic(rows: pd.DataFrame) -> float:
        online, off = _largest_chunk(rows, rule), _offline_row(rows)
        if online is None or off is None or not online.AL > 0:
            return math.nan
        return float(off.AL / online.AL - SPEEDUP)
    return statistic


HOLD_N = ("Hold-6", "Hold-12")
"""§5.2's hold-n claim: n > 3 (n ≤ 3 is the paper's stated exception); the first is also
the n held fixed while the chunk size varies."""


def _hold_gap(rows: pd.DataFrame) -> float:
    """The trade-off of varying n against that of varying the chunk size: mean BLEU gap, at
    matched AL, of the :data:`HOLD_N` rules at the smallest chunk size (n as the points)
    over Hold-6 across chunk sizes (the chunk as the points). The two curves share
    Hold-6's smallest chunk; the rules' own curves across chunk sizes need not overlap in
    AL (Hold-12 waits longer than Hold-6 at every chunk size)."""
    plain = _plain(rows)
    hold = plain[plain.rule.isin(HOLD_N)]
    if hold.empty:
        return math.nan
    by_n = hold[hold.chunk_ms == hold.chunk_ms.min()]
    return curve_gap(by_n, hold[hold.rule == HOLD_N[0]])


LA_N_OTHERS = ("LA-3", "LA-4")


def _la_n_gaps(rows: pd.DataFrame) -> dict[str, float]:
    """Mean BLEU gap at matched AL of each of LA-3, LA-4 over LA-2 (NaN: no common AL
    range)."""
    plain = _plain(rows)
    la2 = plain[plain.rule == "LA-2"]
    return {r: curve_gap(plain[plain.rule == r], la2) for r in LA_N_OTHERS
            if (plain.rule == r).sum() >= 2}


def _la_n_widest(rows: pd.DataFrame) -> float:
    """The gap of :func:`_la_n_gaps` with the largest absolute value, with its sign (an
    equivalence test needs a signed effect)."""
    known = [g for g in _la_n_gaps(rows).values() if not math.isnan(g)]
    return max(known, key=abs) if known else math.nan


def claims(summary: pd.DataFrame, utterances: pd.DataFrame | None = None, *,
           table1_rule: str = TABLE1_RULE) -> list[Claim]:
    """§5's claims, and the abstract's "almost on par with the offline setting while being
    3× faster", on one (model, split) summary of :func:`spec`'s sweep, each comparison
    with its paired-bootstrap evidence over the segments (:func:`simul.claims.evaluate`;
    curves compared at matched AL): superiority claims, but K22-offline-par and K22-3x
    (non-inferiority) and K22-hold-n and K22-LA-n-line (equivalence). ``utterances``
    (:func:`negative_utterances`) adds §5.4's per-utterance claim; ``table1_rule`` is the
    rule the spec ran with the initial wait, and the online system of K22-offline-par and
    K22-3x (at the largest chunk size)."""
    rows = settings(summary)
    plain = rows[rows.initial_wait_ms == 0]
    out = []

    # §3.2 / §5.1: the chunk size moves every rule along the latency axis
    failures, seen = monotone_within(plain, by="rule", along="chunk_ms")
    if seen:
        step = weakest_step(by="rule", along="chunk_ms")
        out.append(Claim.measured(
            "K22-chunk-AL", "AL grows with the chunk size, for every rule (weakest step, ms)",
            evaluate(summary, lambda r: step(_plain(r)), claimed="greater"),
            "; ".join(failures) or f"{seen} rules, all monotone"))

    # §5.1: the chunk size has a stronger influence on the trade-off than the rule
    fig1 = plain[plain.rule.isin(FIGURE_RULES["figure1"])]
    if fig1.rule.nunique() > 1 and fig1.chunk_ms.nunique() > 1:
        by_chunk = fig1.groupby("rule").AL.agg(lambda s: s.max() - s.min())
        by_rule = fig1.groupby("chunk_ms").AL.agg(lambda s: s.max() - s.min())
        out.append(Claim.measured(
            "K22-chunk-dominates", "the chunk size has a stronger influence on the trade-off "
            "than the stable-prefix rule (Figure 1 rules; AL range across chunk sizes − "
            "across rules, ms)", evaluate(summary, _chunk_minus_rule, claimed="greater"),
            f"mean AL range across chunk sizes {by_chunk.mean():.0f} ms vs. across rules "
            f"{by_rule.mean():.0f} ms", needs_full_run=True))

    # §5.2: LA-2 has the best quality–latency curve; SP-1 strongly underperforms the other
    # strategies in quality. Both at matched AL: curves, not means over chunk sizes
    for claim, rule, above, text, label in (
            ("K22-LA2-best", "LA-2", True, "LA-2 has the best quality–latency curve (no hold-n "
             "or SP-n curve above it; smallest mean gap at matched AL, BLEU)", "LA-2 − rule"),
            ("K22-SP1-worst", "SP-1", False, "SP-1 has the lowest quality of all rules "
             "(smallest mean gap of a rule over SP-1 at matched AL, BLEU)", "rule − SP-1")):
        gaps = _gaps_to(rule, summary, above=above)
        if (plain.rule == rule).sum() < 2 or not gaps:
            continue
        out.append(Claim.measured(
            claim, text, evaluate(summary, lambda r, rule=rule, above=above: _smallest_known(
                _gaps_to(rule, r, above=above)), claimed="greater"),
            f"{label}, mean BLEU over the shared AL range: " + ", ".join(
                f"{r} {g:+.2f}" for r, g in sorted(gaps.items())), needs_full_run=True))

    # §5.2: "the hold-n strategy can use either n or chunk size to control the quality-
    # latency trade-off with equal effect" (n ≤ 3 the stated exception: Hold-3 left out), and
    # "LA-n for all n follows the same quality-latency trade-off line": equivalence of the
    # curves at matched AL, within BLEU_MARGIN (its docstring says why 1 BLEU)
    if (plain.rule == HOLD_N[0]).sum() >= 2 and (plain.rule == HOLD_N[1]).any():
        gap = _hold_gap(summary)
        out.append(Claim.measured(
            "K22-hold-n", "hold-n: raising n moves along the trade-off of raising the chunk "
            "size (Hold-6 and Hold-12 at the smallest chunk against Hold-6 across chunk "
            "sizes; equivalence, margin 1 BLEU: mean gap at matched AL within ±1)",
            evaluate(_rows(summary, list(HOLD_N)), _hold_gap, claimed="within",
                     margin=BLEU_MARGIN),
            f"n-curve − chunk-curve, mean BLEU over the shared AL range: {gap:+.2f}",
            needs_full_run=True))
    la_gaps = _la_n_gaps(summary)
    if (plain.rule == "LA-2").sum() >= 2 and la_gaps:
        out.append(Claim.measured(
            "K22-LA-n-line", "LA-n for all n follows the same quality–latency line (LA-3, LA-4 "
            "against LA-2; equivalence, margin 1 BLEU: the widest mean gap at matched AL "
            "within ±1)",
            evaluate(_rows(summary, ["LA-2", *LA_N_OTHERS]), _la_n_widest, claimed="within",
                     margin=BLEU_MARGIN),
            "rule − LA-2, mean BLEU over the shared AL range: " + ", ".join(
                f"{r} {g:+.2f}" for r, g in sorted(la_gaps.items())), needs_full_run=True))

    # abstract / §7: "almost on par with the offline setting while being 3× faster than
    # offline in terms of latency", the online system fixed in advance: table1_rule without
    # initial wait at the largest chunk size. "almost on par": non-inferiority within
    # BLEU_MARGIN; "3×": the AL ratio non-inferior to 3 within RATIO_MARGIN (holds when its
    # interval lies above 2)
    online, off = _largest_chunk(summary, table1_rule), _offline_row(summary)
    if online is not None and off is not None:
        label = setting_label(table1_rule, online.chunk_ms)
        pair = _rows(summary, [table1_rule], offline=True, chunk_ms=online.chunk_ms)
        out.append(Claim.measured(
            "K22-offline-par", f"the onlinized model ({label}) is almost on par with offline "
            "(non-inferiority, margin 1 BLEU: online − offline ≥ −1)",
            evaluate(pair, _online_minus_offline(table1_rule), claimed="greater",
                     margin=BLEU_MARGIN),
            f"BLEU {label} {online.BLEU:.1f}, offline {off.BLEU:.1f}", needs_full_run=True))
        if not math.isnan(off.AL):
            out.append(Claim.measured(
                "K22-3x", f"the onlinized model ({label}) is 3× faster than offline in AL "
                "(non-inferiority, margin 1: AL(offline) / AL(online) − 3 ≥ −1)",
                evaluate(pair, _speedup_minus_3(table1_rule), claimed="greater",
                         margin=RATIO_MARGIN),
                f"AL {label} {online.AL:.0f} ms, offline {off.AL:.0f} ms",
                needs_full_run=True))

    # §5.3 / Table 1: the initial wait adds latency at the smallest chunk size
    t1 = table1(summary, table1_rule)
    if len(t1):
        smallest = t1["Chunk size (ms)"].min()
        pair = t1[t1["Chunk size (ms)"] == smallest].set_index("Initial wait (ms)").AL
        out.append(Claim.measured(
            "K22-initial-wait", f"the initial wait raises AL at the smallest chunk size "
            f"({smallest:g} ms; with − without, ms)",
            evaluate(summary, _waited_minus_not(table1_rule), claimed="greater"),
            "AL without / with: " + fmt(pair.tolist())))

    # §5.4: the max-length AL of eq. (6) is never negative (a property of every setting)
    negative = rows[rows.AL < 0]
    lowest = rows.AL_K22.min() if len(rows) else math.nan
    out.append(Claim("K22-AL-max-length", "the max-length AL (eq. 6) is never negative, "
                     "unlike AL", bool(len(rows) and lowest >= 0),
                     f"{len(negative)} settings with AL < 0; lowest max-length AL "
                     f"{lowest:.0f} ms"))
    if utterances is not None and len(utterances):
        negative = int(utterances["AL < 0"].sum())
        longer = int(utterances["of which |Y| > |Y*|"].sum())
        # a tendency ("when the hypothesis is longer than the reference, AL can be
        # negative"): most negative-AL decodes have a longer hypothesis; the share − ½,
        # bootstrapped over those decodes
        evidence = (mean_difference([0.5] * negative, [1.0] * longer
                                    + [0.0] * (negative - longer), claimed="greater")
                    if negative > 1 else Evidence(math.nan, math.nan, math.nan, negative,
                                                  "greater"))
        out.append(Claim.measured(
            "K22-AL-negative-long", "a negative AL comes mostly from a hypothesis longer than "
            "the reference (share of negative-AL decodes − ½)", evidence,
            f"{negative} utterance decodes with AL < 0, {longer} of them with more words "
            "than the reference", needs_full_run=True))
    return out


def _better_minus_weaker(model: str, weaker_model: str, rule: str):
    """The smaller of the offline BLEU gap ``model`` − ``weaker_model`` and the mean BLEU
    gap of their ``rule`` curves (chunk sizes as the points, no initial wait) at matched
    AL: positive only when the model better offline is better online too."""
    def statistic(rows: pd.DataFrame) -> float:
        a, b = _offline_row(rows, model), _offline_row(rows, weaker_model)
        plain = _plain(rows)
        plain = plain[plain.rule == rule]
        online = curve_gap(plain[plain.model == model], plain[plain.model == weaker_model])
        if a is None or b is None or math.isnan(online):
            return math.nan
        return float(min(a.BLEU - b.BLEU, online))
    return statistic


def better_offline_claims(grid: pd.DataFrame, weaker: pd.DataFrame | None, model: str,
                          weaker_model: str | None, rule: str = TABLE1_RULE) -> list[Claim]:
    """§6 / §7: "an improvement in the offline model … leads to improvement in the online
    regime", on :func:`spec`'s sweep of ``model`` (``grid``) and a sweep of ``weaker_model``
    under ``rule`` (no initial wait) with offline beam search (``weaker``), both on the
    same segments: the smaller of the offline BLEU gap and the mean gap of the ``rule``
    curves at matched AL, model − weaker (superiority; it holds only when the better
    offline model is better online too). No claim (an empty list) without a weaker
    model."""
    if weaker is None or weaker_model is None or not len(weaker):
        return []
    model, weaker_model = Path(model).name, Path(weaker_model).name  # the summaries' labels
    rows = _rows(pd.concat([grid, weaker], ignore_index=True), [rule], offline=True)
    rows = rows[rows.model.isin([model, weaker_model])].reset_index(drop=True)
    a, b = _offline_row(rows, model), _offline_row(rows, weaker_model)
    plain = _plain(rows)
    plain = plain[plain.rule == rule]
    online = curve_gap(plain[plain.model == model], plain[plain.model == weaker_model])
    detail = (f"offline BLEU {model} {a.BLEU:.1f}, {weaker_model} {b.BLEU:.1f}"
              if a is not None and b is not None else "no offline row for both models")
    detail += f"; {rule} {model} − {weaker_model}, mean BLEU at matched AL: {online:+.2f}"
    return [Claim.measured(
        "K22-better-offline", f"a better offline model gives a better online model ({model} "
        f"against {weaker_model}, {rule}; the smaller of the offline BLEU gap and the mean "
        "online gap at matched AL, BLEU)",
        evaluate(rows, _better_minus_weaker(model, weaker_model, rule), claimed="greater"),
        detail, needs_full_run=True)]
