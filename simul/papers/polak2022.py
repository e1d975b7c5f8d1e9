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

from simul.analysis.claims import (
    Claim,
    Evidence,
    Finding,
    curve_gap,
    declare,
    fmt,
    mean_known,
    mean_step,
    monotone_within,
    resample_segments,
    smallest_known,
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
``tests/test_reproduce_full.py``. Measured on the en-de Conformer (corpus v3, 40 tst-COMMON
segments, the last full run: analysis in ``docs/reference/claims.md``); an undecided claim
is not a gap."""

CONFIRMED_GAPS: dict[str, str] = {}
"""The claims the full run left undecided and the confirmatory run (``make confirm``)
contradicts on fresh segments, with why: strict xfails of ``tests/test_reproduce_full.py``
once ``figures/confirm/claims.csv`` exists. None yet: the last confirmatory run (corpus v2,
en-es) contradicted K22-3x read at the grid's largest chunk (2 s), a setting unlike the
paper's; the claim now reads LA-2 at 1 s (:data:`PAR_CHUNK_MS`) and waits for the next
confirmatory run."""

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
ALMOST_ON_PAR = 1.54
"""The margin of K22's "almost on par" (BLEU), from the paper's own use of the words: the
abstract's onlinized system "almost on par with the offline setting while being 3× faster"
is Table 2's medium regime, 1.06 (Model A: 30.30 against 31.36) and 1.54 (Model B: 31.60
against 33.14) BLEU below offline; §6 calls losses of 0.35 and 0.47 BLEU "almost on par"
too. The largest loss the paper calls so is 1.54."""

SPEEDUP = 3.0
"""The abstract: the onlinized system is "3× faster than offline in terms of latency"."""
SPEEDUP_MARGIN = 0.5
"""The margin of "3×": Table 2's medium regime is 3.49× (5794 / 1660 ms, Model A) and 3.04×
(5794 / 1906 ms, Model B) faster than offline, which the abstract rounds to 3×; a ratio
that rounds to 3 is above 2.5."""

PAR_CHUNK_MS = 1000.0
"""The chunk of the abstract's "almost on par … 3× faster": Table 2's medium regime, where
both En-De models use 1 s chunks (AL 1660 and 1906 ms against offline's 5794)."""

LINE_MARGIN = 1.0
"""The margin of "with equal effect" and "the same … line" (BLEU): tighter than "almost on
par" (:data:`ALMOST_ON_PAR`), which the paper uses for losses of 0.35–1.54; a line within
±1 BLEU of another is one the paper's figures would not set apart."""

HOLD_N = ("Hold-6", "Hold-12")
"""§5.2's hold-n claim: n > 3 (n ≤ 3 is the paper's stated exception, K22-hold-3)."""
LA_N_OTHERS = ("LA-3", "LA-4")

_FIG1 = "Figure 1's rules (LA-2, SP-2, Hold-6) × chunks 250–2000 ms"
_FIG3 = "every rule × chunks 250–2000 ms, no initial wait"

FINDINGS = declare(
    Finding("K22-chunk-AL", "K22", "§3.2", "the chunk size is the principal factor that "
            "controls the quality-latency trade-off", "AL grows with the chunk size for every "
            "rule (the weakest step from one chunk size to the next, ms)", _FIG3,
            "superiority", needs_full_run=False),
    Finding("K22-chunk-BLEU", "K22", "§5.3", "the shorter chunk sizes tend to perform worse",
            "BLEU grows with the chunk size (the mean step from one chunk size to the next, "
            "over every rule, BLEU)", _FIG3, "superiority"),
    Finding("K22-chunk-dominates", "K22", "§5.1", "the chunk size parameter has a stronger "
            "influence on the trade-off than different prefix strategies", "mean AL range "
            "across chunk sizes − mean AL range across rules (ms)", _FIG1, "superiority"),
    Finding("K22-LA2-best", "K22", "§5.2", "The local agreement seems to outperform all other "
            "strategies", "LA-2's curve above every hold-n and SP-n curve (the smallest mean "
            "BLEU gap at matched AL)", _FIG3, "superiority"),
    Finding("K22-SP1-worst", "K22", "§5.2", "SP-1 strongly underperforms other strategies in "
            "quality", "every other rule's curve above SP-1's (the smallest mean BLEU gap at "
            "matched AL)", _FIG3, "superiority"),
    Finding("K22-hold-n", "K22", "§5.2", "the hold-n strategy can use either n or chunk size "
            "to control the quality-latency trade-off with equal effect", "the mean, over the "
            "chunk sizes, of the BLEU gap at matched AL between raising n (Hold-6 → Hold-12 "
            "at that chunk) and raising Hold-6's chunk size", "Hold-6, Hold-12 × chunks "
            "250–2000 ms", "equivalence", claimed="within", margin=LINE_MARGIN,
            margin_reason="a line the paper's figures would not set apart: tighter than its "
            "'almost on par' (0.35–1.54 BLEU)"),
    Finding("K22-hold-3", "K22", "§5.2", "The only exception seems to be too low n <= 3, "
            "which slightly underperforms the options with higher n and shorter chunk size",
            "the front of Hold-6 and Hold-12 over Hold-3's curve (mean BLEU gap at matched AL)",
            "Hold-3, Hold-6, Hold-12 × chunks 250–2000 ms", "superiority"),
    Finding("K22-LA-n-line", "K22", "§5.2", "LA-n for all n follows the same quality-latency "
            "trade-off line", "the widest mean BLEU gap at matched AL of LA-3 or LA-4 against "
            "LA-2, with its sign", "LA-2, LA-3, LA-4 × chunks 250–2000 ms", "equivalence",
            claimed="within", margin=LINE_MARGIN,
            margin_reason="a line the paper's figures would not set apart: tighter than its "
            "'almost on par' (0.35–1.54 BLEU)"),
    Finding("K22-LA-n-quality", "K22", "§5.1", "Increasing the number of consecutive chunks "
            "(i.e., increasing the context for the decision) considered in the local agreement "
            "strategy (LA-2, 3, 4), improves the quality, while it adds latency",
            "BLEU from LA-n to LA-(n + 1) at the same chunk size (the mean step, BLEU)",
            "LA-2, LA-3, LA-4 × chunks 250–2000 ms", "superiority", half="quality"),
    Finding("K22-LA-n-latency", "K22", "§5.1", "Increasing the number of consecutive chunks "
            "(i.e., increasing the context for the decision) considered in the local agreement "
            "strategy (LA-2, 3, 4), improves the quality, while it adds latency",
            "AL from LA-n to LA-(n + 1) at the same chunk size (the mean step, ms)",
            "LA-2, LA-3, LA-4 × chunks 250–2000 ms", "superiority", half="latency"),
    Finding("K22-LA-n-cost", "K22", "§5.2", "The advantage of LA-2 is in reduced "
            "computational complexity compared to the other LA-n strategies with n > 2",
            "computation charged to the words, AL_CA − AL, of LA-3 and LA-4 − LA-2's at the "
            "same chunk size (the mean, ms)", "LA-2, LA-3, LA-4 × chunks 250–2000 ms",
            "superiority"),
    Finding("K22-offline-par", "K22", "abstract", "our onlinization algorithm is almost on par "
            "with the offline setting while being 3× faster than offline in terms of latency",
            "BLEU of LA-2 at 1 s chunks − offline beam search", "LA-2 at 1 s (Table 2's "
            "medium regime, the paper's 3× point), offline", "non-inferiority",
            margin=ALMOST_ON_PAR, margin_reason="the largest loss K22 calls 'almost on par': "
            "1.54 BLEU (Table 2, Model B's medium regime; Model A's 1.06)", half="quality"),
    Finding("K22-3x", "K22", "abstract", "our onlinization algorithm is almost on par with "
            "the offline setting while being 3× faster than offline in terms of latency",
            "AL(offline) / AL(LA-2 at 1 s) − 3", "LA-2 at 1 s (Table 2's medium regime, the "
            "paper's 3× point), offline", "non-inferiority", margin=SPEEDUP_MARGIN,
            margin_reason="Table 2's 3.04× and 3.49× are the abstract's '3×': a ratio that "
            "rounds to 3 is above 2.5", half="latency"),
    Finding("K22-initial-wait-BLEU", "K22", "§5.3", "We see a slight (0.3 BLEU) increase in "
            "quality for a chunk size of 250 ms, though the initial wait does not improve the "
            "BLEU and a considerable increase in the latency", "BLEU with the 2 s initial "
            "wait − without, at the smallest chunk size", "LA-2 at the smallest chunk, with "
            "and without the initial wait", "equivalence", claimed="within",
            margin=LINE_MARGIN, margin_reason="'slight': Table 1's gain is 0.26 BLEU at 250 "
            "ms, 0.02 and 0.00 at 500 and 1000 ms; within ±1 BLEU", half="quality"),
    Finding("K22-initial-wait-AL", "K22", "§5.3", "We see a slight (0.3 BLEU) increase in "
            "quality for a chunk size of 250 ms, though the initial wait does not improve the "
            "BLEU and a considerable increase in the latency", "AL with the 2 s initial wait − "
            "without, at the smallest chunk size (ms)", "LA-2 at the smallest chunk, with "
            "and without the initial wait", "superiority", half="latency",
            needs_full_run=False),
    Finding("K22-AL-max-length", "K22", "§5.4, eq. 6", "we propose a change to the average "
            "lagging metric that avoids negative values", "the max-length AL (eq. 6) of every "
            "setting ≥ 0", "every rule × chunk, with and without the initial wait",
            "property", claimed=""),
    Finding("K22-AL-negative-long", "K22", "§5.4", "the negative AL is in utterances where "
            "the hypothesis is significantly longer than the reference", "the share of "
            "negative-AL decodes whose hypothesis has more words than the reference − ½ "
            "(segments resampled, every setting's decode of a segment together)",
            "every rule × chunk, with and without the initial wait", "superiority"),
    Finding("K22-better-offline", "K22", "§6", "an improvement in the offline model (offline "
            "BLEU of 31.36 and 33.14 for Model A and B, respectively) leads to improvement in "
            "the online regime", "the smaller of the offline BLEU gap and the mean gap of the "
            "LA-2 curves at matched AL, better − weaker model", "LA-2 × chunks 250–2000 ms "
            "and offline, of `model` and `weaker_model`", "superiority"),
)
"""K22's findings as the paper states them (:class:`simul.analysis.claims.Finding`)."""


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


def _waited_minus_not(rule: str, metric: str):
    """``metric`` with the initial wait − without, at the smallest chunk size that has
    both."""
    def statistic(rows: pd.DataFrame) -> float:
        t1 = table1(rows, rule)
        pair = t1[t1["Chunk size (ms)"] == t1["Chunk size (ms)"].min()] \
            .set_index("Initial wait (ms)")[metric]
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


def _at_chunk(rows: pd.DataFrame, rule: str, chunk_ms: float) -> pd.Series | None:
    """``rule``'s setting without initial wait at ``chunk_ms`` (None when the grid has
    none)."""
    plain = _plain(rows)
    plain = plain[(plain.rule == rule) & (plain.chunk_ms == chunk_ms)]
    return plain.iloc[0] if len(plain) else None


def _offline_row(rows: pd.DataFrame, model: str | None = None) -> pd.Series | None:
    off = rows[rows.policy == "offline"]
    if model is not None:
        off = off[off.model == model]
    return off.iloc[0] if len(off) else None


def _online_minus_offline(rule: str, chunk_ms: float):
    """BLEU of ``rule`` at ``chunk_ms`` − offline BLEU."""
    def statistic(rows: pd.DataFrame) -> float:
        online, off = _at_chunk(rows, rule, chunk_ms), _offline_row(rows)
        if online is None or off is None:
            return math.nan
        return float(online.BLEU - off.BLEU)
    return statistic


def _speedup_minus_3(rule: str, chunk_ms: float):
    """AL(offline) / AL(``rule`` at ``chunk_ms``) − :data:`SPEEDUP`; NaN when the online AL
    is not positive (no ratio to take)."""
    def statistic(rows: pd.DataFrame) -> float:
        online, off = _at_chunk(rows, rule, chunk_ms), _offline_row(rows)
        if online is None or off is None or not online.AL > 0:
            return math.nan
        return float(off.AL / online.AL - SPEEDUP)
    return statistic


def _hold_gap(rows: pd.DataFrame) -> float:
    """Raising n against raising the chunk size: for every chunk size, the mean BLEU gap at
    matched AL of the n-segment (the :data:`HOLD_N` rules at that chunk) over Hold-6's
    curve across chunk sizes, then the mean over the chunk sizes where they overlap in AL
    (NaN when none does)."""
    plain = _plain(rows)
    hold = plain[plain.rule.isin(HOLD_N)]
    chunk_curve = hold[hold.rule == HOLD_N[0]]
    gaps = [curve_gap(g, chunk_curve) for _, g in hold.groupby("chunk_ms")
            if g.rule.nunique() == len(HOLD_N)]
    return mean_known(gaps)


def _hold3_gap(rows: pd.DataFrame) -> float:
    """Mean BLEU gap at matched AL of the front of Hold-6 and Hold-12 (every chunk size)
    over Hold-3's curve."""
    from simul.analysis.tables import pareto_front

    plain = _plain(rows)
    higher = plain[plain.rule.isin(HOLD_N)].assign(family="hold")
    low = plain[plain.rule == "Hold-3"]
    if higher.empty or low.empty:
        return math.nan
    return curve_gap(pareto_front(higher, x="AL", by=["family"]), low)


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


def _la_n_number(rows: pd.DataFrame) -> pd.DataFrame:
    plain = _plain(rows)
    plain = plain[plain.rule.str.startswith("LA-")]
    return plain.assign(la_n=[parse_rule(r)[1] for r in plain.rule])


def _la_n_cost(rows: pd.DataFrame) -> float:
    """Mean over the chunk sizes and n > 2 of (AL_CA − AL) of LA-n − that of LA-2."""
    plain = _la_n_number(rows)
    gaps = []
    for _, g in plain.groupby("chunk_ms"):
        base = g[g.la_n == 2]
        if base.empty:
            continue
        cost = (g.AL_CA - g.AL).to_numpy()
        base_cost = float(base.AL_CA.iloc[0] - base.AL.iloc[0])
        gaps += [c - base_cost for c, n in zip(cost, g.la_n, strict=True) if n > 2]
    return mean_known(gaps)


def _negative_long(values) -> float:
    """``values``: (2, settings, segments) of 0/1 flags — AL < 0, and AL < 0 with more words
    than the reference. The share of the negative-AL decodes with the longer hypothesis −
    ½ (NaN without a negative AL)."""
    negative, longer = values[0].sum(), values[1].sum()
    return float(longer / negative - 0.5) if negative else math.nan


def negative_flags(per_setting: dict[str, pd.DataFrame]):
    """(2, settings, segments) 0/1 flags from :func:`read_utterances`: AL < 0, and AL < 0
    with a hypothesis longer than the reference; a segment without output word in a
    setting is neither."""
    import numpy as np

    segments = sorted({i for u in per_setting.values() for i in u["index"]})
    at = {s: j for j, s in enumerate(segments)}
    flags = np.zeros((2, len(per_setting), len(segments)))
    for i, utts in enumerate(per_setting.values()):
        for r in utts.itertuples():
            if r.AL < 0:
                flags[0, i, at[r.index]] = 1
                flags[1, i, at[r.index]] = float(r.hyp_words > r.ref_words)
    return flags


def claims(summary: pd.DataFrame, utterances: dict[str, pd.DataFrame] | None = None, *,
           table1_rule: str = TABLE1_RULE, par_chunk_ms: float = PAR_CHUNK_MS) -> list[Claim]:
    """K22's findings (:data:`FINDINGS`) on one (model, split) summary of :func:`spec`'s
    sweep, each with its paired-bootstrap evidence over the segments. ``utterances``
    (:func:`read_utterances`: per setting, each utterance's AL and word counts) adds §5.4's
    per-utterance claim; ``table1_rule`` is the rule the spec ran with the initial wait, and
    the online system of K22-offline-par and K22-3x, at ``par_chunk_ms`` (Table 2's medium
    regime; "not measured" when the grid lacks that chunk)."""
    f = FINDINGS
    rows = settings(summary)
    plain = rows[rows.initial_wait_ms == 0]
    out = []

    failures, seen = monotone_within(plain, by="rule", along="chunk_ms")
    if seen:
        step = weakest_step(by="rule", along="chunk_ms")
        out.append(f["K22-chunk-AL"].measure(
            summary, lambda r: step(_plain(r)),
            detail="; ".join(failures) or f"{seen} rules, all monotone"))
        bleu_step = mean_step(by="rule", along="chunk_ms", metric="BLEU")
        out.append(f["K22-chunk-BLEU"].measure(
            summary, lambda r: bleu_step(_plain(r)),
            detail="BLEU per chunk size, mean over rules: " + ", ".join(
                f"{c:g} ms {b:.1f}" for c, b in plain.groupby("chunk_ms").BLEU.mean().items())))

    fig1 = plain[plain.rule.isin(FIGURE_RULES["figure1"])]
    if fig1.rule.nunique() > 1 and fig1.chunk_ms.nunique() > 1:
        by_chunk = fig1.groupby("rule").AL.agg(lambda s: s.max() - s.min())
        by_rule = fig1.groupby("chunk_ms").AL.agg(lambda s: s.max() - s.min())
        out.append(f["K22-chunk-dominates"].measure(
            summary, _chunk_minus_rule,
            detail=f"mean AL range across chunk sizes {by_chunk.mean():.0f} ms vs. across "
                   f"rules {by_rule.mean():.0f} ms"))

    for cid, rule, above, label in (("K22-LA2-best", "LA-2", True, "LA-2 − rule"),
                                    ("K22-SP1-worst", "SP-1", False, "rule − SP-1")):
        gaps = _gaps_to(rule, summary, above=above)
        if (plain.rule == rule).sum() < 2 or not gaps:
            continue
        out.append(f[cid].measure(
            summary, lambda r, rule=rule, above=above: smallest_known(
                _gaps_to(rule, r, above=above).values()),
            detail=f"{label}, mean BLEU over the shared AL range: " + ", ".join(
                f"{r} {g:+.2f}" for r, g in sorted(gaps.items()))))

    if (plain.rule == HOLD_N[0]).sum() >= 2 and (plain.rule == HOLD_N[1]).any():
        out.append(f["K22-hold-n"].measure(
            _rows(summary, list(HOLD_N)), _hold_gap,
            detail=f"n-segment − chunk curve, mean BLEU: {_hold_gap(summary):+.2f}"))
    if (plain.rule == "Hold-3").sum() >= 2 and plain.rule.isin(HOLD_N).any():
        out.append(f["K22-hold-3"].measure(
            _rows(summary, ["Hold-3", *HOLD_N]), _hold3_gap,
            detail=f"Hold-6/12 front − Hold-3, mean BLEU at matched AL: "
                   f"{_hold3_gap(summary):+.2f}"))

    la_gaps = _la_n_gaps(summary)
    la_rules = ["LA-2", *LA_N_OTHERS]
    if (plain.rule == "LA-2").sum() >= 2 and la_gaps:
        out.append(f["K22-LA-n-line"].measure(
            _rows(summary, la_rules), _la_n_widest,
            detail="rule − LA-2, mean BLEU over the shared AL range: " + ", ".join(
                f"{r} {g:+.2f}" for r, g in sorted(la_gaps.items()))))
    la = _la_n_number(summary)
    if la.la_n.nunique() > 1:
        by_n = la.groupby("la_n")[["BLEU", "AL"]].mean()
        detail = "mean over chunk sizes per n: " + ", ".join(
            f"LA-{n}: BLEU {b.BLEU:.1f}, AL {b.AL:.0f}" for n, b in by_n.iterrows())
        for cid, metric in (("K22-LA-n-quality", "BLEU"), ("K22-LA-n-latency", "AL")):
            step = mean_step(by="chunk_ms", along="la_n", metric=metric)
            out.append(f[cid].measure(_rows(summary, la_rules),
                                      lambda r, step=step: step(_la_n_number(r)),
                                      detail=detail))
        if "AL_CA" in summary:
            out.append(f["K22-LA-n-cost"].measure(
                _rows(summary, la_rules), _la_n_cost, metrics=("AL", "AL_CA"),
                detail=f"LA-n > 2 − LA-2, AL_CA − AL: {_la_n_cost(summary):+.0f} ms"))
        else:
            out.append(f["K22-LA-n-cost"].not_measured("computation-aware AL (records with "
                                                       "elapsed times)"))

    online, off = _at_chunk(summary, table1_rule, par_chunk_ms), _offline_row(summary)
    if off is not None:
        if online is None:
            needs = f"{table1_rule} at {par_chunk_ms:g} ms chunks in the grid"
            out += [f["K22-offline-par"].not_measured(needs), f["K22-3x"].not_measured(needs)]
        else:
            pair = _rows(summary, [table1_rule], offline=True, chunk_ms=par_chunk_ms)
            label = setting_label(table1_rule, par_chunk_ms)
            out.append(f["K22-offline-par"].measure(
                pair, _online_minus_offline(table1_rule, par_chunk_ms),
                detail=f"BLEU {label} {online.BLEU:.1f}, offline {off.BLEU:.1f}"))
            if not math.isnan(off.AL):
                out.append(f["K22-3x"].measure(
                    pair, _speedup_minus_3(table1_rule, par_chunk_ms),
                    detail=f"AL {label} {online.AL:.0f} ms, offline {off.AL:.0f} ms"))

    t1 = table1(summary, table1_rule)
    if len(t1):
        smallest_chunk = t1["Chunk size (ms)"].min()
        pair = t1[t1["Chunk size (ms)"] == smallest_chunk].set_index("Initial wait (ms)")
        for cid, metric in (("K22-initial-wait-BLEU", "BLEU"), ("K22-initial-wait-AL", "AL")):
            out.append(f[cid].measure(
                summary, _waited_minus_not(table1_rule, metric),
                detail=f"{smallest_chunk:g} ms chunks, {metric} without / with: "
                       + fmt(pair[metric].tolist(), 1 if metric == "BLEU" else 0)))

    negative = rows[rows.AL < 0]
    lowest = rows.AL_K22.min() if len(rows) else math.nan
    out.append(f["K22-AL-max-length"].checked(
        bool(len(rows) and lowest >= 0),
        f"{len(negative)} settings with AL < 0; lowest max-length AL {lowest:.0f} ms"))
    if utterances:
        flags = negative_flags(utterances)
        neg, longer = int(flags[0].sum()), int(flags[1].sum())
        finding = f["K22-AL-negative-long"]
        if (flags[0].sum(axis=0) > 0).sum() >= 2:
            evidence = resample_segments(flags, _negative_long, claimed="greater")
        else:  # one segment with a negative AL (or none) shows no tendency
            evidence = Evidence(math.nan, math.nan, math.nan, flags.shape[-1], "greater")
        out.append(finding.decided(
            evidence, f"{neg} decodes with AL < 0 ({len(utterances)} settings × "
                      f"{flags.shape[-1]} segments), {longer} of them with more words than the "
                      "reference"))
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
    """§6: "an improvement in the offline model … leads to improvement in the online
    regime", on :func:`spec`'s sweep of ``model`` (``grid``) and a sweep of ``weaker_model``
    under ``rule`` (no initial wait) with offline beam search (``weaker``), both on the
    same segments: the smaller of the offline BLEU gap and the mean gap of the ``rule``
    curves at matched AL, model − weaker (superiority; it holds only when the better
    offline model is better online too). "not measured" without a weaker model."""
    finding = FINDINGS["K22-better-offline"]
    if weaker is None or weaker_model is None or not len(weaker):
        return [finding.not_measured("a second, weaker offline model (weaker_model)")]
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
    return [finding.measure(rows, _better_minus_weaker(model, weaker_model, rule),
                            detail=detail)]
