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

from simul.claims import BLEU_MARGIN, Claim, evaluate, fmt
from simul.papers import notebook

KS = [3, 5, 7, 9, 11]
"""k_test of Figures 1–3 (source words to wait for)."""
DETECTIONS = ("fixed", "adaptive")
MEDIUM_LATENCY_MS = 1000.0
"""Footnote 6 (after Anastasopoulos et al. 2021): low < 1000 ms ≤ medium < 2000 ms ≤ high."""

TRAINED_MODELS = ["conformer_bpe_en-es_waitk3", "conformer_bpe_en-es_waitk7",
                  "conformer_bpe_en-es_multipath"]
"""§3's other side: the offline Conformer fine-tuned in simultaneous mode (recipes of the same
names, :mod:`simul.models.waitk_decoder`), k_train 3, 7 and multi-path."""

KNOWN_GAPS: dict[str, str] = {}
"""The claims that the full run (``make reproduce``) contradicts, with why: strict xfails of
``tests/test_reproduce_full.py``. Measured on the corpus-v2 models: none (analysis in
``docs/reference/claims.md``); an undecided claim is not a gap."""


def label(model: str) -> str:
    """The name a sweep gives a model in its summary: a shipped name, or the directory's."""
    return Path(model).name


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


def encoder_type(model: str) -> str:
    """The encoder of a shipped model or an ESPnet model directory (its config.yaml)."""
    from simul.models import registry

    return str(registry.config(model).get("encoder", ""))


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
    step = float(round(word_ms))
    common = {"chunk_ms": step, "force_finish": True}
    if avoid_eos_fixed is None:
        avoid_eos_fixed = fixed_avoid_eos(model)
    policies = [
        {"policy": "wait_k_words", "grid": {"k": list(ks)},
         "fixed": {"detection": "fixed", "word_ms": step, **common,
                   "avoid_eos_while_reading": avoid_eos_fixed}},
        {"policy": "wait_k_words", "grid": {"k": list(ks)},
         "fixed": {"detection": "adaptive", **common, "avoid_eos_while_reading": True}},
        {"policy": "offline", "grid": {"beam": [1, 5]}},
    ]
    return notebook.spec([model], pair, [split], output, policies, corpus=corpus,
                         max_utterances=max_utterances)


def training_schedule(model: str) -> dict:
    """How a model was trained in simultaneous mode (``simultaneous_training`` of its
    simul.json: k_train, word_ms, detection); empty for an offline-trained model."""
    from simul.models import registry

    info = registry.info(model)
    if not info:
        raise ValueError(f"{model}: no {registry.INFO_FILE} in {registry.resolve(model)}")
    return info.get("simultaneous_training") or {}


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


def _offline_minus_trained(offline: str, trained: list[str], *, low: bool):
    """The smallest (``low``: the largest trained − offline, as its negation) mean curve
    gap offline − trained model over LAAL ≥ 1000 ms (``low``: below 1000 ms), fixed
    detection, k_test as the curve's points."""
    def statistic(rows: pd.DataFrame) -> float:
        p = points(rows)
        p = p[p.detection == "fixed"]
        off = p[p.model == offline]
        if low:
            gaps = [_mean_gap(p[p.model == t], off, min_x=-math.inf, max_x=MEDIUM_LATENCY_MS)
                    for t in trained]
            return max(gaps) if gaps and not any(map(math.isnan, gaps)) else math.nan
        return _smallest(_mean_gap(off, p[p.model == t], min_x=MEDIUM_LATENCY_MS)
                         for t in trained)
    return statistic


EOS_VARIANT = ("-eos", "[EOS allowed while reading, not A.2's setting] ")
"""Claim id suffix and text prefix of the claims measured with avoid_eos_while_reading off
(``eos_allowed=True`` of :func:`trained_claims` and :func:`simul.papers.han2020.ktest_claims`)."""


def trained_claims(summary: pd.DataFrame, offline: str, trained: list[str], *,
                   eos_allowed: bool = False, pair: str | None = None) -> list[Claim]:
    """§3 and §7's answer to the title on a :func:`trained_spec` sweep (models by label):
    the offline-trained model is on par with or better than the ones trained in
    simultaneous mode at medium and high latency (smallest mean curve gap offline −
    trained, BLEU at matched LAAL ≥ 1000 ms; non-inferiority within
    :data:`~simul.claims.BLEU_MARGIN`: holds when the gap's interval lies above −1 BLEU,
    contradicted when it lies below), and a trained model may win at low latency (largest
    mean gap trained − offline below 1000 ms; superiority). ``eos_allowed``: the sweep
    of ``trained_spec(..., avoid_eos=False)``; the ids get :data:`EOS_VARIANT`'s suffix and
    the texts its prefix. ``pair``: as for :func:`claims`."""
    return [tagged(c, pair) for c in _trained_claims(summary, offline, trained, eos_allowed)]


def _trained_claims(summary: pd.DataFrame, offline: str, trained: list[str],
                    eos_allowed: bool) -> list[Claim]:
    suffix, prefix = EOS_VARIANT if eos_allowed else ("", "")
    p = points(summary)
    p = p[p.detection == "fixed"]
    off = p[p.model == offline]
    high = [f"{t}: offline − trained, LAAL ≥ {MEDIUM_LATENCY_MS:.0f} ms: "
            + _gaps_text(off, p[p.model == t], min_x=MEDIUM_LATENCY_MS) for t in trained]
    low = [f"{t}: trained − offline, LAAL < {MEDIUM_LATENCY_MS:.0f} ms: "
           + _gaps_text(p[p.model == t], off, min_x=-math.inf, max_x=MEDIUM_LATENCY_MS)
           for t in trained]
    # "on par with or better": non-inferiority, within BLEU_MARGIN (its docstring says why)
    return [
        Claim.measured(f"P22-offline-vs-trained{suffix}", f"{prefix}the offline-trained model "
                       "is on par with or better than the models trained in simultaneous mode "
                       "at medium/high latency (LAAL ≥ 1000 ms; non-inferiority, margin 1 "
                       "BLEU: smallest mean curve gap offline − trained ≥ −1)",
                       evaluate(summary, _offline_minus_trained(offline, trained, low=False),
                                claimed="greater", margin=BLEU_MARGIN, metrics=("LAAL",)),
                       "; ".join(high), needs_full_run=True),
        Claim.measured(f"P22-trained-low{suffix}", f"{prefix}a model trained in simultaneous "
                       "mode may beat the offline one at low latency (LAAL < 1000 ms; "
                       "largest mean curve gap trained − offline, BLEU)",
                       evaluate(summary, _offline_minus_trained(offline, trained, low=True),
                                claimed="greater", metrics=("LAAL",)),
                       "; ".join(low), needs_full_run=True),
    ]


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
    from simul import plots

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


def _smallest(values: Iterable[float]) -> float:
    """The smallest value; NaN when there is none or one is NaN."""
    values = list(values)
    return min(values) if values and not any(map(math.isnan, values)) else math.nan


def _adaptive_minus_fixed(rows: pd.DataFrame) -> float:
    """The smallest (over models) mean curve gap adaptive − fixed at LAAL ≥ 1000 ms."""
    p = points(rows)
    return _smallest(_mean_gap(g[g.detection == "adaptive"], g[g.detection == "fixed"],
                               min_x=MEDIUM_LATENCY_MS) for _, g in p.groupby("model"))


def _conformer_minus_transformer(conformer: str, transformer: str):
    def offline(rows: pd.DataFrame) -> float:
        c, t = offline_bleu(rows, conformer), offline_bleu(rows, transformer)
        return _smallest(c[name] - t[name] for name in t if name in c)

    def simultaneous(rows: pd.DataFrame) -> float:
        p = points(rows)
        return _smallest(_mean_gap(d[d.model == conformer], d[d.model == transformer])
                         for _, d in p.groupby("detection"))

    return offline, simultaneous


def claims(summary: pd.DataFrame, *, transformer: str | None = None,
           conformer: str | None = None, pair: str | None = None) -> list[Claim]:
    """§5–§7's claims on a summary of :func:`spec` sweeps (one or both models, by label),
    each comparison with its paired-bootstrap evidence over the segments
    (:func:`simul.claims.evaluate`; curve gaps in BLEU at matched LAAL). ``pair``: the
    language pair of the summary, when the run has several (the paper's panels (a) and
    (b)); each id then ends in ``@pair`` (:func:`tagged`)."""
    return [tagged(c, pair) for c in _claims(summary, transformer, conformer)]


def tagged(claim: Claim, pair: str | None) -> Claim:
    """``claim`` of one language pair of several: ``@pair`` after its id, the pair before
    its text (unchanged when ``pair`` is None)."""
    if pair is None:
        return claim
    return dataclasses.replace(claim, id=f"{claim.id}@{pair}", text=f"{pair}: {claim.text}")


def _claims(summary: pd.DataFrame, transformer: str | None,
            conformer: str | None) -> list[Claim]:
    p = points(summary)
    out = []

    # Figures 1–3 (§3: the adaptive strategy's quality "is higher", fixed is better only at
    # low latency): adaptive > fixed once the latency is medium or high (superiority)
    details = [f"{model}: adaptive − fixed, LAAL ≥ {MEDIUM_LATENCY_MS:.0f} ms: "
               + _gaps_text(g[g.detection == "adaptive"], g[g.detection == "fixed"],
                            min_x=MEDIUM_LATENCY_MS)
               for model, g in p.groupby("model", sort=False)]
    if details:
        evidence = evaluate(summary, _adaptive_minus_fixed, claimed="greater",
                            metrics=("LAAL",))
        out.append(Claim.measured("P22-adaptive", "adaptive word detection > fixed at "
                                  "medium/high latency (LAAL ≥ 1000 ms; smallest mean curve "
                                  "gap, BLEU)", evidence, "; ".join(details),
                                  needs_full_run=True))

    # Table 1, Figure 3 (§6.1: "Conformer outperforms Transformer"): Conformer > Transformer
    models = set(summary.model)
    if transformer in models and conformer in models:
        offline, simultaneous = _conformer_minus_transformer(conformer, transformer)
        t, c = offline_bleu(summary, transformer), offline_bleu(summary, conformer)
        pairs = [(name, c[name], t[name]) for name in t if name in c]
        out.append(Claim.measured(
            "P22-conformer-offline", "Conformer > Transformer offline, greedy and beam-5 "
            "(Table 1; smallest difference, BLEU)",
            evaluate(summary, offline, claimed="greater", metrics=("LAAL",)),
            "; ".join(f"{n}: {a:.1f} vs {b:.1f}" for n, a, b in pairs), needs_full_run=True))
        details = [f"{detection}: Conformer − Transformer "
                   + _gaps_text(d[d.model == conformer], d[d.model == transformer])
                   for detection in DETECTIONS if len(d := p[p.detection == detection])]
        out.append(Claim.measured(
            "P22-conformer-simul", "Conformer > Transformer in simultaneous, fixed and "
            "adaptive detection (Figure 3; smallest mean curve gap, BLEU)",
            evaluate(summary, simultaneous, claimed="greater", metrics=("LAAL",)),
            "; ".join(details), needs_full_run=True))

    # Figures 5–6: computation-aware ≥ non-computation-aware
    worse, seen = [], 0
    for metric in ("LAAL", "AL"):
        if f"{metric}_CA" not in summary:
            continue
        both = summary.dropna(subset=[metric, f"{metric}_CA"])
        seen += len(both)
        worse += [f"{r.model} {r.setting}: {metric}_CA {r[f'{metric}_CA']:.0f} < "
                  f"{metric} {r[metric]:.0f}" for _, r in both.iterrows()
                  if r[f"{metric}_CA"] < r[metric]]
    out.append(Claim("P22-CA", "computation-aware latency ≥ its ideal form (LAAL_CA ≥ LAAL, "
                     "AL_CA ≥ AL) for every setting", not worse and seen > 0,
                     "; ".join(worse) or f"{seen} (setting, metric) pairs, all CA ≥ NCA; mean "
                     f"LAAL_CA − LAAL {fmt([(summary.LAAL_CA - summary.LAAL).mean()])} ms"
                     if seen else "no computation-aware latency in the summary"))
    return out


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
    from simul import plots

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
    from simul import plots

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
        return _smallest(gaps)
    return statistic


def pair_claims(summary: pd.DataFrame, pairs: dict[str, dict], *, harder: str = "en-de",
                easier: str = "en-es") -> list[Claim]:
    """§5's comparison of the two pairs on a summary of both pairs' :func:`spec` sweeps
    (models by label; the pairs decoded from the same source segments, so the bootstrap
    resamples them together, each setting scored against its own pair's references):
    "translation quality is lower for en-de" than for en-es, offline ("coherent with the
    results of the offline generations") and at matched latency with either detection
    ("justified by … different word ordering"). Superiority of easier − harder, the smallest
    over the architectures both pairs have (and over beams, or detections). None when the
    summary lacks a pair."""
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
    return [
        Claim.measured("P22-pair-offline", f"offline quality is lower for {harder} than for "
                       f"{easier} (§5, Table 1: greedy and beam-5, every architecture; "
                       f"smallest difference {easier} − {harder}, BLEU)",
                       evaluate(summary, _harder_minus_easier(h, e, offline=True),
                                claimed="greater", metrics=("LAAL",)),
                       offline_text, needs_full_run=True),
        Claim.measured("P22-pair-simul", f"simultaneous quality is lower for {harder} than "
                       f"for {easier} at matched latency (§5, Figures 1–2: fixed and adaptive "
                       f"detection, every architecture; smallest mean curve gap {easier} − "
                       f"{harder} at matched LAAL, BLEU)",
                       evaluate(summary, _harder_minus_easier(h, e, offline=False),
                                claimed="greater", metrics=("LAAL",)),
                       curve_text, needs_full_run=True),
    ]
