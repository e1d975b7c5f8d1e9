"""P22's second idea: the offline model beside the same model trained in simultaneous mode
(§3's question, answered in §5): the Conformers fine-tuned at k_train 3, 7 and multi-path
(:func:`trained_spec`, :func:`trained_table`, :func:`figure_trained`,
:func:`trained_claims`) and P22's grid, the Transformer fine-tuned at every k_train with each
detection (:func:`grid_models`, :func:`grid_spec`, :func:`figure_grid`, :func:`grid_claims`).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from simul.analysis.claims import Claim, mean_known, smallest, tagged
from simul.papers import notebook
from simul.papers.notebook import EOS_VARIANT
from simul.papers.papi2022.common import (
    DETECTIONS,
    FINDINGS,
    KS,
    MEDIUM_LATENCY_MS,
    REGIMES_MS,
    _gaps_text,
    _mean_gap,
    offline_bleu,
    panel,
    points,
    wait_k_words,
)

TRAINED_MODELS = ["conformer_bpe_en-es_waitk3", "conformer_bpe_en-es_waitk7",
                  "conformer_bpe_en-es_multipath"]
"""§3's other side: the offline Conformer fine-tuned in simultaneous mode (recipes of the same
names, :mod:`simul.models.extensions.waitk_decoder`), k_train 3, 7 and multi-path."""


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
    suffix and every claim is simul's own. ``pair``: as for
    :func:`~simul.papers.papi2022.offline.claims`."""
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
    every k_test, under the settings :func:`~simul.papers.papi2022.offline.spec` gives the
    offline Transformer (A.1: avoid_eos_while_reading with adaptive detection only), so that
    their curves and the offline model's are one policy; offline greedy (their quality with
    the whole input)."""
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
    rows of the offline Transformer (its :func:`~simul.papers.papi2022.offline.spec` sweep)
    and of the trained models (:func:`grid_spec` sweeps of both detections; models by
    label): the offline model above them at every regime (Fig. 1) and above or on par
    (Fig. 2), k_train's effect on quality and latency (Fig. 1), the adaptive curves close to
    each other (Fig. 2), adaptive above fixed (the trained models). ``trained``: detection →
    {k_train: label} of the models there; ``missing``: detection → the names not shipped. A
    claim whose models are not all there is "not measured", naming them and the chain that
    trains them. Each id ends in ``@pair`` unless ``tag`` is false."""
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
