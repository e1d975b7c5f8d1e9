"""Ma, Pino, Koehn 2020 — "SimulMT to SimulST: adapting simultaneous text translation to
end-to-end simultaneous speech translation" (AACL 2020): wait-k on the decision points of a
fixed (every Δt ms) or flexible (oracle word / phoneme boundaries) pre-decision module.

Latency is the paper's time-based AL (eq. 1, reference length): the summary column
``AL_M20``, and ``AL_M20_CA`` with the computation time added to the delays (§2, Fig. 4).

Notebook: ``notebooks/ma2020.ipynb``.
"""

from __future__ import annotations

import pandas as pd

from simul.claims import Claim, curve_gap, evaluate, monotone_within, weakest_step
from simul.papers import notebook
from simul.tables import best_per_bucket, pareto_front

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


def claims(summary: pd.DataFrame, *, latency: str = LATENCY,
           width_ms: float = BUCKET_MS) -> list[Claim]:
    """§4's claims on one (model, split) summary of :func:`spec`'s sweep, each with its
    paired-bootstrap evidence over the segments (:func:`simul.claims.evaluate`)."""
    c = curves(summary)
    fixed = c[c.trigger == "fixed"]
    out = []
    measure = {"metrics": (latency, f"{latency}_CA") if f"{latency}_CA" in summary
               else (latency,)}

    # "both quality and latency increase with step size and lagging" (Fig. 2a)
    for name, axis, other in (("k", "k", "pre-decision"), ("step", "step_ms", "k")):
        rows = c if axis == "k" else fixed
        failures, seen = monotone_within(rows, by=other, along=axis, metric=latency,
                                         label=lambda key, o=other: f"{o} {key}", sort=False)
        if not seen:
            continue
        what = "k (every pre-decision)" if axis == "k" else "the step size Δt (every k)"
        step = weakest_step(by=other, along=axis, metric=latency)
        evidence = evaluate(summary, lambda r, a=axis, f=step: f(
            curves(r) if a == "k" else curves(r).query("trigger == 'fixed'")),
            claimed="greater", **measure)
        # k counts triggers: at phoneme boundaries (≈ 80 ms apart) neighbouring k read
        # almost the same audio, and a handful of utterances cannot order their AL
        out.append(Claim.measured(f"M20-AL-{name}", f"latency grows with {what} (weakest "
                                  "step, ms)", evidence,
                                  "; ".join(failures) or f"{seen} curves, all monotone",
                                  needs_full_run=axis == "k"))

    # "with step size 120ms, the performance is very poor even with large k"
    best = fixed.groupby("step_ms").BLEU.max()
    if len(best) > 1:
        smallest = best.index.min()
        detail = "best BLEU over k per Δt: " + ", ".join(
            f"{s:g} ms {b:.1f}" for s, b in best.items())
        out.append(Claim.measured(
            "M20-small-step", f"small steps hurt quality: the smallest Δt ({smallest:g} ms) "
            "has the lowest best BLEU (next lowest − it, BLEU)",
            evaluate(summary, _best_bleu_gap, claimed="greater", **measure), detail,
            needs_full_run=True))

    # Fig. 3, compared at matched latency: the fronts, not bucket maxima of 50 vs 10 settings
    bests = best_curves(summary, latency=latency, width_ms=width_ms)
    word = bests[bests.approach == WORD].set_index("bucket_ms").BLEU
    fixed_best = bests[bests.approach == FIXED_BEST].set_index("bucket_ms").BLEU
    if len(word) and len(fixed_best):
        shared = word.index.intersection(fixed_best.index)
        diff = word[shared] - fixed_best[shared]
        detail = ("best per " f"{width_ms:g} ms bucket, word − fixed BLEU: "
                  + ", ".join(f"{b:g} ms {d:+.1f}" for b, d in diff.items())
                  if len(shared) else "no latency bucket holds both")
        out.append(Claim.measured(
            "M20-word", "word boundaries beat fixed steps (quality–latency fronts, mean BLEU "
            f"gap at matched {latency})",
            evaluate(summary, _word_minus_fixed(latency), claimed="greater", **measure),
            detail, needs_full_run=True))

    flex = c[c.trigger != "fixed"].groupby("trigger").BLEU.max()
    if {"word", "phoneme"} <= set(flex.index):
        out.append(Claim.measured(
            "M20-phoneme", "phoneme boundaries are too fine: their best BLEU is below the "
            "word boundaries' (word − phoneme, BLEU)",
            evaluate(summary, _word_minus_phoneme, claimed="greater", **measure),
            f"best BLEU over k: phoneme {flex['phoneme']:.1f}, word {flex['word']:.1f}",
            needs_full_run=True))

    if f"{latency}_CA" in c and fixed.step_ms.nunique() > 1:
        gaps = ca_gap(summary, latency=latency)
        values = gaps["CA − NCA (mean)"].tolist()
        out.append(Claim.measured(
            "M20-CA", "the difference between CA and NCA latency shrinks as the step size "
            "grows (largest Δt − smallest Δt, ms)",
            evaluate(summary, _ca_gap_change(latency), claimed="less", **measure),
            "mean CA − NCA per Δt: " + ", ".join(
                f"{s:g} ms {v:.0f}" for s, v in zip(gaps.step_ms, values, strict=True)),
            needs_full_run=True))
    return out


# ---------------------------------------------------------------------------------- MMA
# The flexible policy (§3.1, Fig. 2b, the MMA halves of the word and phoneme curves, Fig. 3):
# models with a monotonic multihead attention decoder (simul.models.mma_decoder), one per
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


def mma_claims(waitk: pd.DataFrame, mma: pd.DataFrame, weights: dict[str, float], *,
               latency: str = LATENCY, trained_step_ms: float = 280.0) -> list[Claim]:
    """The MMA claims of §4 on the wait-k sweep (:func:`spec`) and the MMA sweep
    (:func:`mma_spec`) of the same model's segments, each with its paired-bootstrap
    evidence (the records of both sweeps resampled together)."""
    rows = pd.concat([waitk, mma], ignore_index=True)
    measure = {"metrics": (latency,)}
    m = mma_curves(mma, weights)
    out = []

    # M20 eq. 4 and Fig. 2b: a larger latency weight λ gives a lower latency
    fixed = _at_step(m, trained_step_ms)
    if fixed["λ"].nunique() > 1:
        along = fixed.sort_values("λ")
        detail = f"{latency} by λ at Δt {trained_step_ms:g} ms: " + ", ".join(
            f"{lam:g} → {v:.0f}" for lam, v in zip(along["λ"], along[latency], strict=True))
        step = weakest_step(by="step_ms", along="λ", metric=latency, increasing=False)
        out.append(Claim.measured(
            "M20-MMA-lambda", f"latency falls as the latency weight λ grows (Δt "
            f"{trained_step_ms:g} ms, the largest step from one λ to the next, ms)",
            evaluate(rows, lambda r: step(_at_step(mma_curves(_split_rows(r)[1], weights),
                                                   trained_step_ms)),
                     claimed="less", **measure), detail, needs_full_run=True))

    # "comparing MMA and wait-k with phoneme boundaries, MMA is found to be more robust to
    # the granularity of the pre-decision"
    w = curves(waitk)
    if {"word", "phoneme"} <= set(w.trigger) and {"word", "phoneme"} <= set(m.trigger):
        wb, mb = w.groupby("trigger").BLEU.max(), m.groupby("trigger").BLEU.max()
        out.append(Claim.measured(
            "M20-MMA-granularity", "MMA is more robust than wait-k to the pre-decision's "
            "granularity: it loses less best BLEU from word to phoneme boundaries (wait-k's "
            "loss − MMA's, BLEU)",
            evaluate(rows, _granularity_gap(weights, latency), claimed="greater", **measure),
            f"best BLEU word / phoneme: wait-k {wb['word']:.1f} / {wb['phoneme']:.1f}, MMA "
            f"{mb['word']:.1f} / {mb['phoneme']:.1f}", needs_full_run=True))

    # "the best trade-offs are obtained with MMA and flexible pre-decision from word
    # boundaries" (§4, Fig. 3)
    s = systems(waitk, mma, weights)
    if MMA_WORD in set(s.system) and s.system.nunique() > 1:
        out.append(Claim.measured(
            "M20-MMA-word-best", "MMA with oracle word boundaries has the best trade-off: its "
            f"front above every other system's (the smallest mean BLEU gap at matched "
            f"{latency})",
            evaluate(rows, _word_mma_margin(weights, latency), claimed="greater", **measure),
            "systems: " + ", ".join(sorted(set(s.system))), needs_full_run=True))
    return out
