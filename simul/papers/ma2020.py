"""Ma, Pino, Koehn 2020 — "SimulMT to SimulST: adapting simultaneous text translation to
end-to-end simultaneous speech translation" (AACL 2020): wait-k on the decision points of a
fixed (every Δt ms) or flexible (oracle word / phoneme boundaries) pre-decision module.

Latency is the paper's time-based AL (eq. 1, reference length): the summary column
``AL_M20``, and ``AL_M20_CA`` with the computation time added to the delays (§2, Fig. 4).

Notebook: ``notebooks/ma2020.ipynb``.
"""

from __future__ import annotations

import math

import pandas as pd

from simul.analysis.claims import (
    BLEU_MARGIN,
    Claim,
    Finding,
    curve_gap,
    declare,
    mean_step,
    monotone_within,
    smallest_known,
    weakest_step,
)
from simul.analysis.tables import best_per_bucket, pareto_front
from simul.papers import notebook

STEPS_MS = [120, 200, 280, 360, 440]
"""Δt of the fixed pre-decision (Fig. 2a)."""
KS = list(range(1, 11))
"""Wait-k lagging on decision points (footnote 3: k = 1 … 10)."""
FLEXIBLE = ["word", "phoneme"]
"""Oracle flexible pre-decision triggers (eq. 3)."""
BUCKET_MS = 500.0
"""Fig. 3: the best setting per latency bucket of 500 ms."""
LATENCY = "AL_M20"
FIXED_BEST = "fixed Δt (best per bucket)"
WORD, PHONEME = "oracle word boundaries", "oracle phoneme boundaries"

KNOWN_GAPS = {
    "M20-word": "one unit per oracle word lags the fixed 280 ms steps: best BLEU per 500 ms "
                "AL_M20 bucket, word − fixed, -3.3, -6.1, -0.5, -1.3, -0.1, +1.4, -1.3 from "
                "2.5 to 5.5 s (2.2 German BPE units per English word on these segments; the word "
                "front starts above 2.5 s)",
    "M20-CA": "CA−NCA does not shrink with the step: 129, 231, 246, 211, 186 ms at Δt 120, 200, "
              "280, 360, 440 ms (it falls only from 280 ms on); the smallest step has the "
              "smallest gap",
}
"""The claims that the full run (``make reproduce``) contradicts, with why: strict xfails of
``tests/test_reproduce_full.py``. Measured on the en-de Conformer (corpus v3, 40 tst-COMMON
segments: M20-word −5.2 [−8.3, −0.9] BLEU, M20-CA +56.2 [+23.8, +91.1] ms; M20-AL-k, a gap on
the corpus-v2 en-es model, is undecided here); an undecided claim is not a gap."""


def spec(models: list[str], pair: str, splits: list[str], output: str, *, corpus=None,
         max_utterances=None, steps_ms=STEPS_MS, ks=KS, triggers=FLEXIBLE) -> dict:
    """A sweep spec: fixed pre-decision Δt × k, the flexible ``triggers`` × k, and offline
    greedy (the paper's upper bound)."""
    policies = [{"policy": "predecision", "fixed": {"trigger": "fixed"},
                 "grid": {"step_ms": [float(s) for s in steps_ms], "k": list(ks)}}]
    if triggers:
        policies.append({"policy": "predecision", "grid": {"trigger": list(triggers),
                                                           "k": list(ks)}})
    policies.append({"policy": "offline"})
    return notebook.spec(models, pair, splits, output, policies, corpus=corpus,
                         max_utterances=max_utterances)


def unit_durations(segments) -> dict[str, float]:
    """Mean duration (ms) of the oracle words and phonemes of ``segments`` (the paper:
    271 ms and 77 ms on MuST-C); segments without an alignment are left out."""
    aligned = [s.alignment for s in segments if s.alignment is not None]
    if not aligned:
        raise ValueError("unit_durations: no segment has an alignment (the oracle word and "
                         "phoneme times of the mini corpus)")
    out = {}
    for unit in ("words", "phonemes"):
        spans = [w for a in aligned for w in getattr(a, unit)]
        out[unit] = sum(w.end_ms - w.start_ms for w in spans) / len(spans) if spans \
            else float("nan")
    return out


def curves(summary: pd.DataFrame) -> pd.DataFrame:
    """The pre-decision rows with a ``pre-decision`` label per curve (``fixed Δt = 120 ms``,
    ``oracle word boundaries``, …), ``trigger``, ``step_ms`` (NaN for flexible triggers)
    and ``k``."""
    rows = summary[summary.policy == "predecision"].copy()
    rows["trigger"] = rows["param_trigger"]
    rows["step_ms"] = rows["param_step_ms"].where(rows.trigger == "fixed") \
        if "param_step_ms" in rows else float("nan")
    rows["k"] = rows["param_k"].astype(int)
    rows["pre-decision"] = [f"fixed Δt = {s:g} ms" if t == "fixed" else f"oracle {t} boundaries"
                            for t, s in zip(rows.trigger, rows.step_ms, strict=True)]
    order = {"fixed": 0, "word": 1, "phoneme": 2}
    rows["_order"] = rows.trigger.map(order)
    return rows.sort_values(["_order", "step_ms", "k"], kind="stable").drop(
        columns="_order").reset_index(drop=True)


def table(summary: pd.DataFrame, *, latency: str = LATENCY) -> pd.DataFrame:
    """Fig. 2a's points: one row per (pre-decision, k) with BLEU, NCA and CA latency and
    their difference; offline greedy last."""
    c = curves(summary)
    ca = f"{latency}_CA"
    out = pd.DataFrame({"pre-decision": c["pre-decision"], "k": c.k.astype("Int64"),
                        "BLEU": c.BLEU, latency: c[latency]})
    if ca in c:
        out[ca] = c[ca]
        out["CA − NCA"] = c[ca] - c[latency]
    off = summary[summary.policy == "offline"]
    if len(off):
        row = {"pre-decision": "offline greedy", "BLEU": float(off.BLEU.iloc[0]),
               latency: float(off[latency].iloc[0])}
        out = pd.concat([out, pd.DataFrame([row])], ignore_index=True)
    return out


def best_curves(summary: pd.DataFrame, *, latency: str = LATENCY,
                width_ms: float = BUCKET_MS) -> pd.DataFrame:
    """Fig. 3: the best-BLEU setting per ``width_ms`` latency bucket, for the fixed
    pre-decision (over every Δt and k) and for each flexible trigger (over k)."""
    c = curves(summary)
    c["approach"] = c["pre-decision"].where(c.trigger != "fixed", FIXED_BEST)
    best = best_per_bucket(c, latency=latency, quality="BLEU", width_ms=width_ms,
                           by=["approach"])
    best["_order"] = best.approach.map({FIXED_BEST: 0, WORD: 1, PHONEME: 2})
    best = best.sort_values(["_order", "bucket_ms"], kind="stable")
    best["setting"] = [f"Δt {s:g}, k {k}" if t == "fixed" else f"k {k}"
                       for t, s, k in zip(best.trigger, best.step_ms, best.k, strict=True)]
    return best[["approach", "bucket_ms", "setting", "step_ms", "k", "BLEU", latency]] \
        .reset_index(drop=True)


def ca_gap(summary: pd.DataFrame, *, latency: str = LATENCY) -> pd.DataFrame:
    """Fig. 4: CA − NCA latency of the fixed pre-decision per Δt — mean, min and max over
    the k of the grid, with the mean BLEU, NCA and CA latencies."""
    c = curves(summary)
    c = c[c.trigger == "fixed"]
    ca = f"{latency}_CA"
    if ca not in c:
        raise KeyError(f"summary has no {ca} column (records without elapsed times?)")
    c = c.assign(gap=c[ca] - c[latency])
    out = c.groupby("step_ms").agg(BLEU=("BLEU", "mean"), NCA=(latency, "mean"),
                                   CA=(ca, "mean"), gap_mean=("gap", "mean"),
                                   gap_min=("gap", "min"), gap_max=("gap", "max"),
                                   settings=("gap", "size"))
    out = out.reset_index().rename(columns={
        "BLEU": "BLEU (mean)", "NCA": f"{latency} (mean)", "CA": f"{ca} (mean)",
        "gap_mean": "CA − NCA (mean)",
        "gap_min": "CA − NCA (min)", "gap_max": "CA − NCA (max)"})
    return out


def _best_bleu_gap(rows: pd.DataFrame) -> float:
    """The smallest best BLEU (over k) of a fixed Δt above the smallest Δt − the smallest
    Δt's best BLEU."""
    c = curves(rows)
    best = c[c.trigger == "fixed"].groupby("step_ms").BLEU.max()
    smallest = best.index.min()
    return float(best.drop(smallest).min() - best[smallest])


def _front(c: pd.DataFrame, latency: str) -> pd.DataFrame:
    return pareto_front(c, x=latency, by=["trigger"])


def _word_minus_fixed(latency: str):
    """Word boundaries' quality–latency front − the fixed steps' front (over every Δt and
    k), mean BLEU gap at matched latency."""
    def statistic(rows: pd.DataFrame) -> float:
        c = curves(rows)
        return curve_gap(_front(c[c.trigger == "word"], latency),
                         _front(c[c.trigger == "fixed"], latency), x=latency)
    return statistic


def _word_minus_phoneme(rows: pd.DataFrame) -> float:
    best = curves(rows).groupby("trigger").BLEU.max()
    return float(best["word"] - best["phoneme"])


def _ca_gap_change(latency: str):
    """Mean CA − NCA latency of the largest Δt − that of the smallest."""
    def statistic(rows: pd.DataFrame) -> float:
        values = ca_gap(rows, latency=latency)["CA − NCA (mean)"]
        return float(values.iloc[-1] - values.iloc[0])
    return statistic


_FIG2A = "the offline Conformer: fixed Δt 120–440 ms × k 1–10, oracle word and phoneme "\
         "boundaries × k 1–10"
_MMA = ("the MMA models (λ 0–0.8) trained on 280 ms blocks, decoded at Δt 120, 280, 440 ms; "
        "those trained on oracle word ends, on word and phoneme boundaries")
_SIMILAR = ("the paper gives no number for 'similar': within 1 BLEU, the smallest difference "
            "P22 names a gain")
_MMA_STEPS = ("Similar to wait-k, MMA obtains very poor performance with a small step size of "
              "120ms. For other step sizes, MMA obtains similar latency-quality trade-offs, "
              "demonstrating some form of robustness to the step size")
_BOTH = ("As expected, both quality and latency increase with step size and lagging")

FINDINGS = declare(
    Finding("M20-AL-k", "M20", "§4, Fig. 2a", _BOTH, "AL_M20 from one k to the next (the mean "
            "step over every pre-decision, ms)", _FIG2A, "superiority", half="latency"),
    Finding("M20-BLEU-k", "M20", "§4, Fig. 2a", _BOTH, "BLEU from one k to the next (the mean "
            "step over every pre-decision)", _FIG2A, "superiority", half="quality"),
    Finding("M20-AL-step", "M20", "§4, Fig. 2a", _BOTH, "AL_M20 from one Δt to the next (the "
            "mean step over every k, ms)", _FIG2A, "superiority", half="latency",
            needs_full_run=False),
    Finding("M20-BLEU-step", "M20", "§4, Fig. 2a", _BOTH, "BLEU from one Δt to the next (the "
            "mean step over every k)", _FIG2A, "superiority", half="quality"),
    Finding("M20-small-step", "M20", "§4, Fig. 2a", "with step size 120ms, the performance is "
            "very poor even with large k", "the lowest best BLEU (over k) of the other Δt − "
            "that of the smallest Δt", _FIG2A, "superiority"),
    Finding("M20-best-step", "M20", "§4, Fig. 2a", "step size 280ms, which provides an "
            "effective latency-quality trade-off compared to other step sizes", "Δt 280 ms's "
            "curve over k − each other Δt's, mean BLEU gap at matched AL_M20 (the smallest)",
            _FIG2A, "non-inferiority", margin=BLEU_MARGIN, margin_reason=_SIMILAR),
    Finding("M20-word", "M20", "§4, Fig. 3", "For both wait-k and MMA, the flexible "
            "pre-decision module outperforms the fixed pre-decision module", "wait-k: the "
            "word boundaries' front − the fixed steps' front (every Δt and k), mean BLEU gap "
            "at matched AL_M20", _FIG2A, "superiority", half="first"),
    Finding("M20-phoneme", "M20", "§4", "Models using phoneme boundaries obtain very poor "
            "translation quality because those boundaries are too granular", "best BLEU over "
            "k, word − phoneme boundaries", _FIG2A, "superiority"),
    Finding("M20-CA", "M20", "§4.1, Fig. 4", "as the step size increases, the difference "
            "between the NCA and the CA latency shrinks", "mean CA − NCA AL_M20 of the largest "
            "Δt − that of the smallest (ms)", "the offline Conformer: fixed Δt 120–440 ms × "
            "k 1–10", "superiority", claimed="less"),
    Finding("M20-MMA-lambda", "M20", "§4, eq. 4", "The objective function to optimize is L = "
            "−log(P(Y|X)) + λ max(C(D), 0), where C is a latency metric (AL in this case)",
            "AL_M20 from one λ to the next at the trained Δt (the largest step, ms)", _MMA,
            "superiority", claimed="less"),
    Finding("M20-MMA-small-step", "M20", "§4, Fig. 2b", _MMA_STEPS, "the lowest best BLEU "
            "(over λ) of the other Δt − that of the smallest Δt", _MMA, "superiority",
            half="first"),
    Finding("M20-MMA-robust", "M20", "§4, Fig. 2b", _MMA_STEPS, "each Δt above the smallest "
            "− the trained Δt, mean BLEU gap of the λ curves at matched AL_M20 (the widest, "
            "with its sign)", _MMA, "equivalence",
            claimed="within", margin=BLEU_MARGIN, margin_reason=_SIMILAR, half="second"),
    Finding("M20-MMA-granularity", "M20", "§4", "comparing MMA and wait-k with phoneme "
            "boundaries, MMA is found to be more robust to the granularity of the "
            "pre-decision", "best BLEU word − phoneme boundaries: wait-k's − MMA's", _MMA,
            "superiority"),
    Finding("M20-MMA-word", "M20", "§4, Fig. 3", "For both wait-k and MMA, the flexible "
            "pre-decision module outperforms the fixed pre-decision module", "MMA: the word "
            "family on word boundaries' front − the fixed family's front (every Δt and λ), "
            "mean BLEU gap at matched AL_M20", _MMA, "superiority", half="second"),
    Finding("M20-MMA-word-best", "M20", "§4, Fig. 3", "The best latency-quality trade-offs are "
            "obtained with MMA and flexible pre-decision from word boundaries", "MMA on word "
            "boundaries' front − each other system's front, mean BLEU gap at matched AL_M20 "
            "(the smallest)", "Fig. 3's four systems: " + _FIG2A + "; " + _MMA,
            "superiority"),
)
"""M20's findings as the paper states them (:class:`simul.analysis.claims.Finding`)."""


def _best_step_gap(latency: str, step_ms: float = 280.0):
    """The smallest mean BLEU gap at matched latency of Δt ``step_ms``'s curve (over k)
    over each other Δt's; NaN when none shares a latency range with it."""
    def statistic(rows: pd.DataFrame) -> float:
        c = curves(rows)
        c = c[c.trigger == "fixed"]
        best = c[c.step_ms == step_ms]
        return smallest_known(curve_gap(best, g, x=latency)
                              for s, g in c.groupby("step_ms") if s != step_ms)
    return statistic


def claims(summary: pd.DataFrame, *, latency: str = LATENCY,
           width_ms: float = BUCKET_MS) -> list[Claim]:
    """M20 §4's findings on wait-k (:data:`FINDINGS`) on one (model, split) summary of
    :func:`spec`'s sweep, each with its paired-bootstrap evidence over the segments."""
    f = FINDINGS
    c = curves(summary)
    fixed = c[c.trigger == "fixed"]
    out = []
    measure = {"metrics": (latency, f"{latency}_CA") if f"{latency}_CA" in summary
               else (latency,)}

    # "both quality and latency increase with step size and lagging": a trend, the mean step
    for name, axis, other in (("k", "k", "pre-decision"), ("step", "step_ms", "k")):
        rows = c if axis == "k" else fixed
        failures, seen = monotone_within(rows, by=other, along=axis, metric=latency,
                                         label=lambda key, o=other: f"{o} {key}", sort=False)
        if not seen:
            continue
        for metric, cid in ((latency, f"M20-AL-{name}"), ("BLEU", f"M20-BLEU-{name}")):
            step = mean_step(by=other, along=axis, metric=metric)
            out.append(f[cid].measure(
                summary, lambda r, a=axis, s=step: s(
                    curves(r) if a == "k" else curves(r).query("trigger == 'fixed'")),
                detail=("; ".join(failures) or f"{seen} curves, all monotone in {latency}")
                if metric == latency else f"{seen} curves", **measure))

    best = fixed.groupby("step_ms").BLEU.max()
    if len(best) > 1:
        detail = "best BLEU over k per Δt: " + ", ".join(
            f"{s:g} ms {b:.1f}" for s, b in best.items())
        out.append(f["M20-small-step"].measure(summary, _best_bleu_gap, detail=detail,
                                               **measure))
        if 280.0 in best.index:
            gap = _best_step_gap(latency)
            out.append(f["M20-best-step"].measure(
                summary, gap, detail=f"Δt 280 ms − the other Δt, the smallest mean gap: "
                                     f"{gap(summary):+.2f}", **measure))

    bests = best_curves(summary, latency=latency, width_ms=width_ms)
    word = bests[bests.approach == WORD].set_index("bucket_ms").BLEU
    fixed_best = bests[bests.approach == FIXED_BEST].set_index("bucket_ms").BLEU
    if len(word) and len(fixed_best):
        shared = word.index.intersection(fixed_best.index)
        diff = word[shared] - fixed_best[shared]
        detail = ("best per " f"{width_ms:g} ms bucket, word − fixed BLEU: "
                  + ", ".join(f"{b:g} ms {d:+.1f}" for b, d in diff.items())
                  if len(shared) else "no latency bucket holds both")
        out.append(f["M20-word"].measure(summary, _word_minus_fixed(latency), detail=detail,
                                         **measure))

    flex = c[c.trigger != "fixed"].groupby("trigger").BLEU.max()
    if {"word", "phoneme"} <= set(flex.index):
        out.append(f["M20-phoneme"].measure(
            summary, _word_minus_phoneme,
            detail=f"best BLEU over k: phoneme {flex['phoneme']:.1f}, word {flex['word']:.1f}",
            **measure))

    if f"{latency}_CA" in c and fixed.step_ms.nunique() > 1:
        gaps = ca_gap(summary, latency=latency)
        values = gaps["CA − NCA (mean)"].tolist()
        out.append(f["M20-CA"].measure(
            summary, _ca_gap_change(latency), detail="mean CA − NCA per Δt: " + ", ".join(
                f"{s:g} ms {v:.0f}" for s, v in zip(gaps.step_ms, values, strict=True)),
            **measure))
    return out


# ---------------------------------------------------------------------------------- MMA
# The flexible policy (§3.1, Fig. 2b, the MMA halves of the word and phoneme curves, Fig. 3):
# models with a monotonic multihead attention decoder (simul.models.extensions.mma_decoder), one per
# latency weight λ, decoded by the mma policy. A family is trained on one pre-decision
# (fixed 280 ms blocks, or oracle word ends) and decoded on others too.

MMA_FIXED, MMA_WORD = "MMA, fixed Δt (best)", "MMA, oracle word boundaries"
WAITK_FIXED, WAITK_WORD = "wait-k, fixed Δt (best)", "wait-k, oracle word boundaries"
SYSTEMS = [WAITK_FIXED, WAITK_WORD, MMA_FIXED, MMA_WORD]
"""Fig. 3's four systems: {fixed, flexible} pre-decision × {wait-k, MMA} policy."""


def latency_weights(models) -> dict[str, float]:
    """λ of each MMA model (its card's ``monotonic_attention.latency_weight``)."""
    from simul.models import registry

    out = {}
    for m in models:
        info = registry.info(m).get("monotonic_attention")
        if info is None:
            raise ValueError(f"{m}: not an MMA model (its simul.json has no "
                             "monotonic_attention); the MMA panels need transformer_mma models")
        out[str(m)] = float(info["latency_weight"])
    return out


def mma_spec(models: list[str], pair: str, splits: list[str], output: str, *, corpus=None,
             max_utterances=None, steps_ms=None, triggers=()) -> dict:
    """MMA models decoded by the ``mma`` policy on fixed triggers at each Δt of ``steps_ms``
    and on the oracle ``triggers``."""
    policies = []
    if steps_ms:
        policies.append({"policy": "mma", "fixed": {"trigger": "fixed"},
                         "grid": {"step_ms": [float(s) for s in steps_ms]}})
    if triggers:
        policies.append({"policy": "mma", "grid": {"trigger": list(triggers)}})
    if not policies:
        raise ValueError("mma_spec: give steps_ms, triggers or both")
    return notebook.spec(models, pair, splits, output, policies, corpus=corpus,
                         max_utterances=max_utterances)


def mma_curves(summary: pd.DataFrame, weights: dict[str, float]) -> pd.DataFrame:
    """The ``mma`` rows with ``trigger``, ``step_ms`` (NaN for oracle triggers), ``λ`` (of
    each model, ``weights``) and the ``pre-decision`` label of :func:`curves`, sorted by
    pre-decision and λ."""
    rows = summary[summary.policy == "mma"].copy()
    unknown = sorted(set(rows.model) - set(weights))
    if unknown:
        raise ValueError(f"mma_curves: no latency weight for {unknown}")
    rows["trigger"] = rows["param_trigger"]
    rows["step_ms"] = rows["param_step_ms"].where(rows.trigger == "fixed")
    rows["λ"] = rows.model.map(weights)
    rows["pre-decision"] = [f"fixed Δt = {s:g} ms" if t == "fixed" else f"oracle {t} boundaries"
                            for t, s in zip(rows.trigger, rows.step_ms, strict=True)]
    rows["_order"] = rows.trigger.map({"fixed": 0, "word": 1, "phoneme": 2})
    return rows.sort_values(["_order", "step_ms", "λ"], kind="stable").drop(
        columns="_order").reset_index(drop=True)


def mma_table(summary: pd.DataFrame, weights: dict[str, float], *,
              latency: str = LATENCY) -> pd.DataFrame:
    """Fig. 2b and the MMA points of the flexible panels: one row per (pre-decision, λ)."""
    c = mma_curves(summary, weights)
    return pd.DataFrame({"pre-decision": c["pre-decision"], "model": c.model, "λ": c["λ"],
                         "BLEU": c.BLEU, latency: c[latency]})


def systems(waitk: pd.DataFrame, mma: pd.DataFrame, weights: dict[str, float]) -> pd.DataFrame:
    """Every setting of the four systems of Fig. 3 (``system``: :data:`SYSTEMS`), from the
    wait-k sweep (:func:`spec`) and the MMA sweep (:func:`mma_spec`) on the same segments:
    MMA on fixed triggers from the models trained on fixed blocks, on word triggers from
    those trained on word ends."""
    w = curves(waitk)
    w = w[w.trigger.isin(["fixed", "word"])].assign(
        system=lambda d: d.trigger.map({"fixed": WAITK_FIXED, "word": WAITK_WORD}),
        setting_label=lambda d: [f"Δt {s:g}, k {k}" if t == "fixed" else f"k {k}"
                                 for t, s, k in zip(d.trigger, d.step_ms, d.k, strict=True)])
    m = mma_curves(mma, weights)
    m = m[m.trigger.isin(["fixed", "word"])].assign(
        system=lambda d: d.trigger.map({"fixed": MMA_FIXED, "word": MMA_WORD}),
        setting_label=lambda d: [f"Δt {s:g}, λ {lam:g}" if t == "fixed" else f"λ {lam:g}"
                                 for t, s, lam in zip(d.trigger, d.step_ms, d["λ"],
                                                      strict=True)])
    return pd.concat([w, m], ignore_index=True)


def flexible(waitk: pd.DataFrame, mma: pd.DataFrame, weights: dict[str, float]) -> pd.DataFrame:
    """The oracle-boundary curves of both policies (Fig. 2's word and phoneme panels):
    ``curve`` (``wait-k, oracle word boundaries``, ``MMA, …``) and ``order`` (k for wait-k,
    λ for MMA: the order the points are joined in)."""
    w = curves(waitk)
    w = w[w.trigger != "fixed"].assign(curve=lambda d: "wait-k, " + d["pre-decision"],
                                       order=lambda d: d.k.astype(float))
    m = mma_curves(mma, weights)
    m = m[m.trigger != "fixed"].assign(curve=lambda d: "MMA, " + d["pre-decision"],
                                       order=lambda d: d["λ"])
    return pd.concat([w, m], ignore_index=True)


def best_systems(waitk: pd.DataFrame, mma: pd.DataFrame, weights: dict[str, float], *,
                 latency: str = LATENCY, width_ms: float = BUCKET_MS) -> pd.DataFrame:
    """Fig. 3 with its four systems: the best-BLEU setting of each per ``width_ms`` bucket."""
    s = systems(waitk, mma, weights)
    best = best_per_bucket(s, latency=latency, quality="BLEU", width_ms=width_ms,
                           by=["system"])
    best["_order"] = best.system.map({n: i for i, n in enumerate(SYSTEMS)})
    best = best.sort_values(["_order", "bucket_ms"], kind="stable")
    return best[["system", "bucket_ms", "setting_label", "BLEU", latency]].rename(
        columns={"setting_label": "setting"}).reset_index(drop=True)


def _at_step(c: pd.DataFrame, step_ms: float) -> pd.DataFrame:
    return c[(c.trigger == "fixed") & (c.step_ms == step_ms)]


def _split_rows(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    return rows[rows.policy != "mma"], rows[rows.policy == "mma"]


def _granularity_gap(weights, latency):
    """(wait-k's best BLEU on word − on phoneme boundaries) − MMA's: how much more wait-k
    loses to the finer granularity."""
    def statistic(rows: pd.DataFrame) -> float:
        waitk, mma = _split_rows(rows)
        w = curves(waitk).groupby("trigger").BLEU.max()
        m = mma_curves(mma, weights).groupby("trigger").BLEU.max()
        return float((w["word"] - w["phoneme"]) - (m["word"] - m["phoneme"]))
    return statistic


def _word_mma_margin(weights, latency):
    """MMA + word boundaries' front − the best other system's, at matched latency: the
    smallest of its mean BLEU gaps to the three other fronts."""
    def statistic(rows: pd.DataFrame) -> float:
        waitk, mma = _split_rows(rows)
        s = systems(waitk, mma, weights)
        fronts = {n: pareto_front(g, x=latency, by=["system"]) for n, g in s.groupby("system")}
        if MMA_WORD not in fronts or len(fronts) < 2:
            return float("nan")
        gaps = [curve_gap(fronts[MMA_WORD], f, x=latency) for n, f in fronts.items()
                if n != MMA_WORD]
        return float(min(gaps))
    return statistic


def _mma_small_step(weights):
    """MMA's lowest best BLEU (over λ) at a Δt above the smallest − at the smallest."""
    def statistic(rows: pd.DataFrame) -> float:
        m = mma_curves(_split_rows(rows)[1], weights)
        best = m[m.trigger == "fixed"].groupby("step_ms").BLEU.max()
        return float(best.drop(best.index.min()).min() - best[best.index.min()])
    return statistic


def _mma_robust(weights, latency, trained_step_ms):
    """The widest (with its sign) mean BLEU gap at matched latency of each MMA λ-curve at
    a Δt above the smallest over the trained Δt's curve."""
    def statistic(rows: pd.DataFrame) -> float:
        m = mma_curves(_split_rows(rows)[1], weights)
        m = m[m.trigger == "fixed"]
        trained = m[m.step_ms == trained_step_ms]
        gaps = [curve_gap(g, trained, x=latency) for s, g in m.groupby("step_ms")
                if s not in (trained_step_ms, m.step_ms.min())]
        known = [g for g in gaps if not math.isnan(g)]
        return max(known, key=abs) if known else math.nan
    return statistic


def _mma_word_minus_fixed(weights, latency):
    """MMA: the word family on word boundaries' front − the fixed family's front."""
    def statistic(rows: pd.DataFrame) -> float:
        waitk, mma = _split_rows(rows)
        s = systems(waitk, mma, weights)
        fronts = {n: pareto_front(g, x=latency, by=["system"]) for n, g in s.groupby("system")}
        if MMA_WORD not in fronts or MMA_FIXED not in fronts:
            return math.nan
        return curve_gap(fronts[MMA_WORD], fronts[MMA_FIXED], x=latency)
    return statistic


def mma_claims(waitk: pd.DataFrame, mma: pd.DataFrame, weights: dict[str, float], *,
               latency: str = LATENCY, trained_step_ms: float = 280.0) -> list[Claim]:
    """M20 §4's MMA findings (:data:`FINDINGS`) on the wait-k sweep (:func:`spec`) and the
    MMA sweep (:func:`mma_spec`) of the same model's segments, each with its
    paired-bootstrap evidence (the records of both sweeps resampled together)."""
    f = FINDINGS
    rows = pd.concat([waitk, mma], ignore_index=True)
    measure = {"metrics": (latency,)}
    m = mma_curves(mma, weights)
    out = []

    fixed = _at_step(m, trained_step_ms)
    if fixed["λ"].nunique() > 1:
        along = fixed.sort_values("λ")
        detail = f"{latency} by λ at Δt {trained_step_ms:g} ms: " + ", ".join(
            f"{lam:g} → {v:.0f}" for lam, v in zip(along["λ"], along[latency], strict=True))
        step = weakest_step(by="step_ms", along="λ", metric=latency, increasing=False)
        out.append(f["M20-MMA-lambda"].measure(
            rows, lambda r: step(_at_step(mma_curves(_split_rows(r)[1], weights),
                                          trained_step_ms)), detail=detail, **measure))

    steps = sorted(set(m[m.trigger == "fixed"].step_ms.dropna()))
    best = m[m.trigger == "fixed"].groupby("step_ms").BLEU.max()
    detail = "MMA best BLEU over λ per Δt: " + ", ".join(f"{s:g} ms {b:.1f}"
                                                         for s, b in best.items())
    if len(steps) >= 2:
        out.append(f["M20-MMA-small-step"].measure(rows, _mma_small_step(weights),
                                                   detail=detail, **measure))
    else:
        out.append(f["M20-MMA-small-step"].not_measured(
            "the MMA models decoded at two Δt or more (mma_steps_ms)", detail))
    if len(steps) >= 3 and trained_step_ms in steps:
        out.append(f["M20-MMA-robust"].measure(
            rows, _mma_robust(weights, latency, trained_step_ms), detail=detail, **measure))
    else:
        out.append(f["M20-MMA-robust"].not_measured(
            "the MMA models decoded at the trained Δt and another above the smallest "
            "(mma_steps_ms: 120, 280, 440)", detail))

    w = curves(waitk)
    if {"word", "phoneme"} <= set(w.trigger) and {"word", "phoneme"} <= set(m.trigger):
        wb, mb = w.groupby("trigger").BLEU.max(), m.groupby("trigger").BLEU.max()
        out.append(f["M20-MMA-granularity"].measure(
            rows, _granularity_gap(weights, latency),
            detail=f"best BLEU word / phoneme: wait-k {wb['word']:.1f} / "
                   f"{wb['phoneme']:.1f}, MMA {mb['word']:.1f} / {mb['phoneme']:.1f}",
            **measure))

    s = systems(waitk, mma, weights)
    if {MMA_WORD, MMA_FIXED} <= set(s.system):
        out.append(f["M20-MMA-word"].measure(rows, _mma_word_minus_fixed(weights, latency),
                                             detail="MMA: word family on word boundaries "
                                                    "against the fixed family", **measure))
    if MMA_WORD in set(s.system) and s.system.nunique() > 1:
        out.append(f["M20-MMA-word-best"].measure(
            rows, _word_mma_margin(weights, latency),
            detail="systems: " + ", ".join(sorted(set(s.system))), **measure))
    return out
