"""The papers' claims, checked on a run's numbers as measurements and reported honestly.

Each notebook ends with a table of claims (``claims.csv``/``.md`` next to its figures): the
claim in the paper's words, its verdict on this run — holds, contradicted, or undecided at
this sample size — and the numbers behind it. The per-paper checks live in
:mod:`simul.papers` (with ``KNOWN_GAPS``, the claims that the full run contradicts and why);
the test suite reads the saved tables (a quick run fails on a contradicted claim that a
handful of utterances can decide; the full run's claims are checked by
``tests/test_reproduce_full.py``, run by ``make reproduce``).

:class:`Evidence` is a claim as a measurement: an effect (B − A, or any statistic of several
settings), its 95 % interval from a paired bootstrap over the segments, and the verdict.
:func:`bleu_difference` and :func:`mean_difference` compare two systems' outputs;
:func:`bootstrap` (or :func:`evaluate`) takes rows of a sweep summary and a statistic of
them — :func:`difference`, :func:`weakest_step`, a :func:`curve_gap` at matched latency —
and recomputes it on resamples of the segments, every setting on the same resample
(:class:`Segments` rescore BLEU and latency from the records).
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
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Claim:
    """A paper's claim as it came out on a run. A claim about quality or latency carries its
    :class:`Evidence` (effect, 95 % interval, n; build it with :meth:`measured`), and its
    verdict is the evidence's; a claim about a property of every setting (e.g. CA ≥ NCA)
    has none, and holds or is contradicted."""
    id: str  # e.g. "N21-AL-k"
    text: str  # the claim, as the paper makes it
    holds: bool  # the verdict is "holds"
    detail: str  # the numbers it was decided on
    needs_full_run: bool = False  # too few utterances in a quick run to decide it
    evidence: Evidence | None = None
    no_interval: str = ""  # why a claim without evidence has no effect nor interval

    @property
    def verdict(self) -> str:
        """"holds", "contradicted" or "undecided" (only a claim with evidence can be)."""
        if self.evidence is not None:
            return self.evidence.verdict
        return "holds" if self.holds else "contradicted"

    @property
    def kind(self) -> str:
        """The claim's kind (:data:`KINDS`), or "property" for a claim without evidence."""
        return self.evidence.kind if self.evidence is not None else "property"

    @classmethod
    def measured(cls, id: str, text: str, evidence: Evidence, detail: str = "", *,
                 needs_full_run: bool = False) -> Claim:
        """A claim decided by ``evidence``; ``detail`` adds the numbers behind the effect."""
        return cls(id, text, evidence.verdict == "holds", detail, needs_full_run, evidence)


REPORT_COLUMNS = ("id", "text", "kind", "margin", "verdict", "effect", "low", "high", "n",
                  "needs_more", "holds", "detail", "needs_full_run", "no_interval")
"""A claims table's columns: ``kind`` (:data:`KINDS`, or "property") and its ``margin``,
``effect`` (low, high) is B − A with its interval (95 %, 90 % for an equivalence claim) on
``n`` segments, ``needs_more`` the segments an undecided claim would need (empty
otherwise), ``no_interval`` why a claim has no effect or interval (empty when it has
them)."""

REPLAY_FILE = "claims.replay.pkl"
"""Next to ``claims.csv``: each measured claim's :class:`Replay` (cloudpickle), which a
confirmatory run (:mod:`simul.confirm`) decodes again on fresh segments. It holds the
statistics' code by reference to simul's modules: read it with the simul that wrote it."""

PROPERTY = ("a property checked on every word or setting, not an estimate: "
            "no effect to bootstrap")
"""Why a claim without :class:`Evidence` has no effect nor interval, unless it says."""

QUICK_UNDECIDED = "not decided: quick run"
"""The start of a quick run's verdict on a claim that needs the full run."""


def _why_no_interval(claim: Claim) -> str:
    e = claim.evidence
    if e is None:
        return claim.no_interval or PROPERTY
    if math.isnan(e.effect):
        return "the statistic is undefined on these settings (see detail)"
    if e.n == 0:
        return "a point estimate: the rows carry no per-segment records to resample"
    if math.isnan(e.low) or math.isnan(e.high):
        return "the statistic is undefined on every resample"
    return ""


def _row(claim: Claim, quick: bool = False) -> dict:
    e = claim.evidence
    verdict = claim.verdict
    if quick and claim.needs_full_run:
        verdict = f"{QUICK_UNDECIDED}, n = {e.n}" if e is not None and e.n else QUICK_UNDECIDED
    return {"id": claim.id, "text": claim.text, "kind": claim.kind,
            "margin": e.margin if e else math.nan, "verdict": verdict,
            "effect": e.effect if e else math.nan, "low": e.low if e else math.nan,
            "high": e.high if e else math.nan, "n": e.n if e else pd.NA,
            "needs_more": (e.segments_needed() if e else None) or pd.NA,
            "holds": verdict == "holds", "detail": claim.detail,
            "needs_full_run": claim.needs_full_run, "no_interval": _why_no_interval(claim)}


def quick_caption(table: pd.DataFrame) -> str:
    """The line above a quick run's claims table: what its sample can and cannot decide."""
    n = table.n.dropna()
    size = f"{int(n.max())} segments" if len(n) else "a handful of segments"
    return (f"Quick run ({size}): too few to decide the claims that need the full run "
            f"(needs_full_run); their verdict is \"{QUICK_UNDECIDED}\" and their numbers are "
            "shown, not judged. The others — properties of every word or setting, or effects "
            "a few segments can show — are decided.")


def report(claims: Sequence[Claim], out_dir: str | Path | None = None, *,
           quick: bool = False) -> pd.DataFrame:
    """The claims as a table (:data:`REPORT_COLUMNS`); saved as ``claims.csv`` and
    ``claims.md`` under ``out_dir``.

    ``quick`` (a notebook's quick run: ``nb.quick``): a claim that needs the full run gets
    the verdict "not decided: quick run, n = <segments>" (and ``holds`` False) whatever
    its interval says, and ``claims.md`` opens with :func:`quick_caption`."""
    table = pd.DataFrame([_row(c, quick) for c in claims], columns=list(REPORT_COLUMNS))
    table[["n", "needs_more"]] = table[["n", "needs_more"]].astype("Int64")
    if out_dir is not None:
        from simul.tables import save

        save(table, out_dir, "claims", caption=quick_caption(table) if quick else "")
        save_replays(claims, Path(out_dir) / REPLAY_FILE)
    return table


def save_replays(claims: Sequence[Claim], path: str | Path) -> None:
    """Write the :class:`Replay` of every claim that has one as ``{id: replay}`` (written
    whole or not at all); no file when none has."""
    import os

    import cloudpickle

    replays = {}
    for c in claims:
        if c.evidence is None or c.evidence.replay is None:
            continue
        try:  # each alone: a statistic that cannot be pickled costs its own replay only
            replays[c.id] = cloudpickle.dumps(c.evidence.replay)
        except Exception as e:  # noqa: BLE001 — cloudpickle raises many kinds
            warnings.warn(f"claim {c.id}: its statistic cannot be saved for a confirmatory "
                          f"run ({type(e).__name__}: {e})", stacklevel=2)
    path = Path(path)
    if not replays:
        path.unlink(missing_ok=True)
        return
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_bytes(cloudpickle.dumps(replays))  # {id: pickled Replay}
    tmp.replace(path)


def read_replays(path: str | Path) -> dict[str, Replay]:
    """The :class:`Replay` of each claim saved by :func:`report` (``{}`` when there is no
    file)."""
    import pickle

    path = Path(path)
    if not path.is_file():
        return {}
    return {cid: pickle.loads(data) for cid, data in pickle.loads(path.read_bytes()).items()}


def non_decreasing(values: Sequence[float], tol: float = 0.0) -> bool:
    """Each value ≥ the one before, minus ``tol``."""
    return all(b >= a - tol for a, b in zip(values, values[1:], strict=False))


def non_increasing(values: Sequence[float], tol: float = 0.0) -> bool:
    return all(b <= a + tol for a, b in zip(values, values[1:], strict=False))


def monotone_within(rows: pd.DataFrame, *, by: str | Sequence[str], along: str,
                    metric: str = "AL", increasing: bool = True,
                    label=None, sort: bool = True) -> tuple[list[str], int]:
    """For each group of ``by`` with two or more values of ``along``: is ``metric``
    monotone (non-decreasing, or non-increasing) as ``along`` grows? Returns the failures
    (``"<label(key)>: AL 1200, 1100"``), groups in sorted order of their key (``sort``) or
    in order of appearance, and how many groups were checked. The default label is the key
    itself, or ``{column: value}`` when ``by`` is a list of columns."""
    if label is None:
        label = (lambda key: str(dict(zip(by, key, strict=True)))) \
            if not isinstance(by, str) else str
    check = non_decreasing if increasing else non_increasing
    failures, seen = [], 0
    for key, group in rows.groupby(by, sort=sort):
        if group[along].nunique() < 2:
            continue
        seen += 1
        values = group.sort_values(along)[metric].tolist()
        if not check(values):
            failures.append(f"{label(key)}: {metric} {fmt(values)}")
    return failures, seen


def fmt(values: Sequence[float], digits: int = 0) -> str:
    return ", ".join(f"{v:.{digits}f}" for v in values)


def read(out_dir: str | Path) -> pd.DataFrame:
    """A saved claims table."""
    return pd.read_csv(Path(out_dir) / "claims.csv")


# --- Evidence: an effect, its 95 % interval from a paired bootstrap, and a verdict ---------

VERDICTS = ("holds", "contradicted", "undecided")

KINDS = ("superiority", "non-inferiority", "equivalence")
"""What a claim says of an effect B − A, and so when it holds (:attr:`Evidence.verdict`):

- superiority ("B beats A", "grows with"): B − A lies on the claimed side of 0;
- non-inferiority ("A ≥ B", "on par or better", "no gain"): B − A is not on the wrong side
  of 0 by more than a margin fixed before the data;
- equivalence ("on par", "comparable", "the same line"): |B − A| is below the margin
  (two one-sided tests at 5 %: the 90 % interval inside ±margin)."""

BLEU_MARGIN = 1.0
"""The margin of "on par" in BLEU, fixed before any run: K22 calls online systems that lose
0.35 and 0.47 BLEU to another "almost on par", and P22 reads curves within about a BLEU of
each other as "similar or better"; a BLEU is also about the half-width of a 95 % paired
interval of corpus BLEU on a few hundred segments, the most a confirmatory run decodes."""

RATIO_MARGIN = 1.0
"""The margin of a latency ratio such as "3× lower latency": within 1 of the paper's."""


def kind_of(claimed: str, margin: float) -> str:
    """The :data:`KINDS` entry of a claim: ``claimed`` "within" (``margin`` > 0) is
    equivalence; "greater" or "less" is superiority without a margin, non-inferiority
    with one."""
    if claimed == "within":
        return "equivalence"
    return "non-inferiority" if margin else "superiority"


@dataclass(frozen=True)
class Replay:
    """What a confirmatory run needs to decide a claim again on fresh segments: the summary
    rows the statistic read (their ``records`` name the sweeps and settings to decode
    again), the statistic and how it was tested (:func:`bootstrap`)."""
    rows: pd.DataFrame
    statistic: Callable[[pd.DataFrame], float]
    claimed: str
    margin: float
    metrics: tuple[str, ...]


@dataclass(frozen=True)
class Evidence:
    """A paired comparison of two systems on the same ``n`` segments: ``effect`` = B − A
    on the full sample, (``low``, ``high``) its percentile interval over bootstrap
    resamples of the segments (95 %, or 90 % for an equivalence claim: :attr:`level`), and
    the verdict on a claim that B − A is ``claimed``: "greater" or "less" than 0 (or than
    ∓``margin`` for a non-inferiority claim), or "within" ±``margin`` (equivalence);
    :attr:`kind` names which (:data:`KINDS`). ``margin`` is in the effect's unit, fixed
    before the data (e.g. :data:`BLEU_MARGIN`)."""
    effect: float
    low: float
    high: float
    n: int
    claimed: str
    margin: float = 0.0
    replay: Replay | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        _check(self.claimed, self.margin)

    @property
    def kind(self) -> str:
        return kind_of(self.claimed, self.margin)

    @property
    def level(self) -> float:
        """The interval's coverage: 0.90 for an equivalence claim (two one-sided tests at
        5 % each), 0.95 otherwise (one side at 2.5 %)."""
        return _level(self.claimed)

    def _bounds(self) -> tuple[float, ...]:
        """The values of B − A where the verdict changes."""
        if self.kind == "equivalence":
            return (-self.margin, self.margin)
        return (-self.margin if self.claimed == "greater" else self.margin,)

    @property
    def verdict(self) -> str:
        """superiority: "holds" when the whole interval lies on the claimed side of 0,
        "contradicted" when it lies on the other side, "undecided" when it contains 0.
        non-inferiority, claimed "greater": holds when ``low`` > −margin, contradicted when
        ``high`` < −margin ("less": holds when ``high`` < margin, contradicted when ``low``
        > margin), undecided otherwise. equivalence: holds when the interval lies inside
        (−margin, margin), contradicted when it lies wholly above margin or below −margin,
        undecided otherwise."""
        if self.kind == "equivalence":
            m = self.margin
            if -m < self.low and self.high < m:
                return "holds"
            return "contradicted" if self.low > m or self.high < -m else "undecided"
        (bound,) = self._bounds()
        above, below = self.low > bound, self.high < bound
        if not (above or below):
            return "undecided"
        return "holds" if above == (self.claimed == "greater") else "contradicted"

    def segments_needed(self) -> int | None:
        """For an undecided claim, about how many segments would decide it if the effect
        stayed as measured: the half-width shrinks as 1/√n until it is the distance from the
        effect to the nearest bound of :meth:`verdict` (0, ∓margin or ±margin). None when
        the effect sits on a bound or is NaN (nothing to compare) or the claim is
        decided."""
        if self.verdict != "undecided" or self.n == 0:
            return None
        distance = min(abs(self.effect - b) for b in self._bounds())
        if not distance > 0:
            return None  # on a bound, or NaN
        half = (self.high - self.low) / 2
        return math.ceil(self.n * (half / distance) ** 2)

    def text(self, digits: int = 1) -> str:
        if self.n == 0:
            return f"{self.effect:+.{digits}f} (point estimate, no segments): {self.verdict}"
        level = "" if self.level == 0.95 else f" ({self.level:.0%})"
        return (f"{self.effect:+.{digits}f} [{self.low:+.{digits}f}, {self.high:+.{digits}f}]"
                f"{level}, n={self.n}: {self.verdict}")


def _check(claimed: str, margin: float) -> None:
    if claimed not in ("greater", "less", "within"):
        raise ValueError(f"claimed must be 'greater' or 'less' (B − A) or 'within' "
                         f"(±margin), not {claimed!r}")
    if not margin >= 0:
        raise ValueError(f"margin: a number ≥ 0 in the effect's unit, not {margin!r}")
    if claimed == "within" and not margin > 0:
        raise ValueError("claimed 'within' (an equivalence claim) needs a margin > 0")


def _level(claimed: str) -> float:
    return 0.90 if claimed == "within" else 0.95


def _interval(values, claimed: str) -> tuple[float, float]:
    """The percentile interval of :attr:`Evidence.level` over bootstrap values."""
    tail = (1 - _level(claimed)) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


FULL_RESAMPLES = 1000
RESAMPLES = FULL_RESAMPLES
"""Bootstrap resamples when a call names none. A quick notebook run
(``notebook.setup(quick=True)``) lowers it to :data:`QUICK_RESAMPLES`: intervals on a handful
of segments are wide anyway, and the percentiles of 200 resamples move by a few percent."""
QUICK_RESAMPLES = 200


def _resamples(n: int, resamples: int | None, seed: int) -> np.ndarray:
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
    _check(claimed, margin)
    diff = b - a
    means = diff[_resamples(len(diff), resamples, seed)].mean(axis=1)
    low, high = _interval(means, claimed)
    return Evidence(float(diff.mean()), low, high, len(diff), claimed, margin)


def _bleu_stats(hypotheses: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """sacrebleu's BLEU (13a) sufficient statistics per segment: (segments, statistics)."""
    from sacrebleu.metrics import BLEU

    return np.asarray(BLEU()._extract_corpus_statistics(list(hypotheses), [list(references)]),
                      dtype=float).reshape(len(hypotheses), -1)


def _bleu(stats: np.ndarray) -> float:
    """Corpus BLEU from summed sufficient statistics, as sacrebleu's ``corpus_score``."""
    from sacrebleu.metrics import BLEU

    return BLEU()._compute_score_from_stats(list(stats)).score


def bleu_difference(hyps_a: Sequence[str], hyps_b: Sequence[str], refs: Sequence[str], *,
                    claimed: str, margin: float = 0.0, resamples: int | None = None,
                    seed: int = 0) -> Evidence:
    """Paired bootstrap of corpus BLEU(B) − BLEU(A), as sacrebleu's paired bootstrap
    resamples (Koehn 2004): segment-level BLEU sufficient statistics summed over the same
    resampled segments for both systems, then scored; sacrebleu's default BLEU (13a)."""
    if not len(hyps_a) == len(hyps_b) == len(refs):
        raise ValueError(f"{len(hyps_a)} and {len(hyps_b)} hypotheses for {len(refs)} "
                         "references: one of each per segment")
    _check(claimed, margin)
    stats = [_bleu_stats(h, refs) for h in (hyps_a, hyps_b)]
    effect = _bleu(stats[1].sum(axis=0)) - _bleu(stats[0].sum(axis=0))
    diffs = [_bleu(stats[1][idx].sum(axis=0)) - _bleu(stats[0][idx].sum(axis=0))
             for idx in _resamples(len(refs), resamples, seed)]
    low, high = _interval(diffs, claimed)
    return Evidence(effect, low, high, len(refs), claimed, margin)


# --- Evidence from a sweep: any statistic of several settings, bootstrapped over segments --

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
        self.bleu = np.stack([_bleu_stats([r.prediction for r in recs],
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
            self.anticipation = np.stack([_anticipation_counts(recs) for recs in records])

    def scores(self, segments: np.ndarray | None = None) -> pd.DataFrame:
        """The rows with BLEU and the latency metrics recomputed on ``segments`` (indices,
        repeats allowed; all segments when None)."""
        idx = np.arange(self.n) if segments is None else segments
        out = self.rows.copy()
        out["BLEU"] = [_bleu(s) for s in self.bleu[:, idx].sum(axis=1)]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a resample with no output word
            for metric, values in self.latency.items():
                out[metric] = np.nanmean(values[:, idx], axis=1)
            if ANTICIPATION in self.metrics:
                pooled = self.anticipation[:, idx].sum(axis=1)  # (settings, 2)
                out[ANTICIPATION] = pooled[:, 0] / pooled[:, 1]
        return out


ANTICIPATION = "anticipation_rate"
"""A metric :class:`Segments` can rescore besides the latencies: the pooled anticipation
rate (:mod:`simul.metrics.anticipation`), from each segment's gold links, or where the pair
has none the links eflomal fits (``linked_segments(..., fitted=True)``); NaN for a setting
whose records find no links."""


def _anticipation_counts(records) -> np.ndarray:
    """(anticipating, linked) hypothesis words per record: (segments, 2)."""
    from simul.metrics import anticipation

    segments = anticipation.linked_segments(records, fitted=True) or [None] * len(records)
    counts = [anticipation.record_counts(r, s) if anticipation.has_links(s)
              else anticipation.Counts(0, 0) for r, s in zip(records, segments, strict=True)]
    return np.array([[c.anticipating, c.linked] for c in counts], dtype=float)


def bootstrap(rows: pd.DataFrame | Segments, statistic: Callable[[pd.DataFrame], float], *,
              claimed: str, margin: float = 0.0, metrics: Sequence[str] = ("AL",),
              resamples: int | None = None, seed: int = 0) -> Evidence:
    """Evidence for a claim that ``statistic`` of some settings is ``claimed`` ("greater" or
    "less") than 0. ``statistic`` maps the rows (with BLEU and ``metrics`` as columns) to a
    number, e.g. a BLEU difference between two settings, the smallest AL step along a grid
    or a mean curve gap; it is computed on all segments (the effect) and on ``resamples``
    resamples of the segments, the same for every setting (the 95 % percentile interval).
    A statistic that is NaN on a resample (e.g. no common latency range) leaves it out; one
    that is NaN on all segments decides nothing (undecided, NaN effect). ``claimed`` and
    ``margin`` give the claim's kind (:class:`Evidence`, :data:`KINDS`).

    The evidence keeps a :class:`Replay` (the rows and the statistic), so that a
    confirmatory run (:mod:`simul.confirm`) can decide the claim again on fresh segments."""
    _check(claimed, margin)
    data = rows if isinstance(rows, Segments) else Segments(rows, metrics)
    replay = Replay(data.rows, statistic, claimed, margin, data.metrics)
    effect = float(statistic(data.scores()))
    if math.isnan(effect):
        return Evidence(math.nan, math.nan, math.nan, data.n, claimed, margin, replay)
    values = _on_resamples(statistic, data, _resamples(data.n, resamples, seed))
    values = values[~np.isnan(values)]
    low, high = _interval(values, claimed) if len(values) else (math.nan, math.nan)
    return Evidence(effect, low, high, data.n, claimed, margin, replay)


WORKERS: int | None = None
"""Processes that compute a bootstrap's resamples: None, one per core; 1, this process alone
(a quick notebook run, whose kernels share the cores, sets it). The values are the same
whatever the number: each resample's statistic is computed as here, in resample order."""
PARALLEL_MIN_S = 2.0
"""A bootstrap whose resamples would take less (timed on the first) stays in this process."""


def _on_resamples(statistic: Callable[[pd.DataFrame], float], data: Segments,
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
    pool = _statistics_pool(workers - 1)
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


def _statistics_pool(size: int) -> cf.ProcessPoolExecutor:
    """This process's workers for :func:`_on_resamples`, started once (they import pandas
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


def difference(a: pd.Series | dict, b: pd.Series | dict, metric: str = "BLEU"
               ) -> Callable[[pd.DataFrame], float]:
    """A statistic for :func:`bootstrap`: ``metric`` of setting B − that of setting A, each
    picked from the rows by its ``setting`` (and ``model``, ``split``) column."""
    keys = ("model", "split", "setting")

    def pick(rows: pd.DataFrame, which) -> float:
        mask = np.ones(len(rows), dtype=bool)
        for k in keys:
            if k in rows and k in which:
                mask &= (rows[k] == which[k]).to_numpy()
        if mask.sum() != 1:
            raise ValueError(f"{dict((k, which[k]) for k in keys if k in which)}: "
                             f"{int(mask.sum())} rows match, not one")
        return float(rows.loc[mask, metric].iloc[0])

    return lambda rows: pick(rows, b) - pick(rows, a)


def weakest_step(*, by: str | Sequence[str], along: str, metric: str = "AL",
                 increasing: bool = True) -> Callable[[pd.DataFrame], float]:
    """A statistic for :func:`bootstrap` on "``metric`` grows (or falls) with ``along``, at
    every value of ``by``": over the groups of ``by`` with two or more values of ``along``,
    the smallest change of ``metric`` from one value of ``along`` to the next (claim it
    "greater" than 0), or the largest (claim it "less", for ``increasing=False``)."""
    def statistic(rows: pd.DataFrame) -> float:
        steps = []
        for _, group in rows.groupby(by):
            values = group.sort_values(along)[metric].to_numpy()
            steps.extend(np.diff(values))
        if not steps:
            return math.nan
        return float(min(steps) if increasing else max(steps))

    return statistic


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


def curve_gap(a: pd.DataFrame, b: pd.DataFrame, *, x: str = "AL", y: str = "BLEU",
              points: int = 101, min_x: float = -math.inf, max_x: float = math.inf) -> float:
    """Mean of curve ``a`` minus curve ``b`` (``y`` as a piecewise-linear function of ``x``,
    points sorted by ``x``) over the ``x`` range both cover between ``min_x`` and ``max_x``:
    the comparison of two quality–latency curves at matched latency. NaN when they do not
    overlap there."""
    a, b = a.dropna(subset=[x, y]).sort_values(x), b.dropna(subset=[x, y]).sort_values(x)
    if not len(a) or not len(b):
        return math.nan
    lo, hi = max(a[x].min(), b[x].min(), min_x), min(a[x].max(), b[x].max(), max_x)
    if lo > hi:
        return math.nan
    grid = np.linspace(lo, hi, points) if hi > lo else np.array([lo])
    diff = np.interp(grid, a[x], a[y]) - np.interp(grid, b[x], b[y])
    return float(diff.mean())
