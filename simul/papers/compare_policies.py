"""Every policy on the same offline models — beyond the five papers.

Notebook: ``notebooks/compare_policies.ipynb``. Each policy runs a few settings from low to
high latency; its best curve is its Pareto front on latency–BLEU (the settings no other
setting of the same policy beats on both), drawn with ideal (NCA) and computation-aware (CA)
latency. The cost of each policy is its computation per second of audio and how much the
computation adds to its latency (LAAL_CA − LAAL).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from simul.analysis.claims import ANTICIPATION, BLEU_MARGIN, Claim, Finding, Segments, declare
from simul.papers import notebook
from simul.records import read

POLICIES = ("wait_k_frames", "wait_k_words", "predecision", "onlinization", "wait_k_catchup",
            "alignatt", "edatt", "offline")
"""Every policy of the registry (``simul policies``)."""

KNOWN_GAPS: dict[str, str] = {}
"""The claims that do not hold on the full run, with why (none)."""

# The settings, from low to high latency. Policies that write one unit per step
# (predecision, wait_k_catchup) or a fixed number per stride (wait_k_frames) need a step
# matched to the units' rate: Spanish characters come ~4× faster than 500-piece BPE units
# (≈ 18 vs ≈ 4–5 per second of the mini corpus' English speech). Every step is a multiple
# of 50 ms (characters) or 200 ms (BPE), so that the settings read the same prefixes and
# share their encoder passes (simul.sweep.calls).
_BY_UNIT = {
    "bpe": [
        {"policy": "wait_k_frames", "grid": {"k": [50, 150, 300]}, "fixed": {"s": 20, "n": 1}},
        {"policy": "predecision", "grid": {"k": [2, 5, 10]},
         "fixed": {"trigger": "fixed", "step_ms": 200.0}},
        {"policy": "wait_k_catchup", "grid": {"k": [2, 5, 10]}, "fixed": {"stride_ms": 200.0}},
    ],
    "char": [
        {"policy": "wait_k_frames", "grid": {"k": [50, 150, 300]}, "fixed": {"s": 10, "n": 2}},
        {"policy": "predecision", "grid": {"k": [10, 20, 40]},
         "fixed": {"trigger": "fixed", "step_ms": 50.0}},
        {"policy": "wait_k_catchup", "grid": {"k": [8, 20, 40]}, "fixed": {"stride_ms": 50.0}},
    ],
}
_ANY_UNIT = [
    {"policy": "wait_k_words", "grid": {"k": [2, 4, 7]}, "fixed": {"detection": "adaptive"}},
    # LA-2 (K22's best rule) with greedy search: beam 5 from every chunk is too slow here
    {"policy": "onlinization", "grid": {"chunk_ms": [500.0, 1000.0, 2000.0]},
     "fixed": {"rule": "la", "n": 2, "beam": 1}},
    {"policy": "alignatt", "grid": {"frames": [2, 4, 8]}, "fixed": {"chunk_ms": 500.0}},
    {"policy": "edatt", "grid": {"alpha": [0.6, 0.3, 0.1]},
     "fixed": {"chunk_ms": 500.0, "frames": 2}},
    {"policy": "offline", "grid": {"beam": [1, 5]}},
]


def policies(unit: str, per_policy: int | None = None) -> list[dict]:
    """The spec's ``policies`` for a model whose target units are ``unit`` ("bpe"/"char");
    ``per_policy``: at most as many settings of each simultaneous policy (a quick run's
    thinner grid), spread from its lowest latency to its highest."""
    if unit not in _BY_UNIT:
        raise ValueError(f"compare.policies: unit must be one of {sorted(_BY_UNIT)}, "
                         f"got {unit!r}")
    if per_policy is not None and per_policy < 2:
        raise ValueError(f"compare.policies: per_policy must be 2 or more, got {per_policy}")
    out = _BY_UNIT[unit] + _ANY_UNIT
    if per_policy is None:
        return out
    return [p if p["policy"] == "offline" else
            {**p, "grid": {axis: _spread(values, per_policy)
                           for axis, values in p["grid"].items()}} for p in out]


def _spread(values: list, n: int) -> list:
    """``n`` of ``values`` (all when there are no more), the first and the last among them,
    the rest evenly between: [2, 4, 7] → [2, 7] for 2."""
    if len(values) <= n:
        return list(values)
    return [values[round(i * (len(values) - 1) / (n - 1))] for i in range(n)]


def unit_of(model: str) -> str:
    """"char" or "bpe": the target units of a shipped model or ESPnet2 model directory
    (its config's ``token_type``, as the adapter reads it)."""
    from simul.models import registry

    return "char" if registry.config(model).get("token_type") == "char" else "bpe"


def spec(model: str, unit: str, pair: str, split: str, output: str, *, corpus=None,
         max_utterances=None, per_policy: int | None = None) -> dict:
    """A sweep spec: every policy's settings for one model (``per_policy``:
    :func:`policies`)."""
    return notebook.spec([model], pair, [split], output, policies(unit, per_policy),
                         corpus=corpus, max_utterances=max_utterances)


def compute_per_audio(paths) -> float:
    """Seconds of computation per second of audio over the records in ``paths``: the sum of
    each record's compute time up to its last word (``elapsed[-1] − delays[-1]``) over the
    sum of their source durations. Records without an output word carry no timing and are
    left out (their audio too); NaN when none has one."""
    compute = audio = 0.0
    for path in paths:
        for r in read(path):
            if r.delays and r.elapsed:
                compute += r.elapsed[-1] - r.delays[-1]
                audio += r.source_length
    return compute / audio if audio else math.nan


def cost_table(summary: pd.DataFrame, outputs: Mapping[str, str | Path]) -> pd.DataFrame:
    """One row per (model, policy): its settings, best BLEU, computation per second of audio
    (:func:`compute_per_audio` over all its settings' records, found under ``outputs[model]``,
    the model's sweep output) and the mean CA overhead LAAL_CA − LAAL over its settings."""
    rows = []
    for (model, policy), g in summary.groupby(["model", "policy"], sort=False):
        paths = [Path(outputs[model]) / p for p in g.records]
        rows.append({"model": model, "policy": policy, "settings": len(g),
                     "BLEU best": g.BLEU.max(),
                     "compute / audio": compute_per_audio(paths),
                     "LAAL_CA − LAAL (ms)": (g.LAAL_CA - g.LAAL).mean()})
    return pd.DataFrame(rows)


def _offline_minus_best(rows: pd.DataFrame) -> float:
    """The smallest (over models) offline BLEU − the best simultaneous setting's."""
    gaps = [g[g.policy == "offline"].BLEU.max() - g[g.policy != "offline"].BLEU.max()
            for _, g in rows.groupby("model")
            if (g.policy == "offline").any() and (g.policy != "offline").any()]
    return float(min(gaps)) if gaps else math.nan


FINDINGS = declare(
    Finding("CMP-offline", "simul", "compare_policies", "simul's question: is offline "
            "decoding at least as good as every simultaneous setting of the same model?",
            "offline BLEU − the best simultaneous setting's (the smallest over the models)",
            "every policy's settings and offline, per model", "non-inferiority",
            margin=BLEU_MARGIN, margin_reason="within 1 BLEU, the smallest difference P22 "
            "names a gain", own=True),
    Finding("CMP-anticipation", "simul", "compare_policies", "simul's question: do policies "
            "anticipate more on en-de, whose word order departs from English's, than on "
            "en-es under the same policy and latency?", "pooled anticipation rate en-de − "
            "en-es at each policy's lowest-latency setting (the mean over the policies; links "
            "gold where the corpus has them, else fitted by eflomal)", "each policy's "
            "lowest-latency setting on both pairs' first models", "superiority", own=True),
)
"""simul's own questions on every policy (no paper's): reported apart from the papers'.
"computation-aware LAAL ≥ LAAL" is no claim: a record whose elapsed time is below its delay
is refused (:mod:`simul.records`), so it holds by construction (a test)."""


def claims(summary: pd.DataFrame) -> list[Claim]:
    """Offline ≥ every simultaneous setting of the same model (non-inferiority within
    :data:`~simul.analysis.claims.BLEU_MARGIN`, paired-bootstrap evidence over the segments)."""
    details = []
    for model, g in summary.groupby("model", sort=False):
        offline, simul = g[g.policy == "offline"], g[g.policy != "offline"]
        if offline.empty or simul.empty:
            continue
        best = simul.loc[simul.BLEU.idxmax()]
        details.append(f"{model}: offline {offline.BLEU.max():.1f}, best simultaneous "
                       f"{best.BLEU:.1f} ({best.policy} {best.setting})")
    if not details:
        return []
    return [FINDINGS["CMP-offline"].measure(summary, _offline_minus_best,
                                            detail="; ".join(details))]


# --- two pairs: what reordering costs each policy at low latency ----------------------------

def lowest_latency(summary: pd.DataFrame, models: Mapping[str, str]) -> list[tuple[str, str]]:
    """(policy, setting) of each simultaneous policy's lowest-latency setting that every
    model of ``models`` (pair → model label) ran: the smallest LAAL averaged over them."""
    rows = summary[summary.model.isin(list(models.values())) & (summary.policy != "offline")]
    shared = rows.groupby(["policy", "setting"]).filter(
        lambda g: set(g.model) >= set(models.values()))
    if shared.empty:
        return []
    mean = shared.groupby(["policy", "setting"], sort=False).LAAL.mean().reset_index()
    return [(r.policy, r.setting) for r in mean.loc[mean.groupby("policy", sort=False)
                                                     .LAAL.idxmin()].itertuples()]


def _scored(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with :data:`~simul.analysis.claims.ANTICIPATION` (and LAAL) recomputed from their
    records, links fitted where the pair has no gold ones; hand-made rows as they are."""
    if "records" not in rows:
        return rows
    return Segments(rows, metrics=("LAAL", ANTICIPATION)).scores()


def reordering_table(summary: pd.DataFrame, models: Mapping[str, str]) -> pd.DataFrame:
    """Each policy at its lowest latency (:func:`lowest_latency`) on every pair of ``models``
    (pair → model label, one architecture): one row per policy, the pairs' BLEU, LAAL and
    anticipation rate side by side (links: gold where the corpus has them, else fitted by
    eflomal on the pair's train split)."""
    chosen = lowest_latency(summary, models)
    keep = [r.Index for r in summary.itertuples()
            if r.model in models.values() and (r.policy, r.setting) in chosen]
    scored = _scored(summary.loc[keep])
    rows = []
    for policy, setting in chosen:
        row = {"policy": policy, "setting": setting}
        for pair, model in models.items():
            r = scored[(scored.model == model) & (scored.policy == policy)
                       & (scored.setting == setting)].iloc[0]
            row.update({f"BLEU {pair}": r.BLEU, f"LAAL {pair}": r.LAAL,
                        f"anticipation {pair}": r[ANTICIPATION]})
        rows.append(row)
    return pd.DataFrame(rows)


def anticipation_claims(summary: pd.DataFrame, models: Mapping[str, str], *,
                        harder: str = "en-de", easier: str = "en-es") -> list[Claim]:
    """Anticipation is higher on the pair whose word order departs from English's
    (``harder``: en-de) than on the near-monotone one (``easier``: en-es) under the same
    policy and latency: for each policy's lowest-latency setting both pairs' models ran
    (:func:`lowest_latency`; ``models``: pair → model label, one architecture), the pooled
    anticipation rate of ``harder`` minus that of ``easier``, averaged over the policies
    (superiority; paired bootstrap over the segments, which both pairs decode from the same
    audio). None when ``models`` lacks a pair."""
    if harder not in models or easier not in models:
        return []
    chosen = lowest_latency(summary, {p: models[p] for p in (harder, easier)})
    if not chosen:
        return []
    h, e = models[harder], models[easier]
    keep = [r.Index for r in summary.itertuples()
            if r.model in (h, e) and (r.policy, r.setting) in chosen]
    rows = summary.loc[keep].reset_index(drop=True)

    def statistic(rows: pd.DataFrame) -> float:
        by = rows.set_index(["model", "policy", "setting"])[ANTICIPATION]
        gaps = [by[(h, p, s)] - by[(e, p, s)] for p, s in chosen]
        gaps = [g for g in gaps if not math.isnan(g)]
        return float(sum(gaps) / len(gaps)) if gaps else math.nan

    scored = _scored(rows).set_index(["model", "policy", "setting"])
    detail = "; ".join(
        f"{p} {s}: {scored.loc[(h, p, s), ANTICIPATION]:.3f} vs "
        f"{scored.loc[(e, p, s), ANTICIPATION]:.3f} (LAAL {scored.loc[(h, p, s), 'LAAL']:.0f} "
        f"vs {scored.loc[(e, p, s), 'LAAL']:.0f} ms)" for p, s in chosen)
    return [FINDINGS["CMP-anticipation"].measure(
        rows, statistic, metrics=("LAAL", ANTICIPATION),
        detail=f"{harder} ({h}) vs {easier} ({e}): " + detail)]


# --- monotonic multihead attention among the offline-model policies at low latency ---------

LOW_LATENCY_MS = (1000.0, 1500.0)
"""The LAAL bounds (ms) at which MMA is set beside the offline-model policies."""
LOW_LATENCY_POLICIES = ("alignatt", "edatt", "onlinization", "mma")
"""AlignAtt, EDAtt, LA-2 (onlinization, rule la, n = 2) and MMA."""


def mma_spec(models: Sequence[str], pair: str, split: str, output: str, *, corpus=None,
             max_utterances=None) -> dict:
    """MMA models (one per latency weight λ) decoded by the ``mma`` policy on the triggers
    each was trained with."""
    return notebook.spec(list(models), pair, [split], output, [{"policy": "mma"}],
                         corpus=corpus, max_utterances=max_utterances)


def low_latency_table(summary: pd.DataFrame, *, bounds: Sequence[float] = LOW_LATENCY_MS,
                      policies: Sequence[str] = LOW_LATENCY_POLICIES,
                      latency: str = "LAAL") -> pd.DataFrame:
    """Each policy's best BLEU among its settings (any model of ``summary``: the offline
    model's, the MMA models') with ``latency`` ≤ each bound, and which setting gave it;
    NaN and "none" where no setting is that fast."""
    names = {"onlinization": "LA-2 (onlinization)"}
    rows = []
    for policy in policies:
        p = summary[summary.policy == policy]
        row = {"policy": names.get(policy, policy)}
        for bound in bounds:
            fast = p[p[latency] <= bound]
            if fast.empty:
                row[f"BLEU, {latency} ≤ {bound:g}"] = math.nan
                row[f"setting, ≤ {bound:g}"] = "none"
                continue
            best = fast.loc[fast.BLEU.idxmax()]
            row[f"BLEU, {latency} ≤ {bound:g}"] = float(best.BLEU)
            row[f"setting, ≤ {bound:g}"] = (f"{best.model}: {best.setting} "
                                             f"({best[latency]:.0f} ms)")
        rows.append(row)
    return pd.DataFrame(rows)
