"""The paired bootstrap over segments: every setting (or system) rescored on the same
resamples of the segments, and a statistic of them recomputed on each.

:class:`Segments` holds the per-segment scores behind some rows of a sweep summary (BLEU's
sufficient statistics from :func:`simul.metrics.quality.bleu_statistics`, sentence latencies
as :func:`simul.metrics.score.score_records` averages them); :func:`bootstrap` (or
:func:`evaluate`) takes rows and a statistic of them; :func:`resample_segments` any array
with one axis of segments (e.g. per-decode counts of several settings: segments, not
decodes, are resampled); :func:`bleu_difference` and :func:`mean_difference` compare two
systems' outputs directly.
"""

from __future__ import annotations

import atexit
import concurrent.futures as cf
import math
import multiprocessing
import os
import time
import warnings
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from simul.analysis.claims.evidence import Evidence, Replay, check, interval
from simul.metrics.quality import bleu_of, bleu_statistics

FULL_RESAMPLES = 1000
RESAMPLES = FULL_RESAMPLES
"""Bootstrap resamples when a call names none. A quick notebook run (:func:`configure`
from ``notebook.setup(quick=True)``) lowers it to :data:`QUICK_RESAMPLES`: intervals on a
handful of segments are wide anyway, and the percentiles of 200 resamples move by a few
percent."""
QUICK_RESAMPLES = 200

WORKERS: int | None = None
"""Processes that compute a bootstrap's resamples: None, one per core; 1, this process alone
(a quick notebook run, whose kernels share the cores, sets it). The values are the same
whatever the number: each resample's statistic is computed as here, in resample order."""
PARALLEL_MIN_S = 2.0
"""A bootstrap whose resamples would take less (timed on the first) stays in this process."""


QUICK = False
"""A quick notebook run (:func:`configure`): a claim that needs the full run is measured by
its effect alone (:func:`point_estimate`). On a handful of segments a bootstrap has a few
distinct resamples (3 on 2 segments) and its interval is far too narrow, and a quick run
does not decide that claim anyway."""


def configure(*, quick: bool, workers: int | None) -> None:
    """Set :data:`QUICK`, :data:`RESAMPLES` (fewer in a quick run) and :data:`WORKERS` for
    this process."""
    global QUICK, RESAMPLES, WORKERS
    QUICK = quick
    RESAMPLES = QUICK_RESAMPLES if quick else FULL_RESAMPLES
    WORKERS = workers


def resamples_of(n: int, resamples: int | None, seed: int) -> np.ndarray:
    """``resamples`` (default :data:`RESAMPLES`) rows of ``n`` segment indices drawn with
    replacement: (resamples, n)."""
    if n < 2:
        raise ValueError(f"a paired bootstrap needs at least 2 segments, got {n}")
    return np.random.default_rng(seed).integers(0, n, size=(resamples or RESAMPLES, n))


def mean_difference(a: Sequence[float], b: Sequence[float], *, claimed: str,
                    margin: float = 0.0, resamples: int | None = None,
                    seed: int = 0) -> Evidence:
    """Segment-level paired bootstrap of mean(B) − mean(A): ``a[i]`` and ``b[i]`` are two
    systems' values on segment i (e.g. sentence-level AL in ms, whose mean SimulEval
    reports). The same resampled segments are used for both systems."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired values needed: {a.shape} vs {b.shape}")
    check(claimed, margin)
    diff = b - a
    means = diff[resamples_of(len(diff), resamples, seed)].mean(axis=1)
    low, high = interval(means, claimed)
    return Evidence(float(diff.mean()), low, high, len(diff), claimed, margin)


def resample_segments(values: np.ndarray, statistic: Callable[[np.ndarray], float], *,
                      claimed: str, margin: float = 0.0, resamples: int | None = None,
                      seed: int = 0) -> Evidence:
    """Evidence for ``statistic`` of ``values``, an array whose last axis is the segments
    (e.g. (quantities, settings, segments)), recomputed on resamples of the segments:
    ``statistic`` receives ``values[..., idx]``, every setting of a segment drawn together,
    so that several decodes of one segment are never counted as independent."""
    values = np.asarray(values, dtype=float)
    check(claimed, margin)
    n = values.shape[-1]
    effect = float(statistic(values))
    if math.isnan(effect):
        return Evidence(math.nan, math.nan, math.nan, n, claimed, margin)
    found = np.array([statistic(values[..., idx])
                      for idx in resamples_of(n, resamples, seed)], dtype=float)
    found = found[~np.isnan(found)]
    low, high = interval(found, claimed) if len(found) else (math.nan, math.nan)
    return Evidence(effect, low, high, n, claimed, margin)


def bleu_difference(hyps_a: Sequence[str], hyps_b: Sequence[str], refs: Sequence[str], *,
                    claimed: str, margin: float = 0.0, resamples: int | None = None,
                    seed: int = 0) -> Evidence:
    """Paired bootstrap of corpus BLEU(B) − BLEU(A), as sacrebleu's paired bootstrap
    resamples (Koehn 2004): segment-level BLEU sufficient statistics summed over the same
    resampled segments for both systems, then scored; sacrebleu's default BLEU (13a)."""
    if not len(hyps_a) == len(hyps_b) == len(refs):
        raise ValueError(f"{len(hyps_a)} and {len(hyps_b)} hypotheses for {len(refs)} "
                         "references: one of each per segment")
    check(claimed, margin)
    stats = [bleu_statistics(h, refs) for h in (hyps_a, hyps_b)]
    effect = bleu_of(stats[1].sum(axis=0)) - bleu_of(stats[0].sum(axis=0))
    diffs = [bleu_of(stats[1][idx].sum(axis=0)) - bleu_of(stats[0][idx].sum(axis=0))
             for idx in resamples_of(len(refs), resamples, seed)]
    low, high = interval(diffs, claimed)
    return Evidence(effect, low, high, len(refs), claimed, margin)


ANTICIPATION = "anticipation_rate"
"""A metric :class:`Segments` can rescore besides the latencies: the pooled anticipation
rate (:mod:`simul.metrics.anticipation`), from each segment's gold links, or where the pair
has none the links eflomal fits (``linked_segments(..., fitted=True)``); NaN for a setting
whose records find no links."""


class Segments:
    """The per-segment scores behind some rows of a sweep summary (settings decoded on the
    same source segments, each scored against its own references: two pairs of one corpus
    compare too), so that their corpus scores can be recomputed on any resample of the
    segments: BLEU from summed sufficient statistics, each latency metric in ``metrics``
    (``"AL"``, ``"LAAL_CA"``, …) as the mean of its sentence scores over the segments with an
    output word, as :func:`simul.metrics.score.score_records` computes them, and
    :data:`ANTICIPATION` from summed counts.

    ``rows`` need a ``records`` column (the path of each setting's records, as
    :func:`simul.sweep.run` and :func:`simul.sweep.read_summary` give it)."""

    def __init__(self, rows: pd.DataFrame, metrics: Sequence[str] = ("AL",)):
        from simul.metrics.latency import sentence_latency
        from simul.metrics.score import reference_length
        from simul.records import read

        if rows.empty:
            raise ValueError("no summary rows to compare")
        self.rows = rows.reset_index(drop=True)
        self.metrics = tuple(metrics)
        records = [read(path) for path in self.rows.records]
        ids = [r.segment_id or str(r.index) for r in records[0]]
        for path, recs in zip(self.rows.records, records, strict=True):
            if [r.segment_id or str(r.index) for r in recs] != ids:
                raise ValueError(f"{path}: not the segments of {self.rows.records[0]}; "
                                 "compare settings decoded on the same segments (one split)")
        self.n = len(ids)
        # each setting against its own references: settings of two pairs decoded from the
        # same source segments (en-de beside en-es) compare on the same resamples
        self.bleu = np.stack([bleu_statistics([r.prediction for r in recs],
                                              [r.reference for r in recs])
                              for recs in records])  # (settings, segments, statistics)

        def sentence(metric: str, r) -> float:
            if not r.delays:
                return math.nan  # left out of the mean, as SimulEval does
            name, aware = metric.removesuffix("_CA"), metric.endswith("_CA")
            return sentence_latency(name, r.delays, r.source_length,
                                    reference_length(r.reference), r.elapsed if aware else None)

        self.latency = {m: np.array([[sentence(m, r) for r in recs] for recs in records])
                        for m in self.metrics if m != ANTICIPATION}  # → (settings, segments)
        if ANTICIPATION in self.metrics:
            self.anticipation = _anticipation_counts(records)  # (settings, segments, 2)

    def scores(self, segments: np.ndarray | None = None) -> pd.DataFrame:
        """The rows with BLEU and the latency metrics recomputed on ``segments`` (indices,
        repeats allowed; all segments when None)."""
        idx = np.arange(self.n) if segments is None else segments
        out = self.rows.copy()
        out["BLEU"] = [bleu_of(s) for s in self.bleu[:, idx].sum(axis=1)]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a resample with no output word
            for metric, values in self.latency.items():
                out[metric] = np.nanmean(values[:, idx], axis=1)
            if ANTICIPATION in self.metrics:
                pooled = self.anticipation[:, idx].sum(axis=1)  # (settings, 2)
                out[ANTICIPATION] = pooled[:, 0] / pooled[:, 1]
        return out


def _anticipation_counts(records: list[list]) -> np.ndarray:
    """(anticipating, linked) hypothesis words of each setting's records, all decoded on
    the same segments: (settings, segments, 2). The corpus is read once for all settings."""
    from simul.metrics import anticipation

    flat = [r for recs in records for r in recs]
    segments = anticipation.linked_segments(flat, fitted=True) or [None] * len(flat)
    counts = [anticipation.record_counts(r, s) if anticipation.has_links(s)
              else anticipation.Counts(0, 0) for r, s in zip(flat, segments, strict=True)]
    return np.array([[c.anticipating, c.linked] for c in counts],
                    dtype=float).reshape(len(records), -1, 2)


def bootstrap(rows: pd.DataFrame | Segments, statistic: Callable[[pd.DataFrame], float], *,
              claimed: str, margin: float = 0.0, metrics: Sequence[str] = ("AL",),
              resamples: int | None = None, seed: int = 0) -> Evidence:
    """Evidence for a claim that ``statistic`` of some settings is ``claimed`` ("greater" or
    "less") than 0. ``statistic`` maps the rows (with BLEU and ``metrics`` as columns) to a
    number, e.g. a BLEU difference between two settings, the smallest AL step along a grid
    or a mean curve gap; it is computed on all segments (the effect) and on ``resamples``
    resamples of the segments, the same for every setting (the percentile interval).
    A statistic that is NaN on a resample (e.g. no common latency range) leaves it out; one
    that is NaN on all segments decides nothing (undecided, NaN effect). ``claimed`` and
    ``margin`` give the claim's kind (:class:`Evidence`, :data:`~simul.analysis.claims.KINDS`).

    The evidence keeps a :class:`Replay` (the rows and the statistic), so that a
    confirmatory run (:mod:`simul.commands.confirm`) can decide the claim again on fresh
    segments."""
    check(claimed, margin)
    data = rows if isinstance(rows, Segments) else Segments(rows, metrics)
    replay = Replay(data.rows, statistic, claimed, margin, data.metrics)
    effect = float(statistic(data.scores()))
    if math.isnan(effect):
        return Evidence(math.nan, math.nan, math.nan, data.n, claimed, margin, replay)
    values = on_resamples(statistic, data, resamples_of(data.n, resamples, seed))
    values = values[~np.isnan(values)]
    low, high = interval(values, claimed) if len(values) else (math.nan, math.nan)
    return Evidence(effect, low, high, data.n, claimed, margin, replay)


def evaluate(rows: pd.DataFrame, statistic: Callable[[pd.DataFrame], float], *, claimed: str,
             margin: float = 0.0, metrics: Sequence[str] = ("AL",),
             resamples: int | None = None, seed: int = 0) -> Evidence:
    """:func:`bootstrap` over the segments when ``rows`` carry their records (a sweep's
    summary does); on a summary without them (hand-made tables, the tests of a paper's
    claim logic) the statistic of the rows as they are, as a point estimate: a zero-width
    interval on ``n = 0`` segments."""
    if "records" in rows:
        return bootstrap(rows, statistic, claimed=claimed, margin=margin, metrics=metrics,
                         resamples=resamples, seed=seed)
    effect = float(statistic(rows))
    return Evidence(effect, effect, effect, 0, claimed, margin)


def point_estimate(rows: pd.DataFrame, statistic: Callable[[pd.DataFrame], float], *,
                   claimed: str, margin: float = 0.0,
                   metrics: Sequence[str] = ("AL",)) -> Evidence:
    """The effect of :func:`evaluate` on all segments, without an interval (``low`` and
    ``high`` NaN: undecided) and without resampling."""
    check(claimed, margin)
    if "records" not in rows:
        return evaluate(rows, statistic, claimed=claimed, margin=margin, metrics=metrics)
    data = Segments(rows, metrics)
    replay = Replay(data.rows, statistic, claimed, margin, data.metrics)
    return Evidence(float(statistic(data.scores())), math.nan, math.nan, data.n, claimed,
                    margin, replay)


def on_resamples(statistic: Callable[[pd.DataFrame], float], data: Segments,
                 resamples: np.ndarray) -> np.ndarray:
    """``statistic`` of the rows rescored on each resample (rows of ``resamples``), in order.
    When they would take :data:`PARALLEL_MIN_S` or more and there are several
    :data:`WORKERS`, the rest after the first in as many slices, this process computing
    one while workers compute the others. A statistic that cannot be pickled (it travels
    with :mod:`cloudpickle`, closures included) is computed here alone."""
    t0 = time.perf_counter()
    values = _values_of((statistic, data), resamples[:1])
    took = time.perf_counter() - t0
    rest = resamples[1:]
    workers = WORKERS or os.cpu_count() or 1
    payload = None
    if workers > 1 and len(rest) >= workers and took * len(resamples) >= PARALLEL_MIN_S:
        import cloudpickle

        try:
            payload = cloudpickle.dumps((statistic, data))
        except Exception:  # noqa: BLE001 — whatever pickling raises, compute it here
            payload = None
    if payload is None:
        return np.array(values + _values_of((statistic, data), rest), dtype=float)
    mine, *theirs = np.array_split(rest, workers)
    pool = statistics_pool(workers - 1)
    futures = [pool.submit(_values_of, payload, part) for part in theirs]
    try:
        values += _values_of((statistic, data), mine)
        for fut in futures:
            values += fut.result()
    except BaseException:
        for fut in futures:
            fut.cancel()
        raise
    return np.array(values, dtype=float)


def _values_of(payload: bytes | tuple, resamples: np.ndarray) -> list[float]:
    if isinstance(payload, bytes):
        import cloudpickle

        payload = cloudpickle.loads(payload)
    statistic, data = payload
    return [statistic(data.scores(idx)) for idx in resamples]


_POOL: cf.ProcessPoolExecutor | None = None
_POOL_SIZE = 0


def statistics_pool(size: int) -> cf.ProcessPoolExecutor:
    """This process's workers for :func:`on_resamples`, started once (they import pandas
    and simul once per kernel, not per claim)."""
    global _POOL, _POOL_SIZE
    if _POOL is None or _POOL_SIZE != size:
        if _POOL is None:
            atexit.register(_shutdown_pool)
        else:
            _POOL.shutdown(wait=False, cancel_futures=True)
        _POOL = cf.ProcessPoolExecutor(size, mp_context=multiprocessing.get_context("spawn"))
        _POOL_SIZE = size
    return _POOL


def _shutdown_pool() -> None:
    global _POOL
    if _POOL is not None:
        _POOL.shutdown(wait=True, cancel_futures=True)
        _POOL = None
