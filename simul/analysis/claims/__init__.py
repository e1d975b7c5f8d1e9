"""The papers' claims, declared as data and checked on a run's numbers as measurements.

Each paper module (:mod:`simul.papers`) declares its findings (:class:`Finding`: the
paper's sentence with its section, the half of a compound sentence checked, kind, margin
with its reason, the settings read and the statistic) and computes each statistic on its
sweeps; this package is the one engine that decides them:

- :mod:`simul.analysis.claims.evidence`: :class:`Evidence` — an effect B − A, its 95 % interval (90
%
  for an equivalence claim) from a paired bootstrap over the segments, n, and the verdict
  its kind (:data:`KINDS`) and margin give;
- :mod:`simul.analysis.claims.resampling`: the bootstrap itself (:func:`bootstrap`,
:func:`evaluate`,
  :class:`Segments`, :func:`resample_segments`), BLEU from the sufficient statistics of
  :mod:`simul.metrics.quality`;
- :mod:`simul.analysis.claims.statistics`: statistics of sweep rows (:func:`difference`,
  :func:`weakest_step`, :func:`mean_step`, :func:`curve_gap`);
- :mod:`simul.analysis.claims.findings`: :class:`Finding` and :class:`Claim`;
- :mod:`simul.analysis.claims.report`: ``claims.csv``/``claims.md`` (the paper's claims, then
simul's
  own questions apart), the replays of :mod:`simul.commands.confirm`, the catalogue of findings.

The test suite reads the saved tables (a quick run fails on a contradicted claim that a
handful of utterances can decide; the full run's claims are checked by
``tests/test_reproduce_full.py``, run by ``make reproduce``, with each module's
``KNOWN_GAPS``: the claims the full run contradicts, and why).
"""

from simul.analysis.claims.evidence import KINDS, POWER, VERDICTS, Evidence, Replay, kind_of
from simul.analysis.claims.findings import PAPERS, PROPERTY, Claim, Finding, declare, tagged
from simul.analysis.claims.report import (
    QUICK_UNDECIDED,
    REPLAY_FILE,
    REPORT_COLUMNS,
    catalogue,
    catalogue_markdown,
    counts,
    quick_caption,
    read,
    read_replays,
    report,
    save_replays,
)
from simul.analysis.claims.resampling import (
    ANTICIPATION,
    FULL_RESAMPLES,
    QUICK_RESAMPLES,
    Segments,
    bleu_difference,
    bootstrap,
    configure,
    evaluate,
    mean_difference,
    point_estimate,
    resample_segments,
)
from simul.analysis.claims.statistics import (
    curve_gap,
    difference,
    fmt,
    mean_known,
    mean_step,
    monotone_within,
    non_decreasing,
    non_increasing,
    smallest,
    smallest_known,
    weakest_step,
)

BLEU_MARGIN = 1.0
"""The margin of a BLEU claim where the paper gives no number of its own: P22 §5 counts
"a gain of 1 BLEU" as a gain (its smallest), so a difference under 1 BLEU is no gain nor
loss the papers would name. A paper that puts its words on numbers gets its own margin
(K22's "almost on par": :data:`simul.papers.polak2022.ALMOST_ON_PAR`)."""

__all__ = [
    "ANTICIPATION", "BLEU_MARGIN", "FULL_RESAMPLES", "KINDS", "PAPERS", "POWER", "PROPERTY",
    "QUICK_RESAMPLES", "QUICK_UNDECIDED", "REPLAY_FILE", "REPORT_COLUMNS", "VERDICTS",
    "Claim", "Evidence", "Finding", "Replay", "Segments", "bleu_difference", "bootstrap",
    "catalogue", "catalogue_markdown", "configure", "counts", "curve_gap", "declare",
    "difference", "evaluate", "fmt", "kind_of", "mean_difference", "mean_known", "mean_step",
    "monotone_within", "non_decreasing", "non_increasing", "point_estimate", "quick_caption",
    "read",
    "read_replays", "report", "resample_segments", "save_replays", "smallest",
    "smallest_known", "tagged", "weakest_step",
]
