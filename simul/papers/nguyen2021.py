"""Nguyen, Estève, Besacier 2021 — "An empirical study of end-to-end simultaneous speech
translation decoding strategies" (ICASSP 2021): wait-k with stride and N units per write.

Notebook: ``notebooks/nguyen2021.ipynb``.
"""

from __future__ import annotations

import dataclasses
import math

import pandas as pd
from scipy.stats import spearmanr

from simul.claims import (
    BLEU_MARGIN,
    Claim,
    curve_gap,
    evaluate,
    monotone_within,
    weakest_step,
)
from simul.papers import notebook
from simul.tables import pareto_front

KS = [100, 200]
"""Table 1: k, frames (10 ms) read before the first write."""
STRIDES = [10, 20]
"""Table 1: s, frames read between two writes."""
NS = [1, 2, 3]
"""Table 1: N, units written per step."""
FIGURE2_SETTINGS = [{"k": 100, "s": 10, "n": 2}, {"k": 200, "s": 10, "n": 2},
                    {"k": 200, "s": 20, "n": 2}, {"k": 200, "s": 20, "n": 1}]
"""Figure 2's (k, s, N)."""
CASCADE_KS = [1, 2, 3, 4, 5, 7]
"""Figure 3: the cascade's k, stable source words read before its MT writes."""
CASCADE_CHUNK_MS = 250.0
"""Figure 3: audio the cascade's ASR reads between two decisions (ms)."""
FIGURE3_X = "AL_orig"
"""Figure 3's latency: the "original AL" (Ma et al. 2019, hypothesis length, one term per
word) in which the cascade's authors measured it."""

KNOWN_GAPS = {
    "N21-BPE": "k=100, s=10, N=2 writes 20 units/s, far ahead of the speech: bpe-large closes "
               "its hypothesis with an early '?' (0.44 of the reference's words, 21/40 under "
               "half; chars 0.80, 3/40) and its last word is charged at |X|: AL 1887 vs 604 ms",
    "N21-e2e-low": "the end-to-end BLSTM is the weaker system offline (34.8 BLEU at k=400, s=20, "
                   "N=1 against the cascade's 41.1 at k=7): at AL_orig 1.3–2.8 s it reaches "
                   "24.5–31.7 BLEU where the cascade reaches 26.8–40.8 (e2e − cascade −7.0 "
                   "[−13.3, −1.3] over 1.5–2.7 s)",
    "N21-e2e-low-multipath": "as N21-e2e-low, against the cascade whose MT is the multi-path "
                             "one: 31.5–40.5 BLEU at AL_orig 1.5–2.5 s (−7.9 [−13.5, −2.4])",
}
"""The claims that the full run (``make reproduce``) contradicts, with why: strict xfails of
``tests/test_reproduce_full.py``. Measured on the corpus-v2 models (40 tst-COMMON segments;
analysis in ``docs/reference/claims.md``); an undecided claim is not a gap."""


def spec(models: list[str], pair: str, splits: list[str], output: str, *, ks=KS,
         strides=STRIDES, ns=NS, settings=None, maxlenratio: float = 1.0, corpus=None,
         max_utterances=None) -> dict:
    """A sweep spec: wait-k over the grid ``ks`` × ``strides`` × ``ns`` (or the listed
    ``settings``, dicts of k, s, n) and offline greedy."""
    entry = {"policy": "wait_k_frames", "fixed": {"maxlenratio": maxlenratio}}
    entry.update({"settings": settings} if settings else
                 {"grid": {"k": list(ks), "s": list(strides), "n": list(ns)}})
    return notebook.spec(models, pair, splits, output, [entry, {"policy": "offline"}],
                         corpus=corpus, max_utterances=max_utterances)


def cascade_spec(cascade: str, pair: str, split: str, output: str, *, ks=CASCADE_KS,
                 chunk_ms: float = CASCADE_CHUNK_MS, corpus=None, max_utterances=None) -> dict:
    """A sweep spec for Figure 3's cascade (an ASR + text MT model directory,
    :mod:`simul.models.cascade`): the ``cascade`` policy at every k of ``ks``."""
    entry = {"policy": "cascade", "grid": {"k": list(ks)}, "fixed": {"chunk_ms": chunk_ms}}
    return notebook.spec([cascade], pair, [split], output, [entry], corpus=corpus,
                         max_utterances=max_utterances)


def figure3_curves(rows: pd.DataFrame, *, x: str = FIGURE3_X) -> pd.DataFrame:
    """Figure 3's two curves from the rows of one split: ``e2e``, the quality–latency front
    (BLEU against ``x``) of the end-to-end model's wait-k settings (N21 picks the (k, s, N)
    with latencies close to the cascade's), and ``cascade``, every k of the cascade, both
    sorted by ``x``; column ``system`` names the curve."""
    e2e = pareto_front(rows[rows.policy == "wait_k_frames"], x=x, by=["model"])
    cascade = rows[rows.policy == "cascade"].dropna(subset=[x, "BLEU"]).sort_values(x)
    return pd.concat([e2e.assign(system="e2e"), cascade.assign(system="cascade")],
                     ignore_index=True)


def latency_regimes(rows: pd.DataFrame, *, x: str = FIGURE3_X) -> tuple[float, float, float]:
    """(low, middle, high): the latency range both Figure 3 curves cover and its middle,
    which splits it into the low- and high-latency regimes of the paper's conclusion; NaNs
    when the curves do not overlap."""
    c = figure3_curves(rows, x=x)
    e2e, cascade = c[c.system == "e2e"][x], c[c.system == "cascade"][x]
    if e2e.empty or cascade.empty:
        return math.nan, math.nan, math.nan
    low, high = max(e2e.min(), cascade.min()), min(e2e.max(), cascade.max())
    if low > high:
        return math.nan, math.nan, math.nan
    return float(low), float((low + high) / 2), float(high)


def _e2e_minus_cascade(low: float, high: float, x: str = FIGURE3_X):
    """Mean BLEU of the e2e front − the cascade's, at matched ``x`` between ``low`` and
    ``high``."""
    def statistic(rows: pd.DataFrame) -> float:
        c = figure3_curves(rows, x=x)
        return curve_gap(c[c.system == "e2e"], c[c.system == "cascade"], x=x, min_x=low,
                         max_x=high)
    return statistic


MULTIPATH_VARIANT = ("-multipath", "[cascade with the multi-path MT] ")
"""Claim id suffix and text prefix of Figure 3's claims on the cascade whose MT was
re-trained for simultaneous mode (multi-path wait-k; :func:`figure3_claims`)."""


def figure3_claims(rows: pd.DataFrame, *, x: str = FIGURE3_X,
                   multipath: bool = False) -> list[Claim]:
    """§4.3's conclusion on one split's rows (the e2e model's wait-k settings and the
    cascade's k): "e2e is better in low latency regimes and cascade is better in higher
    latency regimes", each as the BLEU gap e2e − cascade at matched original AL over its
    half of the latency range both curves cover, bootstrapped over the segments.
    ``multipath``: the rows' cascade is the one with the multi-path MT (the paper's
    second curve); ids and texts marked with :data:`MULTIPATH_VARIANT`."""
    suffix, prefix = MULTIPATH_VARIANT if multipath else ("", "")
    return [dataclasses.replace(c, id=c.id + suffix, text=prefix + c.text)
            for c in _figure3_claims(rows, x=x)]


def _figure3_claims(rows: pd.DataFrame, *, x: str) -> list[Claim]:
    low, middle, high = latency_regimes(rows, x=x)
    if math.isnan(low):
        c = figure3_curves(rows, x=x)
        ranges = {s: f"{g[x].min():.0f}–{g[x].max():.0f} ms" for s, g in c.groupby("system")}
        detail = f"no common {x} range ({ranges})"
        nothing = evaluate(rows, lambda _: math.nan, claimed="greater", metrics=[x])
        return [Claim.measured("N21-e2e-low", "e2e beats the cascade at low latency", nothing,
                               detail, needs_full_run=True),
                Claim.measured("N21-cascade-high", "the cascade beats e2e at high latency",
                               nothing, detail, needs_full_run=True)]
    out = []
    for cid, text, lo, hi, claimed in (
            ("N21-e2e-low", "e2e beats the cascade at low latency", low, middle, "greater"),
            ("N21-cascade-high", "the cascade beats e2e at high latency", middle, high,
             "less")):
        evidence = evaluate(rows, _e2e_minus_cascade(lo, hi, x), claimed=claimed, metrics=[x])
        out.append(Claim.measured(
            cid, f"{text} (e2e − cascade BLEU at matched {x}, {lo:.0f}–{hi:.0f} ms)",
            evidence, f"common {x} range {low:.0f}–{high:.0f} ms", needs_full_run=True))
    return out


def table(summary: pd.DataFrame, *, latency: str = "AL") -> pd.DataFrame:
    """Table 1/2 layout: one row per (k, s, N) sorted by AL on the first split, BLEU and
    AL per split; offline greedy last."""
    rows = summary.assign(k=summary.get("param_k"), s=summary.get("param_s"),
                          N=summary.get("param_n"))
    wide = rows.pivot_table(index=["policy", "k", "s", "N"], columns="split",
                            values=["BLEU", latency], dropna=False).dropna(how="all")
    wide.columns = [f"{m} {split}" for m, split in wide.columns]
    wide = wide.reset_index()
    splits = list(dict.fromkeys(summary.split))
    simul = wide[wide.policy == "wait_k_frames"].sort_values(f"{latency} {splits[0]}")
    offline = rows[rows.policy == "offline"]
    off = {"policy": "offline"}
    for split in splits:
        r = offline[offline.split == split]
        off[f"BLEU {split}"] = float(r.BLEU.iloc[0]) if len(r) else float("nan")
        off[f"{latency} {split}"] = float(r[latency].iloc[0]) if len(r) else float("nan")
    cols = ["k", "s", "N"] + [f"{m} {s}" for s in splits for m in ("BLEU", latency)]
    out = pd.concat([simul, pd.DataFrame([off])], ignore_index=True)
    out["setting"] = out.policy.where(out.policy == "offline", "wait-k")
    out[["k", "s", "N"]] = out[["k", "s", "N"]].astype("Int64")
    return out[["setting", *cols]]


def _offline_minus_best(rows: pd.DataFrame) -> float:
    """Offline greedy BLEU − the best wait-k setting's."""
    return float(rows[rows.policy == "offline"].BLEU.iloc[0]
                 - rows[rows.policy == "wait_k_frames"].BLEU.max())


def _spearman(rows: pd.DataFrame) -> float:
    g = rows[rows.policy == "wait_k_frames"]
    return float(spearmanr(g.AL, g.BLEU).statistic) if len(g) > 2 else float("nan")


def _char_minus_bpe_gaps(rows: pd.DataFrame, metric: str) -> list[float]:
    """``metric`` of the char model − the BPE model's, for every BPE model and setting
    that the char model ran too."""
    f = rows[rows.policy == "wait_k_frames"]
    char = f[f.model.str.contains("char")].set_index("setting")[metric]
    bpe = f[~f.model.str.contains("char")]
    bpe = bpe[bpe.setting.isin(char.index)]
    return (char.reindex(bpe.setting).to_numpy() - bpe[metric].to_numpy()).tolist()


def _char_minus_bpe(rows: pd.DataFrame) -> float:
    """The smallest AL(char) − AL(BPE) over the BPE models and settings."""
    gaps = _char_minus_bpe_gaps(rows, "AL")
    return float(min(gaps)) if gaps else float("nan")


def _char_minus_bpe_bleu(rows: pd.DataFrame) -> float:
    """The mean BLEU(char) − BLEU(BPE) over the BPE models and settings."""
    gaps = _char_minus_bpe_gaps(rows, "BLEU")
    return float(sum(gaps) / len(gaps)) if gaps else float("nan")


N2S20 = ({"N": 2, "s": 20}, {"N": 1, "s": 10})
"""§4.1 (c): writing two characters per step with the bigger stride against one character
with the smaller stride, at each k."""


def _n2s20_minus_n1s10(metric: str):
    """The largest, over k, ``metric`` at (N=2, s=20) − at (N=1, s=10)."""
    two, one = N2S20

    def statistic(rows: pd.DataFrame) -> float:
        g = rows[rows.policy == "wait_k_frames"]
        gaps = []
        for _, at_k in g.groupby("k"):
            a = at_k[(at_k.N == two["N"]) & (at_k.s == two["s"])][metric]
            b = at_k[(at_k.N == one["N"]) & (at_k.s == one["s"])][metric]
            if len(a) and len(b):
                gaps.append(float(a.iloc[0] - b.iloc[0]))
        return max(gaps) if gaps else float("nan")
    return statistic


def claims(grid: pd.DataFrame, figure2: pd.DataFrame | None = None) -> list[Claim]:
    """§4's claims on a Table 1 summary (wait_k_frames rows and offline, one split) and on
    Figure 2's (char and BPE models, same settings), each with its paired-bootstrap
    evidence over the segments (:func:`simul.claims.evaluate`): superiority claims, but
    N21-offline ("≥": non-inferiority within :data:`~simul.claims.BLEU_MARGIN`)."""
    grid = grid.rename(columns={"param_k": "k", "param_s": "s", "param_n": "N"})
    g = grid[grid.policy == "wait_k_frames"]
    out = []
    for name, others, increasing in (("k", ["s", "N"], True), ("s", ["k", "N"], True),
                                     ("N", ["k", "s"], False)):
        failures, seen = monotone_within(g, by=others, along=name, increasing=increasing)
        if not seen:
            continue
        verb = "grows" if increasing else "falls"
        evidence = evaluate(g, weakest_step(by=others, along=name, increasing=increasing),
                            claimed="greater" if increasing else "less")
        out.append(Claim.measured(f"N21-AL-{name}", f"AL {verb} with {name} (weakest step, "
                                  "ms)", evidence,
                                  "; ".join(failures) or f"{seen} groups, all monotone"))
    if len(g) > 2:
        evidence = evaluate(grid, _spearman, claimed="greater")
        out.append(Claim.measured("N21-BLEU-AL", "BLEU grows with AL (Spearman ρ over the "
                                  "settings)", evidence, f"ρ(AL, BLEU) = {evidence.effect:.2f}",
                                  needs_full_run=True))
    # §4.1 (c): N=2 with s=20 is slightly lower in AL, yet slightly lower in BLEU, than N=1
    # with s=10, at each k (Table 1, lines 6–7 and 9–10)
    two, one = N2S20
    pairs = []
    for k, at_k in g.groupby("k"):
        a = at_k[(at_k.N == two["N"]) & (at_k.s == two["s"])]
        b = at_k[(at_k.N == one["N"]) & (at_k.s == one["s"])]
        if len(a) and len(b):
            pairs.append(f"k={k:g}: AL {a.AL.iloc[0]:.0f} vs {b.AL.iloc[0]:.0f}, "
                         f"BLEU {a.BLEU.iloc[0]:.1f} vs {b.BLEU.iloc[0]:.1f}")
    if pairs:
        for metric, what, unit in (("AL", "lower AL", "ms"), ("BLEU", "lower BLEU", "BLEU")):
            out.append(Claim.measured(
                f"N21-N2s20-{metric}", f"writing N=2 units with stride s=20 gives {what} than "
                f"N=1 with s=10, at each k (largest (N=2, s=20) − (N=1, s=10), {unit})",
                evaluate(grid, _n2s20_minus_n1s10(metric), claimed="less"),
                "(N=2, s=20) vs (N=1, s=10): " + "; ".join(pairs), needs_full_run=True))
    offline = grid[grid.policy == "offline"].BLEU
    if len(offline) and len(g):
        # "≥": non-inferiority, within BLEU_MARGIN (its docstring says why 1 BLEU)
        evidence = evaluate(grid, _offline_minus_best, claimed="greater", margin=BLEU_MARGIN)
        out.append(Claim.measured("N21-offline", "offline greedy BLEU ≥ every simultaneous "
                                  "setting's (non-inferiority, margin 1 BLEU: offline − best "
                                  "≥ −1)", evidence,
                                  f"offline {offline.iloc[0]:.1f}, best wait-k {g.BLEU.max():.1f}"))
    if figure2 is not None and len(figure2):
        f = figure2[figure2.policy == "wait_k_frames"]
        char = f[f.model.str.contains("char")]
        worse = []
        for model, group in f[~f.model.str.contains("char")].groupby("model"):
            merged = group.merge(char, on="setting", suffixes=("", "_char"))
            worse += [f"{model} {r.setting}: AL {r.AL:.0f} ≥ char {r.AL_char:.0f}"
                      for r in merged.itertuples() if r.AL >= r.AL_char]
        if len(char):
            # a comparison of two models' mean AL: a handful of utterances cannot decide it
            evidence = evaluate(f, _char_minus_bpe, claimed="greater")
            out.append(Claim.measured("N21-BPE", "BPE targets give lower AL than characters "
                                      "at the same (k, s, N) (smallest char − BPE, ms)",
                                      evidence, "; ".join(worse) or
                                      "every BPE setting below its char counterpart",
                                      needs_full_run=True))
        if len(char) and "BLEU" in f:
            # §4.2: "char model tends to give higher BLEU score … than the two BPE models"
            better = [f"{model} {r.setting}: BLEU {r.BLEU:.1f} vs char {r.BLEU_char:.1f}"
                      for model, group in f[~f.model.str.contains("char")].groupby("model")
                      for r in group.merge(char, on="setting",
                                           suffixes=("", "_char")).itertuples()]
            out.append(Claim.measured("N21-BPE-BLEU", "characters give higher BLEU than BPE "
                                      "targets at the same (k, s, N) (mean char − BPE, BLEU)",
                                      evaluate(f, _char_minus_bpe_bleu, claimed="greater"),
                                      "; ".join(better), needs_full_run=True))
    return out
