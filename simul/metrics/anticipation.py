"""Anticipation rate: how often a simultaneous output wrote a word before it had heard the
source words that the word translates.

Needs the gold word alignment of the segment (``Segment.links``: ``(source word, target
word)`` index pairs into ``source.split()`` and ``target.split()``) and the end time of each
source word (``Segment.alignment.words``, ms from the segment start, one per word of
``source.split()``). Only corpora that ship gold links have it (the mini corpus's ``en-de``);
for the others the metric is absent, not zero.

Definition. A hypothesis word's *delay* d is the source audio read (ms) when it was written:
the record's ``delays``, one per word of ``prediction.split()``, the same non-computation-aware
delays the latency metrics use (:mod:`simul.metrics.latency`; the ``elapsed`` times are not
used, since what was heard, not when the word came out, decides anticipation). A record's
words are already words: a model's units (characters, BPE pieces) were turned into words
with delays when the record was written (:func:`simul.metrics.units.word_delays`, a word
charged when it is complete), so nothing is re-split here.

1. Hypothesis words are matched to reference words (``reference.split()``) by exact string
   equality along a longest common subsequence:
   ``difflib.SequenceMatcher(None, hyp_words, ref_words, autojunk=False)
   .get_matching_blocks()``. A matched hypothesis word inherits the gold links of its
   reference word: the source words that reference word is aligned to.
2. Unmatched hypothesis words, and matched ones whose reference word has no link, are left
   out. The rest are the *linked* words.
3. A linked word written at delay d *anticipates* when at least one of its source words had
   not been fully heard: ``end_ms > d`` for some of them (a word ending exactly at d was
   heard).

Sentence rate = anticipating words / linked words (NaN when a segment has no linked word).

Corpus rate, two aggregations (keys of :func:`corpus_anticipation`):

- ``anticipation_rate``: the counts pooled over segments, Σ anticipating / Σ linked. This is
  the headline: a rate of words is a proportion of the corpus's words, as BLEU's n-gram
  counts and WER (:mod:`simul.metrics.quality`) are pooled, so that a segment with one linked
  word does not weigh as much as one with twenty.
- ``anticipation_rate_seg``: the mean of the sentence rates, as every latency metric is a
  mean of sentence scores (:func:`simul.metrics.latency.corpus_latency`); segments without a
  linked word (an empty output, no word matched) are left out of that mean, as the latency
  means leave out segments without output words.

Both are NaN when no segment has a linked word, and absent (no key) when no record has a
segment with gold links. A record without such a segment (another pair, a SimulEval log) is
left out of both.

Finding the segments (:func:`linked_segments`): a simul record names its segment
(``segment_id``) and its audio (``source[0]``, ``<split dir>/wav/<talk>.wav``); the split
beside that audio is read (text only) when it has a links file (``txt/<split>.links``), and a
record takes the segment of its id when the segment's target is the record's reference. A
split without links is not read, so scoring other pairs costs nothing and prints nothing new.
"""

from __future__ import annotations

import difflib
import logging
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from simul.records import Record

if TYPE_CHECKING:
    from simul.corpus.mustc import Segment

log = logging.getLogger(__name__)

POOLED = "anticipation_rate"
PER_SEGMENT = "anticipation_rate_seg"

LEGEND = {
    POOLED: "share of the hypothesis words matching a reference word (LCS, exact string) "
            "with gold links that were written (delay, not computation-aware) before one of "
            "their aligned source words had ended; counts pooled over segments",
    PER_SEGMENT: "the same rate per segment, then the mean over segments with a linked word",
}
"""What each key means, one line each, for ``simul score``'s legend."""


@dataclass(frozen=True)
class Counts:
    """Linked hypothesis words of one or more segments, and how many of them anticipate."""

    anticipating: int
    linked: int

    @property
    def rate(self) -> float:
        """anticipating / linked; NaN when there is no linked word."""
        return self.anticipating / self.linked if self.linked else math.nan

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.anticipating + other.anticipating, self.linked + other.linked)


def linked_words(hypothesis: Sequence[str], reference: Sequence[str],
                 links: Sequence[tuple[int, int]]) -> list[tuple[int, tuple[int, ...]]]:
    """(hypothesis word index, source word indices) of every linked hypothesis word.

    Hypothesis and reference words are matched along their longest common subsequence
    (``difflib.SequenceMatcher``, exact strings, no junk heuristic); a matched word takes
    the source words its reference word is linked to, and is left out when there are none.
    In hypothesis order.
    """
    sources = linked_sources(reference, links)
    return [(h, sources[j]) for h, j in matched_words(hypothesis, reference) if j in sources]


def linked_sources(reference: Sequence[str], links: Sequence[tuple[int, int]]
             ) -> dict[int, tuple[int, ...]]:
    """Reference word index → the source words linked to it, sorted (words without a link
    are absent); a link past the reference's words is refused."""
    sources: dict[int, set[int]] = {}
    for i, j in links:
        if not 0 <= j < len(reference):
            raise ValueError(f"link {i}-{j}: target word {j} is past the {len(reference)} "
                             "reference words")
        sources.setdefault(j, set()).add(i)
    return {j: tuple(sorted(v)) for j, v in sources.items()}


def matched_words(hypothesis: Sequence[str], reference: Sequence[str]
                  ) -> list[tuple[int, int]]:
    """(hypothesis index, reference index) of the words matched along the longest common
    subsequence (``difflib.SequenceMatcher``, exact strings, no junk heuristic)."""
    matcher = difflib.SequenceMatcher(None, list(hypothesis), list(reference), autojunk=False)
    return [(a + k, b + k) for a, b, size in matcher.get_matching_blocks() for k in range(size)]


def sentence_counts(hypothesis: Sequence[str], delays: Sequence[float],
                    reference: Sequence[str], links: Sequence[tuple[int, int]],
                    source_ends: Sequence[float]) -> Counts:
    """Linked and anticipating words of one output.

    Args:
        hypothesis: the output words, in order.
        delays: ms of source read when each word was written (non-computation-aware).
        reference: the reference words (``reference.split()``).
        links: gold ``(source word, reference word)`` index pairs.
        source_ends: end time (ms from the segment start) of each source word.
    """
    if len(delays) != len(hypothesis):
        raise ValueError(f"{len(delays)} delays for {len(hypothesis)} hypothesis words")
    anticipating = linked = 0
    for h, source_words in linked_words(hypothesis, reference, links):
        for i in source_words:
            if not 0 <= i < len(source_ends):
                raise ValueError(f"a link names source word {i}, but only "
                                 f"{len(source_ends)} source word times are known")
        linked += 1
        anticipating += any(source_ends[i] > delays[h] for i in source_words)
    return Counts(anticipating, linked)


def sentence_anticipation(hypothesis: Sequence[str], delays: Sequence[float],
                          reference: Sequence[str], links: Sequence[tuple[int, int]],
                          source_ends: Sequence[float]) -> float:
    """Anticipation rate of one output (:func:`sentence_counts`); NaN without linked words."""
    return sentence_counts(hypothesis, delays, reference, links, source_ends).rate


@dataclass(frozen=True)
class LinkedWord:
    """One linked hypothesis word of :func:`linked_word_times`."""

    index: int  # its place in ``prediction.split()``, from 0
    reference: int  # the place of the reference word it matched, from 0
    sources: tuple[int, ...]  # the source words (indices) its reference word is linked to
    delay: float  # source read (ms) when it was written
    heard: float  # when the last of its source words ended (ms)

    @property
    def anticipates(self) -> bool:
        """Written before one of its source words had ended."""
        return self.heard > self.delay


def linked_word_times(record: Record, segment: Segment) -> list[LinkedWord]:
    """Every linked hypothesis word of ``record`` against ``segment``'s gold links and word
    times (the words :func:`record_counts` counts), in hypothesis order."""
    if not has_links(segment):
        raise ValueError(f"segment {segment.id}: no gold links or no word times")
    ends = [w.end_ms for w in segment.alignment.words]
    reference = record.reference.split()
    sources = linked_sources(reference, segment.links)
    return [LinkedWord(h, j, sources[j], float(record.delays[h]),
                       max(ends[i] for i in sources[j]))
            for h, j in matched_words(record.prediction.split(), reference) if j in sources]


def has_links(segment: Segment | None) -> bool:
    """Whether ``segment`` carries what the metric needs: gold links and word times."""
    return (segment is not None and segment.links is not None
            and segment.alignment is not None)


def record_counts(record: Record, segment: Segment) -> Counts:
    """:func:`sentence_counts` of a record against the segment it was decoded from."""
    where = f"record {record.index} (segment {segment.id})"
    if not has_links(segment):
        raise ValueError(f"{where}: the segment has no gold links or no word times")
    if record.reference != segment.target:
        raise ValueError(f"{where}: its reference is not the segment's target, so the "
                         "segment's links do not index its words")
    try:
        return sentence_counts(record.prediction.split(), record.delays,
                               record.reference.split(), segment.links,
                               [w.end_ms for w in segment.alignment.words])
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from e


def corpus_anticipation(records: Sequence[Record],
                        segments: Sequence[Segment | None]) -> dict[str, float]:
    """``{anticipation_rate: pooled, anticipation_rate_seg: mean of sentence rates}``.

    ``segments[k]`` is the segment ``records[k]`` was decoded from, or None; records whose
    segment is None or has no gold links are left out. Empty dict when no record has a
    segment with links (the metric does not apply); NaN values when some do but no word is
    linked.
    """
    if len(segments) != len(records):
        raise ValueError(f"{len(segments)} segments for {len(records)} records")
    per_record = [record_counts(r, s) for r, s in zip(records, segments, strict=True)
                  if has_links(s)]
    if not per_record:
        return {}
    left_out = len(records) - len(per_record)
    if left_out:
        log.warning("anticipation rate: %d of %d records have no segment with gold links "
                    "and are left out", left_out, len(records))
    pooled = sum(per_record, Counts(0, 0))
    rates = [c.rate for c in per_record if c.linked]
    return {POOLED: pooled.rate,
            PER_SEGMENT: float(statistics.mean(rates)) if rates else math.nan}


def _split_dir(record: Record) -> Path | None:
    """``<split dir>`` of the audio a simul record names (``source[0]``), or None."""
    if not record.segment_id or not record.source:
        return None
    wav = Path(record.source[0])
    if wav.suffix != ".wav" or wav.parent.name != "wav":
        return None
    return wav.parent.parent


def linked_segments(records: Sequence[Record], *,
                    fitted: bool = False) -> list[Segment | None] | None:
    """The segment each record was decoded from, for records whose split has gold links.

    A record's split is the folder above its audio (``source[0]`` =
    ``<pair dir>/data/<split>/wav/<talk>.wav``, as simul writes records); a split is read
    (text only, :func:`simul.corpus.mustc.load_list`) only when ``txt/<split>.links`` is
    there. A record takes the segment named by its ``segment_id`` when that segment's target
    is its reference; otherwise (the corpus changed since decoding) it gets None, with a
    warning. None when no record gets a segment: the metric does not apply.

    ``fitted``: a split without gold links is read too, its segments given the links that
    eflomal fits on the pair's train split and this one
    (:func:`simul.corpus.reordering.corpus_links`, cached): automatic alignments, so that a
    pair without gold links can be compared with one that has them (a claim that does so
    says it); ``simul score`` and the sweeps' summaries keep to gold links.
    """
    import dataclasses

    from simul.corpus.mustc import CorpusError, load_list

    by_split: dict[Path, list[int]] = {}
    for k, record in enumerate(records):
        split_dir = _split_dir(record)
        if split_dir is not None:
            by_split.setdefault(split_dir, []).append(k)
    found: list[Segment | None] = [None] * len(records)
    for split_dir, ks in by_split.items():
        split = split_dir.name
        gold = (split_dir / "txt" / f"{split}.links").is_file()
        if not gold and not fitted:
            continue
        pair_dir = split_dir.parent.parent
        try:
            segments = load_list(pair_dir, pair_dir.name, split, with_audio=False)
            if not gold:
                from simul.corpus.reordering import corpus_links

                links = corpus_links(pair_dir, pair_dir.name, split, segments=segments).links
                segments = [dataclasses.replace(s, links=tuple(x))
                            for s, x in zip(segments, links, strict=True)]
            by_id = {s.id: s for s in segments}
        except CorpusError as e:
            log.warning("anticipation rate: cannot read the split of %d records (%s)",
                        len(ks), e)
            continue
        unmatched = []
        for k in ks:
            segment = by_id.get(records[k].segment_id)
            if segment is not None and segment.target == records[k].reference:
                found[k] = segment
            else:
                unmatched.append(records[k].index)
        if unmatched:
            log.warning("anticipation rate: %d records have no segment of their id and "
                        "reference in %s; their index: %s", len(unmatched), split_dir,
                        unmatched[:20])
    return found if any(has_links(s) for s in found) else None
