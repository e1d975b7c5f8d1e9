"""Every policy on the same offline models — beyond the five papers.

Notebook: ``notebooks/compare_policies.ipynb``. Each policy runs a few settings from low to
high latency; its best curve is its Pareto front on latency–BLEU (the settings no other
setting of the same policy beats on both), drawn with ideal (NCA) and computation-aware (CA)
latency. The cost of each policy is its computation per second of audio and how much the
computation adds to its latency (LAAL_CA − LAAL).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from simul.claims import BLEU_MARGIN, Claim, evaluate
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


def policies(unit: str) -> list[dict]:
    """The spec's ``policies`` for a model whose target units are ``unit`` ("bpe"/"char")."""
    if unit not in _BY_UNIT:
        raise ValueError(f"compare.policies: unit must be one of {sorted(_BY_UNIT)}, "
                         f"got {unit!r}")
    return _BY_UNIT[unit] + _ANY_UNIT


def unit_of(model: str) -> str:
    """"char" or "bpe": the target units of a shipped model or ESPnet2 model directory
    (its config's ``token_type``, as the adapter reads it)."""
    from simul.models import registry

    return "char" if registry.config(model).get("token_type") == "char" else "bpe"


def spec(model: str, unit: str, pair: str, split: str, output: str, *, corpus=None,
         max_utterances=None) -> dict:
    """A sweep spec: every policy's settings for one model."""
    return notebook.spec([model], pair, [split], output, policies(unit), corpus=corpus,
                         max_utterances=max_utterances)


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


def claims(summary: pd.DataFrame) -> list[Claim]:
    """Offline ≥ every simultaneous setting of the same model (non-inferiority within
    :data:`~simul.claims.BLEU_MARGIN`, paired-bootstrap evidence over the segments); CA ≥ NCA
    for every setting."""
    out = []
    details = []
    for model, g in summary.groupby("model", sort=False):
        offline, simul = g[g.policy == "offline"], g[g.policy != "offline"]
        if offline.empty or simul.empty:
            continue
        best = simul.loc[simul.BLEU.idxmax()]
        details.append(f"{model}: offline {offline.BLEU.max():.1f}, best simultaneous "
                       f"{best.BLEU:.1f} ({best.policy} {best.setting})")
    if details:
        # "≥": non-inferiority, within BLEU_MARGIN (its docstring says why 1 BLEU)
        out.append(Claim.measured("CMP-offline", "offline BLEU ≥ every simultaneous setting's "
                                  "of the same model (non-inferiority, margin 1 BLEU: offline "
                                  "− best ≥ −1)",
                                  evaluate(summary, _offline_minus_best, claimed="greater",
                                           margin=BLEU_MARGIN),
                                  "; ".join(details), needs_full_run=True))
    both = summary.dropna(subset=["LAAL", "LAAL_CA"])
    worse = [f"{r.model} {r.policy} {r.setting}: LAAL_CA {r.LAAL_CA:.0f} < LAAL {r.LAAL:.0f}"
             for r in both.itertuples() if r.LAAL_CA < r.LAAL]
    out.append(Claim("CMP-CA", "computation-aware LAAL ≥ ideal LAAL for every policy and "
                     "setting", not worse and len(both) > 0,
                     "; ".join(worse) or f"{len(both)} settings, all LAAL_CA ≥ LAAL"))
    return out
