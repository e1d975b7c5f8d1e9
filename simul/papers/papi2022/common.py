"""What P22's two ideas (:mod:`simul.papers.papi2022.offline`,
:mod:`simul.papers.papi2022.trained`) share: k_test and the word detections of Figures 1–3,
footnote 6's latency regimes, the sweep entry of wait-k over words, a summary's curves and the
gaps between two of them, a panel's title, and the findings both check (:data:`FINDINGS`,
declared once, in the order of the claims catalogue).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from simul.analysis.claims import BLEU_MARGIN, Finding, declare

KS = [3, 5, 7, 9, 11]
"""k_test of Figures 1–3 (source words to wait for)."""
DETECTIONS = ("fixed", "adaptive")
MEDIUM_LATENCY_MS = 1000.0
"""Footnote 6 (after Anastasopoulos et al. 2021): low < 1000 ms ≤ medium < 2000 ms ≤ high."""


def wait_k_words(detection: str, word_ms: float, ks, *, avoid_eos: bool) -> dict:
    """The sweep entry of wait-k over words at every k of ``ks``: ``detection`` (fixed: one
    word per ``word_ms``), a decision every ``word_ms`` (rounded to whole ms), force_finish,
    ``avoid_eos`` as avoid_eos_while_reading."""
    step = float(round(word_ms))
    fixed = {"detection": detection, **({"word_ms": step} if detection == "fixed" else {}),
             "chunk_ms": step, "force_finish": True, "avoid_eos_while_reading": bool(avoid_eos)}
    return {"policy": "wait_k_words", "grid": {"k": list(ks)}, "fixed": fixed}


def points(summary: pd.DataFrame) -> pd.DataFrame:
    """The wait-k rows of a summary with plain ``k`` and ``detection`` columns."""
    w = summary[summary.policy == "wait_k_words"]
    return w.assign(k=w.param_k.astype(int), detection=w.param_detection).reset_index(drop=True)


def offline_bleu(summary: pd.DataFrame, model: str) -> dict[str, float]:
    """{"offline greedy": BLEU, "offline beam-5": BLEU} of ``model`` (the dashed lines)."""
    off = summary[(summary.policy == "offline") & (summary.model == model)]
    names = {1: "offline greedy", 5: "offline beam-5"}
    beams = off.param_beam if "param_beam" in off else [1] * len(off)  # no grid: greedy
    return {names[int(b)]: float(bleu) for b, bleu in zip(beams, off.BLEU, strict=True)
            if int(b) in names}


def curve_gaps(upper: pd.DataFrame, lower: pd.DataFrame, *, x: str = "LAAL", y: str = "BLEU",
               min_x: float = 0.0, max_x: float = math.inf) -> list[tuple[float, float]]:
    """How far curve ``upper`` lies above curve ``lower``: (x, y_upper − y_lower) at every
    point of either curve with ``min_x`` ≤ x < ``max_x`` inside the other curve's x range,
    the other curve interpolated linearly between its points (sorted by x). Sorted by x."""
    a = upper.dropna(subset=[x, y]).sort_values(x)
    b = lower.dropna(subset=[x, y]).sort_values(x)
    gaps: dict[float, float] = {}
    if a.empty or b.empty:
        return []
    for px, py in zip(a[x], a[y], strict=True):
        if min_x <= px < max_x and b[x].iloc[0] <= px <= b[x].iloc[-1]:
            gaps[float(px)] = float(py - np.interp(px, b[x], b[y]))
    for px, py in zip(b[x], b[y], strict=True):
        if min_x <= px < max_x and a[x].iloc[0] <= px <= a[x].iloc[-1]:
            gaps[float(px)] = float(np.interp(px, a[x], a[y]) - py)
    return sorted(gaps.items())


def _mean_gap(upper: pd.DataFrame, lower: pd.DataFrame, **kw) -> float:
    """Mean of :func:`curve_gaps` (BLEU); NaN when the curves share no latency range."""
    gaps = curve_gaps(upper, lower, **kw)
    return sum(g for _, g in gaps) / len(gaps) if gaps else math.nan


def _gaps_text(upper: pd.DataFrame, lower: pd.DataFrame, **kw) -> str:
    gaps = curve_gaps(upper, lower, **kw)
    if not gaps:
        return "no common latency range"
    mean = sum(g for _, g in gaps) / len(gaps)
    return f"mean {mean:+.1f} BLEU ({', '.join(f'{g:+.1f} at {px:.0f} ms' for px, g in gaps)})"


def panel(index: int, pair: str) -> str:
    """A panel's title as the paper names it: "(a) en-de", "(b) en-es", …"""
    return f"({'abcdefghijklmnopqrstuvwxyz'[index]}) {pair}"


# --- claims -------------------------------------------------------------------------------

REGIMES_MS = {"low": (-math.inf, 1000.0), "medium": (1000.0, 2000.0), "high": (2000.0, math.inf)}
"""Footnote 6 (after Anastasopoulos et al. 2021): low below 1000 ms, medium 1000–2000 ms,
high above 2000 ms, of LAAL."""

WORD_MS = 280.0
"""App. A.1: the fixed detection counts "every average word duration, that is every
280ms": a latency within one word (±280 ms) is "without affecting latency" for a policy
that waits for words."""

_GAIN = ("P22 §5 counts 'a gain of 1 BLEU' (its smallest named gain): within 1 BLEU is "
         "'almost'")
_FIXED = "the offline Transformer and Conformer, fixed and adaptive detection, k_test 3–11"
_TRAINED = ("the offline Conformer and the Conformers trained in simultaneous mode, fixed "
            "detection at their word duration, k_test 3–11, avoid_eos_while_reading (A.2)")
_KTRAIN = ("the offline Transformer fine-tuned whole in simultaneous mode at P22's k_train 3, "
           "5, 7, 9, 11 with fixed detection (tools/train_grid.sh), decoded with it at "
           "k_test 3–11 (Fig. 1)")
_GRID_ADAPTIVE = ("the same with adaptive detection in training and decoding, "
                  "avoid_eos_while_reading (A.1; Fig. 2)")
_GRID = ("the offline Transformer and the Transformers fine-tuned from it in simultaneous "
         "mode at k_train 3, 5, 7, 9, 11 (tools/train_grid.sh), each detection in training "
         "and decoding (Figs. 1–2), k_test 3–11")

FINDINGS = declare(
    Finding("P22-adaptive", "P22", "§5", "we observe that the overall translation quality "
            "yielded by the adaptive strategy is higher compared to that of the fixed one",
            "adaptive − fixed, mean BLEU gap at matched LAAL ≥ 1000 ms (the smallest over "
            "the models)", _FIXED, "superiority"),
    Finding("P22-fixed-low", "P22", "§5", "the models with fixed word detection perform "
            "better at lower latency, with a gain of 1 BLEU for en-de and 2 BLEU for en-es",
            "fixed − adaptive, mean BLEU gap at matched LAAL over the lower half of the range "
            "both curves cover (the smallest over the models)", _FIXED, "superiority"),
    Finding("P22-fixed-far", "P22", "§5", "the fixed strategy curves are far from being "
            "comparable with their offline greedy values (dashed lines), while the adaptive "
            "strategy curves almost reach them at higher latency", "BLEU of fixed detection at "
            "its largest k_test − offline greedy, + 1 (more than 1 BLEU below: the largest "
            "over the models)", _FIXED, "superiority", claimed="less", half="first"),
    Finding("P22-adaptive-reach", "P22", "§5", "the fixed strategy curves are far from being "
            "comparable with their offline greedy values (dashed lines), while the adaptive "
            "strategy curves almost reach them at higher latency", "BLEU of adaptive "
            "detection at its largest k_test − offline greedy (the smallest over the models)",
            _FIXED, "non-inferiority", margin=BLEU_MARGIN, margin_reason=_GAIN,
            half="second"),
    Finding("P22-conformer-offline", "P22", "§6.1", "Conformer outperforms Transformer in "
            "offline generation. The improvements, of at least 2.4 BLEU points, are valid "
            "both for greedy and beam search", "Conformer − Transformer offline BLEU (the "
            "smaller of greedy and beam-5)", "offline greedy and beam 5 of both models",
            "superiority"),
    Finding("P22-conformer-simul", "P22", "§6.1", "improving the architecture of the offline "
            "system also has a positive impact on its simultaneous performance, enhancing "
            "translation quality without affecting latency", "Conformer − Transformer, mean "
            "BLEU gap at matched LAAL (the smaller over the detections)", _FIXED,
            "superiority", half="quality"),
    Finding("P22-conformer-latency", "P22", "§6.1", "improving the architecture of the "
            "offline system also has a positive impact on its simultaneous performance, "
            "enhancing translation quality without affecting latency", "LAAL of the "
            "Conformer − the Transformer's at the same detection and k_test (the mean, ms)",
            _FIXED, "equivalence", claimed="within", margin=WORD_MS,
            margin_reason="one source word: A.1's fixed detection counts a word every 280 ms",
            half="latency"),
    Finding("P22-conformer-high", "P22", "§6.1", "This holds both for fixed and adaptive word "
            "detection, with larger BLEU gains at higher latency regimes", "the Conformer's "
            "gain over the Transformer (mean BLEU gap at matched LAAL) on the upper half of "
            "the range both curves cover − on the lower half (the smaller over the "
            "detections)", _FIXED, "superiority"),
    Finding("P22-offline-vs-trained", "P22", "§5", "the offline-trained models (in solid "
            "black) outperform the systems trained in simultaneous at every latency regime, "
            "with gains from 1 to 7 BLEU for en-de and from 1 to 6 BLEU for en-es",
            "offline − trained, mean BLEU gap at matched LAAL in each latency regime the "
            "curves share (footnote 6: < 1000, 1000–2000, > 2000 ms; the smallest over the "
            "trained models and regimes)", _TRAINED, "superiority"),
    Finding("P22-ktrain-quality", "P22", "§5", "if ktrain increases, both the quality and "
            "latency improve (e.g. on en-de, the k=11 curve lies higher – indicating better "
            "quality – and more leftward – lower latency – than the others)", "trained at the "
            "larger k_train − at the next smaller, mean BLEU gap at matched LAAL (the mean "
            "over the consecutive k_train)", _KTRAIN, "superiority", half="quality"),
    Finding("P22-ktrain-latency", "P22", "§5", "if ktrain increases, both the quality and "
            "latency improve (e.g. on en-de, the k=11 curve lies higher – indicating better "
            "quality – and more leftward – lower latency – than the others)", "LAAL of the "
            "model trained at the larger k_train − at the next smaller, at the same k_test "
            "(the mean, ms)", _KTRAIN, "superiority", claimed="less", half="latency"),
    Finding("P22-adaptive-ktrain", "P22", "§5", "in the case of the adaptive strategy, "
            "changing ktrain does not significantly influence the model performance",
            "the widest mean BLEU gap at matched LAAL between the adaptive curves of models "
            "trained at different k_train, with its sign", _GRID_ADAPTIVE, "equivalence",
            claimed="within", margin=BLEU_MARGIN, margin_reason=_GAIN),
    Finding("P22-grid-offline-vs-trained", "P22", "§5, Fig. 1", "the offline-trained models "
            "(in solid black) outperform the systems trained in simultaneous at every latency "
            "regime, with gains from 1 to 7 BLEU for en-de and from 1 to 6 BLEU for en-es",
            "offline − trained, mean BLEU gap at matched LAAL in each latency regime the "
            "curves share (footnote 6: < 1000, 1000–2000, > 2000 ms; the smallest over the "
            "five trained models and regimes)", _KTRAIN, "superiority"),
    Finding("P22-grid-offline-on-par", "P22", "§5, Fig. 2", "the offline-trained system "
            "curves (in solid black) that are always above or on par with those of the "
            "simultaneous-trained systems", "offline − trained, mean BLEU gap at matched LAAL "
            "(the smallest over the five trained models)", _GRID_ADAPTIVE, "non-inferiority",
            margin=BLEU_MARGIN, margin_reason=_GAIN),
    Finding("P22-grid-adaptive", "P22", "§5, Figs. 1–2", "Looking at Figures 1 and 2, we "
            "observe that the overall translation quality yielded by the adaptive strategy is "
            "higher compared to that of the fixed one", "trained and decoded with adaptive − "
            "with fixed detection at the same k_train, mean BLEU gap at matched LAAL ≥ 1000 ms "
            "(the smallest over k_train)", _GRID, "superiority"),
    Finding("P22-CA-overhead", "P22", "§7", "while Conformer has a computational overhead of "
            "400/500ms, CAAT requires 1400/1500ms more than its ideal LAAL", "(LAAL_CA − "
            "LAAL) of CAAT − that of the offline Conformer with adaptive detection (ms)",
            "the offline Conformer and a CAAT model (Liu et al. 2021), adaptive detection",
            "superiority"),
    Finding("P22-pair-offline", "P22", "§5", "Translation quality is lower for en-de … The "
            "difference in performance between the two language pairs is coherent with the "
            "results of the offline generations (both greedy and beam-5)", "en-es − en-de "
            "offline BLEU (the smallest over architectures and beams)", "offline greedy and "
            "beam 5 of every architecture both pairs have", "superiority"),
    Finding("P22-pair-simul", "P22", "§5", "Translation quality is lower for en-de, for which "
            "it ranges from 11 to 19 BLEU, while for en-es it ranges from 14 to 25 BLEU",
            "en-es − en-de, mean BLEU gap at matched LAAL (the smallest over architectures and "
            "detections)", _FIXED + ", both pairs", "superiority"),
    Finding("P22-trained-low", "P22", "beyond §5", "simul's question: may a model trained in "
            "simultaneous mode beat the offline one at low latency (LAAL < 1000 ms)?",
            "trained − offline, mean BLEU gap at matched LAAL < 1000 ms (the largest over the "
            "trained models)", _TRAINED, "superiority", own=True),
)
"""P22's findings as the paper states them (:class:`simul.analysis.claims.Finding`)."""
