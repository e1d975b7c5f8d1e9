"""Helpers of the tutorial notebook (``notebooks/tutorial.ipynb``): one simulated utterance
made visible, then a small sweep.

- :func:`simul.plots.timeline` — the READ/WRITE path of a policy (Nguyen et al. 2021,
  Fig. 1): source time read on x, output units written on y, the output words written next
  to the path and, when the segment has an alignment (the mini corpus), the source words on
  top;
- :func:`partial_outputs` — the committed text after every WRITE;
- :func:`word_latency` and :func:`metrics_table` — delays against elapsed times
  (computation-aware) per word, and every metric of ``simul score`` for one record;
- :func:`spec` — the small wait-k sweep at the end.
"""

from __future__ import annotations

import math

import pandas as pd

from simul import notebook
from simul.claims import Claim, monotone_within
from simul.metrics.latency import MEASURED_IN, SIMULEVAL_METRICS
from simul.metrics.score import score_records
from simul.metrics.units import text
from simul.records import Record

SWEEP_KS = [100, 200]
"""The small sweep's k (frames of 10 ms read before the first write)."""
SWEEP_STRIDES = [10, 20]
"""The small sweep's stride s (frames read between two writes)."""

KNOWN_GAPS: dict[str, str] = {}
"""The claims that do not hold on the full run, with why (none)."""


def partial_outputs(record: Record) -> pd.DataFrame:
    """One row per WRITE: the source read (ms), how many READs led to it, the units it
    wrote and the committed text so far."""
    rows, done, reads = [], 0, 0
    for read_ms, n in record.trace:
        if not n:
            reads += 1
            continue
        new = record.units[done:done + n]
        done += n
        rows.append({"read_ms": read_ms, "READs before": reads, "new units": list(new),
                     "units so far": done,
                     "text so far": text(record.units[:done], record.unit_type)})
        reads = 0
    return pd.DataFrame(rows, columns=["read_ms", "READs before", "new units", "units so far",
                                       "text so far"])


def word_latency(record: Record) -> pd.DataFrame:
    """Per output word: its delay (ms of source read when the word was complete), its
    elapsed time (the delay plus all computation spent on the utterance so far) and the
    difference, the computation."""
    words = record.prediction.split()
    elapsed = record.elapsed if len(record.elapsed) == len(words) else [math.nan] * len(words)
    return pd.DataFrame({"word": words, "delay_ms": record.delays, "elapsed_ms": elapsed,
                         "compute_ms": [e - d for e, d in zip(elapsed, record.delays,
                                                              strict=True)]})


def metrics_table(record: Record) -> pd.DataFrame:
    """``simul score`` for one record: quality, then each SimulEval latency metric on
    delays (non-computation-aware) and on elapsed times (computation-aware)."""
    scores = score_records([record])
    rows = [{"metric": m, "on delays": scores[m], "on elapsed (computation-aware)": math.nan,
             "unit": ""} for m in ("BLEU", "chrF")]
    rows += [{"metric": m, "on delays": scores[m],
              "on elapsed (computation-aware)": scores.get(f"{m}_CA", math.nan),
              "unit": MEASURED_IN[m]} for m in SIMULEVAL_METRICS]
    return pd.DataFrame(rows)


def spec(model: str, pair: str, split: str, output: str, *, n: int, ks=SWEEP_KS,
         strides=SWEEP_STRIDES, corpus=None, max_utterances=None) -> dict:
    """A sweep spec: wait-k (``wait_k_frames``) over ``ks`` × ``strides``, ``n`` units per
    write."""
    policies = [{"policy": "wait_k_frames", "grid": {"k": list(ks), "s": list(strides)},
                 "fixed": {"n": n}}]
    return notebook.spec([model], pair, [split], output, policies, corpus=corpus,
                         max_utterances=max_utterances)


def claims(record: Record, grid: pd.DataFrame) -> list[Claim]:
    """What the tutorial shows on any model: computation only adds latency (one record),
    and a longer wait k adds lag (the sweep's wait_k_frames rows, at each stride s)."""
    behind = [k for k, (e, d) in enumerate(zip(record.elapsed, record.delays, strict=False))
              if e < d]
    if behind or len(record.elapsed) != len(record.delays) or not record.delays:
        out = [Claim("T-CA", "elapsed ≥ delay for every word, so AL_CA ≥ AL", False,
                     f"{len(record.delays)} words, {len(record.elapsed)} elapsed times; "
                     f"elapsed < delay at words {behind}")]
    else:
        scores = score_records([record])
        out = [Claim("T-CA", "elapsed ≥ delay for every word, so AL_CA ≥ AL",
                     bool(scores["AL_CA"] >= scores["AL"]),
                     f"AL {scores['AL']:.0f} ms, AL_CA {scores['AL_CA']:.0f} ms")]
    g = grid[grid.policy == "wait_k_frames"]
    failures, seen = monotone_within(g, by="param_s", along="param_k",
                                     label=lambda s: f"s={s:g}")
    out.append(Claim("T-k", "AL grows with k (at each stride s)", not failures and seen > 0,
                     "; ".join(failures) or f"{seen} strides, all monotone"))
    return out
