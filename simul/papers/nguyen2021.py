"""Nguyen, Estève, Besacier 2021 — "An empirical study of end-to-end simultaneous speech
translation decoding strategies" (ICASSP 2021): wait-k with stride and N units per write.

Notebook: ``notebooks/nguyen2021.ipynb``.
"""

from __future__ import annotations

import pandas as pd
from scipy.stats import spearmanr

from simul import notebook
from simul.claims import Claim, monotone_within

KS = [100, 200]
"""Table 1: k, frames (10 ms) read before the first write."""
STRIDES = [10, 20]
"""Table 1: s, frames read between two writes."""
NS = [1, 2, 3]
"""Table 1: N, units written per step."""
FIGURE2_SETTINGS = [{"k": 100, "s": 10, "n": 2}, {"k": 200, "s": 10, "n": 2},
                    {"k": 200, "s": 20, "n": 2}, {"k": 200, "s": 20, "n": 1}]
"""Figure 2's (k, s, N)."""

KNOWN_GAPS = {
    "N21-BPE": "k=100, s=10, N=2 writes 20 units/s: the BPE models close sentences early "
               "(0.61 / 0.42 of the reference's words vs 0.85 for chars), last word at |X|",
    "N21-AL-N": "N=1 at s=10 writes 10 chars/s < 14.6 needed (AL 1973); N=2→3 +102 ± 131 ms: N=3 "
                "writes 30 chars/s, closes sentences early, last word at |X|",
}
"""The claims that do not hold on the full run (``make reproduce``), with why: strict xfails
of ``tests/test_reproduce_full.py``; the numbers behind them are in
``docs/claims_full_run.md``."""


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


def claims(grid: pd.DataFrame, figure2: pd.DataFrame | None = None) -> list[Claim]:
    """§3's claims on a Table 1 summary (wait_k_frames rows, one split) and on Figure 2's
    (char and BPE models, same settings)."""
    g = grid[grid.policy == "wait_k_frames"].rename(
        columns={"param_k": "k", "param_s": "s", "param_n": "N"})
    out = []
    for name, others, increasing in (("k", ["s", "N"], True), ("s", ["k", "N"], True),
                                     ("N", ["k", "s"], False)):
        failures, seen = monotone_within(g, by=others, along=name, increasing=increasing)
        verb = "grows" if increasing else "falls"
        out.append(Claim(f"N21-AL-{name}", f"AL {verb} with {name}", not failures and seen > 0,
                         "; ".join(failures) or f"{seen} groups, all monotone"))
    rho = spearmanr(g.AL, g.BLEU).statistic if len(g) > 2 else float("nan")
    out.append(Claim("N21-BLEU-AL", "BLEU grows with AL (over the 12 settings)",
                     bool(rho > 0), f"Spearman ρ(AL, BLEU) = {rho:.2f}", needs_full_run=True))
    offline = grid[grid.policy == "offline"].BLEU
    if len(offline):
        best = g.BLEU.max()
        out.append(Claim("N21-offline", "offline greedy BLEU ≥ every simultaneous setting's "
                         "(within 1 BLEU)", bool(offline.iloc[0] >= best - 1.0),
                         f"offline {offline.iloc[0]:.1f}, best wait-k {best:.1f}"))
    if figure2 is not None and len(figure2):
        f = figure2[figure2.policy == "wait_k_frames"]
        char = f[f.model.str.contains("char")]
        worse = []
        for model, group in f[~f.model.str.contains("char")].groupby("model"):
            merged = group.merge(char, on="setting", suffixes=("", "_char"))
            worse += [f"{model} {r.setting}: AL {r.AL:.0f} ≥ char {r.AL_char:.0f}"
                      for r in merged.itertuples() if r.AL >= r.AL_char]
        # a comparison of two models' mean AL: a handful of utterances cannot decide it
        out.append(Claim("N21-BPE", "BPE targets give lower AL than characters at the same "
                         "(k, s, N)", not worse and len(char) > 0, "; ".join(worse) or
                         "every BPE setting below its char counterpart", needs_full_run=True))
    return out
