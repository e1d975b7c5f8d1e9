"""Papi, Gaido, Negri, Turchi 2022 — "Does simultaneous speech translation need simultaneous
models?" (Findings of EMNLP 2022): one offline-trained model, wait-k over detected source
words applied at inference time only (policy ``wait_k_words``).

Notebook: ``notebooks/papi2022.ipynb``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from simul.analysis.claims import (
    BLEU_MARGIN,
    Claim,
    Finding,
    declare,
    mean_known,
    smallest,
    tagged,
)
from simul.papers import notebook
from simul.papers.notebook import EOS_VARIANT

KS = [3, 5, 7, 9, 11]
"""k_test of Figures 1–3 (source words to wait for)."""
DETECTIONS = ("fixed", "adaptive")
MEDIUM_LATENCY_MS = 1000.0
"""Footnote 6 (after Anastasopoulos et al. 2021): low < 1000 ms ≤ medium < 2000 ms ≤ high."""

TRAINED_MODELS = ["conformer_bpe_en-es_waitk3", "conformer_bpe_en-es_waitk7",
                  "conformer_bpe_en-es_multipath"]
"""§3's other side: the offline Conformer fine-tuned in simultaneous mode (recipes of the same
names, :mod:`simul.models.extensions.waitk_decoder`), k_train 3, 7 and multi-path."""

KNOWN_GAPS: dict[str, str] = {}
"""The claims that the full run (``make reproduce``) contradicts, with why: strict xfails of
``tests/test_reproduce_full.py``. None on the last full run (corpus v3, en-de and en-es,
40 tst-COMMON segments; analysis in ``docs/reference/claims.md``); an undecided claim is
not a gap."""


def label(model) -> str:
    """The name a sweep gives a model (a name or a :class:`~simul.models.registry.Model`) in
    its summary (:func:`simul.models.registry.label`): a shipped name, a Hub repo id with
    ``--`` for its ``/``, or the directory's name."""
    from simul.models import registry

    return registry.label(model)


def mean_word_ms(segments: Iterable) -> float:
    """Mean source word duration in ms: total ``duration_ms`` over total source words
    (whitespace-separated words of ``source``) — the fixed detection's one word per this many
    ms (App. A.1: "every average word duration, that is every 280ms" on MuST-C)."""
    duration, words = 0.0, 0
    for seg in segments:
        duration += seg.duration_ms
        words += len(seg.source.split())
    if words == 0:
        raise ValueError("mean_word_ms: the segments hold no source words")
    return duration / words


def corpus_word_ms(corpus: str | Path | None, pair: str, split: str) -> float:
    """:func:`mean_word_ms` over every segment of ``split`` (the embedded corpus when
    ``corpus`` is None)."""
    from simul.corpus import DEFAULT_ROOT, load_list

    return mean_word_ms(load_list(corpus or DEFAULT_ROOT, pair, split, with_audio=False))


def encoder_type(model) -> str:
    """The encoder of a shipped model or an ESPnet model directory (its config.yaml), or of a
    :class:`~simul.models.registry.Model`."""
    from simul.models import registry

    return str(registry.model(model).config.get("encoder", ""))


def fixed_avoid_eos(model: str) -> bool:
    """avoid_eos_while_reading with fixed word detection, as P22 set it per architecture:
    off for the Transformer (A.1: "for the fixed we found that it degrades the
    performance"), on for the Conformer (A.2: "force_finish … with the
    avoid_eos_while_reading for both the word detection strategies"); other encoders follow
    the Conformer, the paper's final setting."""
    return encoder_type(model) != "transformer"


RUNAWAY_FILTER = "ignore:wait_k_words"
"""The ``PYTHONWARNINGS`` entry that silences wait_k_words' runaway warning in a new
process (its message begins with the policy's name)."""


def silence_runaway_warning() -> None:
    """Silence :class:`~simul.policies.word_detection.RunawaySettingWarning` in this process
    and in the sweep workers it starts afterwards (they inherit ``PYTHONWARNINGS``). The
    notebook decodes P22's own A.2 setting (avoid_eos_while_reading on), which runs away on
    this corpus, on purpose: the figures measure it, and the warning, given once per
    process, would repeat under the runs for every worker."""
    import os
    import warnings

    from simul.policies.word_detection import RunawaySettingWarning

    warnings.filterwarnings("ignore", category=RunawaySettingWarning)
    given = [w for w in os.environ.get("PYTHONWARNINGS", "").split(",") if w]
    if RUNAWAY_FILTER not in given:
        os.environ["PYTHONWARNINGS"] = ",".join([*given, RUNAWAY_FILTER])


def wait_k_words(detection: str, word_ms: float, ks, *, avoid_eos: bool) -> dict:
    """The sweep entry of wait-k over words at every k of ``ks``: ``detection`` (fixed: one
    word per ``word_ms``), a decision every ``word_ms`` (rounded to whole ms), force_finish,
    ``avoid_eos`` as avoid_eos_while_reading."""
    step = float(round(word_ms))
    fixed = {"detection": detection, **({"word_ms": step} if detection == "fixed" else {}),
             "chunk_ms": step, "force_finish": True, "avoid_eos_while_reading": bool(avoid_eos)}
    return {"policy": "wait_k_words", "grid": {"k": list(ks)}, "fixed": fixed}


def spec(model: str, pair: str, split: str, output: str, *, word_ms: float, ks=KS,
         corpus=None, max_utterances=None, avoid_eos_fixed: bool | None = None) -> dict:
    """A sweep spec for one model: wait-k over words for every k in ``ks`` with fixed
    detection (one word per ``word_ms``; avoid_eos_while_reading as P22 set it for the
    model's architecture, :func:`fixed_avoid_eos`, unless ``avoid_eos_fixed`` says) and
    adaptive detection (source CTC, avoid_eos_while_reading), both with force_finish and a
    decision every ``word_ms`` (rounded to whole ms); offline greedy and beam 5."""
    if avoid_eos_fixed is None:
        avoid_eos_fixed = fixed_avoid_eos(model)
    policies = [wait_k_words("fixed", word_ms, ks, avoid_eos=avoid_eos_fixed),
                wait_k_words("adaptive", word_ms, ks, avoid_eos=True),
                {"policy": "offline", "grid": {"beam": [1, 5]}}]
    return notebook.spec([model], pair, [split], output, policies, corpus=corpus,
                         max_utterances=max_utterances)


def trained_spec(models: list[str], pair: str, split: str, output: str, *, word_ms: float,
                 ks=KS, corpus=None, max_utterances=None,
                 avoid_eos: bool | tuple[bool, ...] = True) -> dict:
    """A sweep spec for §3's comparison: every model of ``models`` (the offline one and
    those trained in simultaneous mode) decoded by wait-k over words with fixed detection,
    one word per ``word_ms`` — the schedule the trained models learned — at every k_test of
    ``ks``, with force_finish and avoid_eos_while_reading (the Conformer's setting, A.2;
    ``avoid_eos=False``: the shown alternative, where an end of sentence predicted while
    reading makes the policy read on instead of writing the next best unit), and offline
    greedy (the trained models' quality with the whole input).

    ``avoid_eos=(True, False)``: both in one sweep, which reads and encodes each prefix
    once for both and shares their decoder steps until an end of sentence sets them apart
    (the records are those of two sweeps; :func:`by_avoid_eos` splits the summary)."""
    step = float(round(word_ms))
    policies = [
        {"policy": "wait_k_words", "grid": {"k": list(ks)},
         "fixed": {"detection": "fixed", "word_ms": step, "chunk_ms": step,
                   "force_finish": True, "avoid_eos_while_reading": bool(rule)}}
        for rule in dict.fromkeys(avoid_eos if isinstance(avoid_eos, tuple) else (avoid_eos,))
    ]
    policies.append({"policy": "offline"})
    return notebook.spec(list(models), pair, [split], output, policies, corpus=corpus,
                         max_utterances=max_utterances)


def by_avoid_eos(summary: pd.DataFrame) -> dict[bool, pd.DataFrame]:
    """A :func:`trained_spec` summary of both rules as one per rule ({avoid_eos: rows}),
    each with the offline rows, as two sweeps would have given them."""
    rule = summary.get("param_avoid_eos_while_reading")
    if rule is None:
        raise ValueError("summary: no avoid_eos_while_reading column (not a trained_spec sweep)")
    offline = summary.policy == "offline"
    out = {}
    for value in (True, False):
        rows = summary[offline | (rule.astype(object) == value)]
        if (rows.policy != "offline").any():
            out[value] = rows.reset_index(drop=True)
    return out


def trained_table(summary: pd.DataFrame, offline: str, k_train: dict[str, object]) -> pd.DataFrame:
    """§3's models side by side on a :func:`trained_spec` sweep: one row per model (the
    offline one first), its k_train (``k_train``: label → k or list of k; none for the
    offline model), its BLEU with the whole input (offline greedy, :func:`offline_bleu`),
    that BLEU as a fraction of the offline model's (issue bar: ≥ 0.8), then BLEU and LAAL
    at every k_test."""
    greedy = {m: offline_bleu(summary, m).get("offline greedy", math.nan)
              for m in dict.fromkeys(summary.model)}
    p = points(summary)
    p = p[p.detection == "fixed"]
    ks = sorted(set(p.k))
    rows = []
    for model in [offline, *(m for m in dict.fromkeys(summary.model) if m != offline)]:
        kt = k_train.get(model)
        row = {"model": model,
               "k_train": "offline" if model == offline else
               (", ".join(map(str, kt)) if isinstance(kt, list) else str(kt)),
               "BLEU offline": greedy.get(model, math.nan),
               "/ offline model": greedy.get(model, math.nan) / greedy.get(offline, math.nan)}
        by_k = p[p.model == model].set_index("k")
        row.update({f"BLEU k={k}": float(by_k.BLEU.get(k, math.nan)) for k in ks})
        row.update({f"LAAL k={k}": float(by_k.LAAL.get(k, math.nan)) for k in ks})
        rows.append(row)
    return pd.DataFrame(rows)


def figure_trained(summary: pd.DataFrame, title: str):
    """§3's figure from a :func:`trained_spec` sweep: LAAL (left) and computation-aware LAAL
    (right) against BLEU, one curve per model (labels: k_test), a dotted line at the 1000 ms
    boundary between low and medium latency."""
    from simul.analysis import plots

    curves = points(summary)
    fig, axes = plots.panels(2)
    for ax, x in zip(axes, ["LAAL", "LAAL_CA"], strict=True):
        plots.tradeoff(curves, x=x, y="BLEU", hue="model", order_by="k",
                       annotate="k", ax=ax)
        ax.axvline(MEDIUM_LATENCY_MS, ls=":", lw=1, color="0.4")
    axes[0].get_legend().remove()
    fig.suptitle(title)
    return fig


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


def table1(summary: pd.DataFrame) -> pd.DataFrame:
    """Table 1 layout: one row per model, offline greedy and beam-5 BLEU (first its pair,
    when the summary has a ``pair`` column)."""
    rows = []
    pair = dict(zip(summary.model, summary.pair, strict=True)) if "pair" in summary else {}
    for model in dict.fromkeys(summary.model):
        bleu = offline_bleu(summary, model)
        rows.append({"pair": pair.get(model), "model": model,
                     "BLEU greedy": bleu.get("offline greedy", math.nan),
                     "BLEU beam-5": bleu.get("offline beam-5", math.nan)})
    columns = ["pair"] * bool(pair) + ["model", "BLEU greedy", "BLEU beam-5"]
    return pd.DataFrame(rows, columns=columns)


def table2(summary: pd.DataFrame) -> pd.DataFrame:
    """Table 2 layout: one row per (model, detection); the mean word-length difference
    hypothesis − reference (``length_diff``) per k, then the BLEU of each k beside it."""
    p = points(summary)
    ks = sorted(set(p.k))
    rows = []
    for (model, detection), g in p.groupby(["model", "detection"], sort=False):
        by_k = g.set_index("k")
        row = {"model": model, "detection": detection}
        row.update({f"k={k}": by_k.length_diff.get(k, math.nan) for k in ks})
        row.update({f"BLEU k={k}": by_k.BLEU.get(k, math.nan) for k in ks})
        rows.append(row)
    return pd.DataFrame(rows)


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


# --- the two language pairs: panel (a) beside panel (b) ------------------------------------

ROLES = ("transformer", "conformer")
"""The offline models of Figures 1–3, by role, in a notebook's ``pairs``."""


def panel(index: int, pair: str) -> str:
    """A panel's title as the paper names it: "(a) en-de", "(b) en-es", …"""
    return f"({'abcdefghijklmnopqrstuvwxyz'[index]}) {pair}"


def models_of(pairs: dict[str, dict]) -> list[str]:
    """Every model a notebook's ``pairs`` name (pair → {"transformer": model, "conformer":
    model, "trained": [models]}; a role left out or None is skipped), pair by pair."""
    return [m for roles in pairs.values()
            for m in (*(roles.get(r) for r in ROLES), *(roles.get("trained") or [])) if m]


def figure_detection(summary: pd.DataFrame, detection: str, title: str = ""):
    """Figure 1 (``"fixed"``) or 2 (``"adaptive"``) of a summary with a ``pair`` column: a
    row of panels per pair (the paper's (a), (b)), one panel per model, LAAL against BLEU,
    one point per k (labels), offline greedy and beam-5 as dashed lines."""
    from simul.analysis import plots

    p = points(summary)
    by_pair = [(pair, list(dict.fromkeys(g.model)))
               for pair, g in summary.groupby("pair", sort=False)]
    width = max(len(m) for _, m in by_pair)
    fig, axes = plots.panels(width, rows=len(by_pair))
    for index, (pair, models) in enumerate(by_pair):
        row = axes[index * width:(index + 1) * width]
        for ax, model in zip(row, models, strict=False):  # a pair with fewer models
            curve = p[(p.model == model) & (p.detection == detection)]
            plots.tradeoff(curve, x="LAAL", y="BLEU", style_by="detection", order_by="k",
                           ax=ax, annotate="k", title=f"{panel(index, pair)}: {model}")
            plots.reference_lines(ax, offline_bleu(summary, model))
        for ax in row[len(models):]:
            ax.set_visible(False)
    if title:
        fig.suptitle(title)
    return fig


def figure3(summary: pd.DataFrame, title: str = ""):
    """Figure 3 of a summary with a ``pair`` column: one panel per pair, every model and
    both detections (labels: k)."""
    from simul.analysis import plots

    p = points(summary)
    pairs = list(dict.fromkeys(summary.pair))
    fig, axes = plots.panels(len(pairs), width=6.4, height=4.8)
    for index, (ax, pair) in enumerate(zip(axes, pairs, strict=True)):
        plots.tradeoff(p[p.pair == pair], x="LAAL", y="BLEU", hue="model",
                       style_by="detection", order_by="k", annotate="k", ax=ax,
                       title=panel(index, pair))
    if title:
        fig.suptitle(title)
    return fig


def pair_models(pairs: dict[str, dict], role: str) -> dict[str, str]:
    """Pair → the label of its model in ``role`` ("transformer", "conformer"), for the pairs
    of a notebook's ``pairs`` (pair → {role: model, "trained": [...]}) that have one."""
    return {pair: label(models[role]) for pair, models in pairs.items() if models.get(role)}


def _harder_minus_easier(harder: dict[str, str], easier: dict[str, str], *, offline: bool):
    """Statistic: the smallest, over roles (and beams, or detections), of the easier pair's
    quality minus the harder pair's: offline BLEU (``offline``), else the mean curve gap in
    BLEU over the LAAL range both curves cover."""
    def statistic(rows: pd.DataFrame) -> float:
        gaps = []
        p = points(rows)
        for role in harder:
            h, e = harder[role], easier[role]
            if offline:
                a, b = offline_bleu(rows, h), offline_bleu(rows, e)
                gaps += [b[name] - a[name] for name in a if name in b]
            else:
                gaps += [_mean_gap(d[d.model == e], d[d.model == h])
                         for _, d in p.groupby("detection")]
        return smallest(gaps)
    return statistic


def pair_claims(summary: pd.DataFrame, pairs: dict[str, dict], *, harder: str = "en-de",
                easier: str = "en-es") -> list[Claim]:
    """§5's comparison of the two pairs on a summary of both pairs' :func:`spec` sweeps
    (models by label; the pairs decoded from the same source segments, so the bootstrap
    resamples them together, each setting scored against its own pair's references):
    "translation quality is lower for en-de" than for en-es, offline ("coherent with the
    results of the offline generations") and at matched latency with either detection.
    Superiority of easier − harder, the smallest over the architectures both pairs have
    (and over beams, or detections). None when the summary lacks a pair."""
    by_role = {r: pair_models(pairs, r) for r in ROLES}
    roles = [r for r, m in by_role.items() if harder in m and easier in m
             and {m[harder], m[easier]} <= set(summary.model)]
    if not roles:
        return []
    h, e = {r: by_role[r][harder] for r in roles}, {r: by_role[r][easier] for r in roles}
    p = points(summary)
    offline_text = "; ".join(
        f"{name}: {e[r]} {ob[name]:.1f} vs {h[r]} {oa[name]:.1f}"
        for r in roles for oa, ob in [(offline_bleu(summary, h[r]), offline_bleu(summary, e[r]))]
        for name in oa if name in ob)
    curve_text = "; ".join(
        f"{d}: {e[r]} − {h[r]} " + _gaps_text(g[g.model == e[r]], g[g.model == h[r]])
        for r in roles for d, g in p.groupby("detection", sort=False))
    f = FINDINGS
    return [
        f["P22-pair-offline"].measure(summary, _harder_minus_easier(h, e, offline=True),
                                      metrics=("LAAL",), detail=offline_text),
        f["P22-pair-simul"].measure(summary, _harder_minus_easier(h, e, offline=False),
                                    metrics=("LAAL",), detail=curve_text),
    ]


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

def _halves(upper: pd.DataFrame, lower: pd.DataFrame) -> tuple[float, float]:
    """The middle of the LAAL range two curves both cover, and its start (NaN, NaN when
    they share none)."""
    if upper.empty or lower.empty:
        return math.nan, math.nan
    lo = max(upper.LAAL.min(), lower.LAAL.min())
    hi = min(upper.LAAL.max(), lower.LAAL.max())
    return ((lo + hi) / 2, lo) if lo < hi else (math.nan, math.nan)


def _fixed_minus_adaptive_low(rows: pd.DataFrame) -> float:
    gaps = []
    for _, g in points(rows).groupby("model"):
        fixed, adaptive = g[g.detection == "fixed"], g[g.detection == "adaptive"]
        middle, lo = _halves(fixed, adaptive)
        gaps.append(_mean_gap(fixed, adaptive, min_x=lo, max_x=middle + 1e-9)
                    if not math.isnan(middle) else math.nan)
    return smallest(gaps)


def _adaptive_minus_fixed(rows: pd.DataFrame) -> float:
    """The smallest (over models) mean curve gap adaptive − fixed at LAAL ≥ 1000 ms."""
    p = points(rows)
    return smallest(_mean_gap(g[g.detection == "adaptive"], g[g.detection == "fixed"],
                              min_x=MEDIUM_LATENCY_MS) for _, g in p.groupby("model"))


def _largest_k_minus_offline(detection: str, *, far: bool):
    """BLEU of ``detection`` at its largest k_test − offline greedy, per model: the smallest
    (``far``: the largest, + 1)."""
    def statistic(rows: pd.DataFrame) -> float:
        gaps = []
        p = points(rows)
        for model, g in p[p.detection == detection].groupby("model"):
            greedy = offline_bleu(rows, model).get("offline greedy", math.nan)
            gaps.append(float(g.loc[g.k.idxmax()].BLEU - greedy))
        if far:
            return max(gaps) + BLEU_MARGIN if gaps and not any(map(math.isnan, gaps)) \
                else math.nan
        return smallest(gaps)
    return statistic


def _conformer_minus_transformer(conformer: str, transformer: str):
    def offline(rows: pd.DataFrame) -> float:
        c, t = offline_bleu(rows, conformer), offline_bleu(rows, transformer)
        return smallest(c[name] - t[name] for name in t if name in c)

    def simultaneous(rows: pd.DataFrame) -> float:
        p = points(rows)
        return smallest(_mean_gap(d[d.model == conformer], d[d.model == transformer])
                        for _, d in p.groupby("detection"))

    def latency(rows: pd.DataFrame) -> float:
        p = points(rows).set_index(["detection", "k"])
        c, t = p[p.model == conformer].LAAL, p[p.model == transformer].LAAL
        shared = c.index.intersection(t.index)
        return float((c[shared] - t[shared]).mean()) if len(shared) else math.nan

    def higher(rows: pd.DataFrame) -> float:
        gains = []
        for _, d in points(rows).groupby("detection"):
            c, t = d[d.model == conformer], d[d.model == transformer]
            middle, lo = _halves(c, t)
            if math.isnan(middle):
                gains.append(math.nan)
                continue
            gains.append(_mean_gap(c, t, min_x=middle) - _mean_gap(c, t, min_x=lo,
                                                                   max_x=middle + 1e-9))
        return smallest(gains)

    return offline, simultaneous, latency, higher


def claims(summary: pd.DataFrame, *, transformer: str | None = None,
           conformer: str | None = None, pair: str | None = None) -> list[Claim]:
    """P22 §5–§7's findings (:data:`FINDINGS`) on a summary of :func:`spec` sweeps (one or
    both models, by label), each with its paired-bootstrap evidence over the segments
    (curve gaps in BLEU at matched LAAL). ``pair``: the language pair of the summary, when
    the run has several (the paper's panels (a) and (b)); each id then ends in ``@pair``."""
    found = _claims(summary, transformer, conformer)
    return [tagged(c, f"@{pair}", pair) for c in found] if pair else found


def _claims(summary: pd.DataFrame, transformer: str | None,
            conformer: str | None) -> list[Claim]:
    f = FINDINGS
    p = points(summary)
    out = []
    by_model = list(p.groupby("model", sort=False))
    if by_model:
        out.append(f["P22-adaptive"].measure(
            summary, _adaptive_minus_fixed, metrics=("LAAL",),
            detail="; ".join(f"{model}: adaptive − fixed, LAAL ≥ {MEDIUM_LATENCY_MS:.0f} ms: "
                             + _gaps_text(g[g.detection == "adaptive"],
                                          g[g.detection == "fixed"], min_x=MEDIUM_LATENCY_MS)
                             for model, g in by_model)))
        out.append(f["P22-fixed-low"].measure(
            summary, _fixed_minus_adaptive_low, metrics=("LAAL",),
            detail="; ".join(f"{model}: fixed − adaptive, lower half: " + _gaps_text(
                g[g.detection == "fixed"], g[g.detection == "adaptive"],
                min_x=_halves(g[g.detection == "fixed"], g[g.detection == "adaptive"])[1],
                max_x=_halves(g[g.detection == "fixed"], g[g.detection == "adaptive"])[0]
                + 1e-9) for model, g in by_model)))
        if (summary.policy == "offline").any():
            detail = "; ".join(
                f"{model} at k {int(g.k.max())}: fixed {_at_k(g, 'fixed'):.1f}, adaptive "
                f"{_at_k(g, 'adaptive'):.1f}, offline greedy "
                f"{offline_bleu(summary, model).get('offline greedy', math.nan):.1f}"
                for model, g in by_model)
            out.append(f["P22-fixed-far"].measure(
                summary, _largest_k_minus_offline("fixed", far=True), metrics=("LAAL",),
                detail=detail))
            out.append(f["P22-adaptive-reach"].measure(
                summary, _largest_k_minus_offline("adaptive", far=False), metrics=("LAAL",),
                detail=detail))

    models = set(summary.model)
    if transformer in models and conformer in models:
        offline, simultaneous, latency, higher = _conformer_minus_transformer(conformer,
                                                                             transformer)
        t, c = offline_bleu(summary, transformer), offline_bleu(summary, conformer)
        out.append(f["P22-conformer-offline"].measure(
            summary, offline, metrics=("LAAL",),
            detail="; ".join(f"{n}: {c[n]:.1f} vs {t[n]:.1f}" for n in t if n in c)))
        out.append(f["P22-conformer-simul"].measure(
            summary, simultaneous, metrics=("LAAL",),
            detail="; ".join(f"{d}: Conformer − Transformer "
                             + _gaps_text(g[g.model == conformer], g[g.model == transformer])
                             for d in DETECTIONS if len(g := p[p.detection == d]))))
        out.append(f["P22-conformer-latency"].measure(
            summary, latency, metrics=("LAAL",),
            detail=f"mean LAAL Conformer − Transformer: {latency(summary):+.0f} ms"))
        out.append(f["P22-conformer-high"].measure(
            summary, higher, metrics=("LAAL",),
            detail=f"upper-half gain − lower-half gain, the smaller: {higher(summary):+.2f}"))
    out.append(f["P22-CA-overhead"].not_measured("a CAAT model (Liu et al. 2021b), which "
                                                 "simul does not ship"))
    return out


def _at_k(g: pd.DataFrame, detection: str) -> float:
    d = g[g.detection == detection]
    return float(d.loc[d.k.idxmax()].BLEU) if len(d) else math.nan


def _offline_minus_trained(offline: str, trained: list[str], detection: str = "fixed"):
    """The smallest mean curve gap offline − trained model, over the trained models and the
    latency regimes (:data:`REGIMES_MS`) the two curves share; ``detection``, k_test as the
    curve's points."""
    def statistic(rows: pd.DataFrame) -> float:
        p = points(rows)
        p = p[p.detection == detection]
        off = p[p.model == offline]
        gaps = [_mean_gap(off, p[p.model == t], min_x=lo, max_x=hi)
                for t in trained for lo, hi in REGIMES_MS.values()]
        known = [g for g in gaps if not math.isnan(g)]
        return min(known) if known else math.nan
    return statistic


def _trained_minus_offline_low(offline: str, trained: list[str]):
    """The largest mean curve gap trained − offline below 1000 ms (NaN when a trained
    model shares no LAAL there with the offline one)."""
    def statistic(rows: pd.DataFrame) -> float:
        p = points(rows)
        p = p[p.detection == "fixed"]
        off = p[p.model == offline]
        gaps = [_mean_gap(p[p.model == t], off, min_x=-math.inf, max_x=MEDIUM_LATENCY_MS)
                for t in trained]
        return max(gaps) if gaps and not any(map(math.isnan, gaps)) else math.nan
    return statistic


def _ktrain_step(by_k: dict[int, str], metric: str, detection: str = "fixed"):
    """Along the sorted k_train: BLEU, the mean gap at matched LAAL of each model over the
    next smaller k_train's; LAAL, the mean difference at the same k_test (``detection``)."""
    order = [by_k[k] for k in sorted(by_k)]

    def statistic(rows: pd.DataFrame) -> float:
        p = points(rows)
        p = p[p.detection == detection]
        steps = []
        for smaller, larger in zip(order, order[1:], strict=False):
            a, b = p[p.model == smaller], p[p.model == larger]
            if metric == "BLEU":
                steps.append(_mean_gap(b, a))
            else:
                shared = sorted(set(a.k) & set(b.k))
                steps += [float(b[b.k == k].LAAL.iloc[0] - a[a.k == k].LAAL.iloc[0])
                          for k in shared]
        return mean_known(steps)
    return statistic


def trained_claims(summary: pd.DataFrame, offline: str, trained: list[str], *,
                   eos_allowed: bool = False, pair: str | None = None) -> list[Claim]:
    """§5's findings on the offline-trained model against those trained in simultaneous
    mode, on a :func:`trained_spec` sweep (models by label): P22-offline-vs-trained (every
    latency regime) and simul's own P22-trained-low; k_train's effect is measured on P22's
    grid (:func:`grid_claims`). ``eos_allowed``: the sweep of ``trained_spec(...,
    avoid_eos=False)``, a setting the paper did not use: ids get :data:`EOS_VARIANT`'s
    suffix and every claim is simul's own. ``pair``: as for :func:`claims`."""
    f = FINDINGS
    p = points(summary)
    p = p[p.detection == "fixed"]
    off = p[p.model == offline]
    high = [f"{t}: offline − trained per regime: " + ", ".join(
        f"{name} {_mean_gap(off, p[p.model == t], min_x=lo, max_x=hi):+.1f}"
        for name, (lo, hi) in REGIMES_MS.items()) for t in trained]
    low = [f"{t}: trained − offline, LAAL < {MEDIUM_LATENCY_MS:.0f} ms: "
           + _gaps_text(p[p.model == t], off, min_x=-math.inf, max_x=MEDIUM_LATENCY_MS)
           for t in trained]
    out = [f["P22-offline-vs-trained"].measure(summary, _offline_minus_trained(offline, trained),
                                               metrics=("LAAL",), detail="; ".join(high)),
           f["P22-trained-low"].measure(summary, _trained_minus_offline_low(offline, trained),
                                        metrics=("LAAL",), detail="; ".join(low))]
    if eos_allowed:
        suffix, note = EOS_VARIANT
        out = [dataclasses.replace(c, id=c.id + suffix,
                                   finding=c.finding.variant(suffix, note, own=True))
               for c in out]
    return [tagged(c, f"@{pair}", pair) for c in out] if pair else out


# --- Figures 1–2 with the models trained in simultaneous mode (P22's grid) ------------------

GRID_LANE = "tools/train_grid.sh p22-{pair}"
"""The chain that trains a pair's grid (k_train × detection), as a missing model's note says."""


def grid_name(pair: str, k_train: int, detection: str) -> str:
    """The shipped name of the Transformer fine-tuned in simultaneous mode at ``k_train``
    with ``detection`` (the recipe of the same name)."""
    return f"transformer_bpe_{pair}_waitk{k_train}_{detection}"


def grid_models(pair: str, ks=KS) -> tuple[dict[str, dict[int, str]], dict[str, list[str]]]:
    """P22's grid on ``pair`` as it is shipped: ({detection: {k_train: model}} of the models
    there, {detection: [models not there]})."""
    shipped: dict[str, dict[int, str]] = {d: {} for d in DETECTIONS}
    missing: dict[str, list[str]] = {d: [] for d in DETECTIONS}
    for detection in DETECTIONS:
        for k in ks:
            name = grid_name(pair, k, detection)
            if notebook.missing_models([name]):
                missing[detection].append(name)
            else:
                shipped[detection][k] = name
    return shipped, missing


def grid_spec(models: list[str], pair: str, split: str, output: str, *, detection: str,
              word_ms: float, ks=KS, corpus=None, max_utterances=None) -> dict:
    """A sweep spec for the trained side of Figure 1 (``"fixed"``) or 2 (``"adaptive"``):
    ``models`` decoded by wait-k over words with the detection they were trained with, at
    every k_test, under the settings :func:`spec` gives the offline Transformer (A.1:
    avoid_eos_while_reading with adaptive detection only), so that their curves and the
    offline model's are one policy; offline greedy (their quality with the whole input)."""
    policies = [wait_k_words(detection, word_ms, ks, avoid_eos=detection == "adaptive"),
                {"policy": "offline", "grid": {"beam": [1]}}]
    return notebook.spec(list(models), pair, [split], output, policies, corpus=corpus,
                         max_utterances=max_utterances)


def _missing_text(names: list[str], pair: str) -> str:
    ks = [n.split("_waitk")[1].split("_")[0] for n in names]
    return (f"not trained yet: k_train {', '.join(ks)} ({GRID_LANE.format(pair=pair)})"
            if names else "")


def figure_grid(rows: dict[str, pd.DataFrame], detection: str, offline: dict[str, str],
                trained: dict[str, dict[int, str]], missing: dict[str, list[str]],
                title: str = ""):
    """Figure 1 (``"fixed"``) or 2 (``"adaptive"``) as the paper draws it: one panel per
    pair ((a), (b)), LAAL against BLEU, a curve per model trained in simultaneous mode
    (k_train; points: k_test), the offline-trained model under the same policy in solid
    black, its offline greedy BLEU dashed. ``rows``: pair → the summary rows of those
    models; ``offline``, ``trained`` (k_train → label) and ``missing`` (names) per pair;
    a panel says which models are missing."""
    import matplotlib.pyplot as plt

    from simul.analysis import plots

    fig, axes = plots.panels(len(rows), width=6.0, height=4.6)
    colors = plt.get_cmap("viridis")(np.linspace(0.0, 0.85, len(KS)))
    for index, (ax, (pair, summary)) in enumerate(zip(axes, rows.items(), strict=True)):
        p = points(summary)
        p = p[p.detection == detection]
        for color, k in zip(colors, KS, strict=True):
            model = trained.get(pair, {}).get(k)
            curve = p[p.model == model].sort_values("k") if model else p.iloc[:0]
            if len(curve):
                ax.plot(curve.LAAL, curve.BLEU, "o-", color=color, lw=1.2, ms=4,
                        label=f"k_train = {k}")
        curve = p[p.model == offline[pair]].sort_values("k")
        ax.plot(curve.LAAL, curve.BLEU, "o-", color="black", lw=1.8, ms=4,
                label="offline-trained")
        for _, point in curve.iterrows():
            ax.annotate(str(point.k), (point.LAAL, point.BLEU), textcoords="offset points",
                        xytext=(3, 3), fontsize=7, color="0.35")
        greedy = offline_bleu(summary, offline[pair]).get("offline greedy")
        if greedy is not None:
            ax.axhline(greedy, ls="--", lw=1, color="black", label="offline greedy")
        note = _missing_text(missing.get(pair, []), pair)  # under the title: no curve hides it
        ax.set_xlabel(plots.axis_label("LAAL"))
        ax.set_ylabel(plots.axis_label("BLEU"))
        ax.set_title(f"{panel(index, pair)}: {detection} detection"
                     + (f"\n{note}" if note else ""), fontsize=10)
        ax.legend(fontsize=7)
    if title:
        fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1, 0.93 if title else 1))  # room for the two-line titles
    return fig


def _widest_gap(by_k: dict[int, str], detection: str):
    """The mean curve gap at matched LAAL with the largest size, with its sign, over every
    two models of ``by_k`` (the one trained at the larger k_train − the smaller's)."""
    order = [by_k[k] for k in sorted(by_k)]

    def statistic(rows: pd.DataFrame) -> float:
        p = points(rows)
        p = p[p.detection == detection]
        gaps = [_mean_gap(p[p.model == b], p[p.model == a])
                for i, a in enumerate(order) for b in order[i + 1:]]
        if not gaps or any(map(math.isnan, gaps)):
            return math.nan
        return max(gaps, key=abs)
    return statistic


def _offline_minus_trained_curve(offline: str, trained: list[str], detection: str):
    """The smallest mean curve gap offline − trained model over the LAAL both cover."""
    def statistic(rows: pd.DataFrame) -> float:
        p = points(rows)
        p = p[p.detection == detection]
        return smallest(_mean_gap(p[p.model == offline], p[p.model == t]) for t in trained)
    return statistic


def _adaptive_minus_fixed_trained(fixed: dict[int, str], adaptive: dict[int, str]):
    """The smallest, over the k_train both detections have, mean curve gap at matched LAAL
    ≥ 1000 ms of the model trained and decoded with adaptive detection − with fixed."""
    def statistic(rows: pd.DataFrame) -> float:
        p = points(rows)
        return smallest(
            _mean_gap(p[(p.model == adaptive[k]) & (p.detection == "adaptive")],
                      p[(p.model == fixed[k]) & (p.detection == "fixed")],
                      min_x=MEDIUM_LATENCY_MS)
            for k in sorted(set(fixed) & set(adaptive)))
    return statistic


def grid_claims(summary: pd.DataFrame, offline: str, trained: dict[str, dict[int, str]],
                missing: dict[str, list[str]], *, pair: str,
                tag: bool = True) -> list[Claim]:
    """§5's findings on Figures 1–2 with the models trained in simultaneous mode, on the
    rows of the offline Transformer (its :func:`spec` sweep) and of the trained models
    (:func:`grid_spec` sweeps of both detections; models by label): the offline model above
    them at every regime (Fig. 1) and above or on par (Fig. 2), k_train's effect on quality
    and latency (Fig. 1), the adaptive curves close to each other (Fig. 2), adaptive above
    fixed (the trained models). ``trained``: detection → {k_train: label} of the models
    there; ``missing``: detection → the names not shipped. A claim whose models are not all
    there is "not measured", naming them and the chain that trains them. Each id ends in
    ``@pair`` unless ``tag`` is false."""
    f = FINDINGS
    fixed, adaptive = trained.get("fixed", {}), trained.get("adaptive", {})

    def needs(*detections: str) -> str:
        names = [n for d in detections for n in missing.get(d, [])]
        return (f"{', '.join(names)} ({GRID_LANE.format(pair=pair)}, then `simul models "
                "pack` and `eval --into-model`)") if names else ""

    def regimes(model: str, detection: str) -> str:
        p = points(summary)
        p = p[p.detection == detection]
        off = p[p.model == offline]
        return f"{model}: " + ", ".join(
            f"{name} {_mean_gap(off, p[p.model == model], min_x=lo, max_x=hi):+.1f}"
            for name, (lo, hi) in REGIMES_MS.items())

    out = []
    if needs("fixed"):
        out += [f[cid].not_measured(needs("fixed")) for cid in
                ("P22-grid-offline-vs-trained", "P22-ktrain-quality", "P22-ktrain-latency")]
    else:
        shown = f"k_train {', '.join(f'{k} ({m})' for k, m in sorted(fixed.items()))}"
        out.append(f["P22-grid-offline-vs-trained"].measure(
            summary, _offline_minus_trained(offline, list(fixed.values()), "fixed"),
            metrics=("LAAL",), detail="; ".join(regimes(m, "fixed") for m in fixed.values())))
        out += [f[cid].measure(summary, _ktrain_step(fixed, metric, "fixed"),
                               metrics=("LAAL",), detail=shown)
                for cid, metric in (("P22-ktrain-quality", "BLEU"),
                                    ("P22-ktrain-latency", "LAAL"))]
    if needs("adaptive"):
        out += [f[cid].not_measured(needs("adaptive")) for cid in
                ("P22-grid-offline-on-par", "P22-adaptive-ktrain")]
    else:
        p = points(summary)
        p = p[p.detection == "adaptive"]
        out.append(f["P22-grid-offline-on-par"].measure(
            summary, _offline_minus_trained_curve(offline, list(adaptive.values()),
                                                  "adaptive"),
            metrics=("LAAL",), detail="; ".join(
                f"offline − {m}: " + _gaps_text(p[p.model == offline], p[p.model == m])
                for m in adaptive.values())))
        out.append(f["P22-adaptive-ktrain"].measure(
            summary, _widest_gap(adaptive, "adaptive"), metrics=("LAAL",),
            detail=f"k_train {', '.join(map(str, sorted(adaptive)))}"))
    if needs("fixed", "adaptive"):
        out.append(f["P22-grid-adaptive"].not_measured(needs("fixed", "adaptive")))
    else:
        p = points(summary)
        out.append(f["P22-grid-adaptive"].measure(
            summary, _adaptive_minus_fixed_trained(fixed, adaptive), metrics=("LAAL",),
            detail="; ".join(
                f"k_train {k}: " + _gaps_text(
                    p[(p.model == adaptive[k]) & (p.detection == "adaptive")],
                    p[(p.model == fixed[k]) & (p.detection == "fixed")],
                    min_x=MEDIUM_LATENCY_MS) for k in sorted(set(fixed) & set(adaptive)))))
    return [tagged(c, f"@{pair}", pair) for c in out] if tag else out
