"""P22's first idea: offline-trained models decoded simultaneously, wait-k over detected
source words (fixed or adaptive detection) applied at inference time only (§3, policy
``wait_k_words``): the sweep of the offline models (:func:`spec`), Tables 1–2, Figures 1–3,
the two language pairs side by side, and §5–§7's claims on them (:func:`claims`,
:func:`pair_claims`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from simul.analysis.claims import BLEU_MARGIN, Claim, smallest, tagged
from simul.papers import notebook
from simul.papers.papi2022.common import (
    DETECTIONS,
    FINDINGS,
    KS,
    MEDIUM_LATENCY_MS,
    _gaps_text,
    _mean_gap,
    offline_bleu,
    panel,
    points,
    wait_k_words,
)


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


# --- the two language pairs: panel (a) beside panel (b) ------------------------------------

ROLES = ("transformer", "conformer")
"""The offline models of Figures 1–3, by role, in a notebook's ``pairs``."""


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
