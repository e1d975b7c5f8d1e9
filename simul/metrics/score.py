"""Score a set of instance records: quality (sacrebleu) and every latency metric.

``score_records`` computes the metrics of records (read and checked by
:func:`simul.records.read`: simul's records or a SimulEval ``instances.log``);
``main_score`` prints them (``simul score RECORDS [--json]``), with the anticipation rate
(:mod:`simul.metrics.anticipation`) when the records' corpus split has gold word links.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from simul.metrics import anticipation
from simul.metrics.latency import (
    COMPUTATION_AWARE,
    LATENCY,
    MEASURED_IN,
    PAPER_METRICS,
    SIMULEVAL_METRICS,
    corpus_latency,
)
from simul.metrics.quality import corpus_quality
from simul.records import Record, check, read

if TYPE_CHECKING:
    from simul.corpus import Segment

log = logging.getLogger(__name__)

CA_PAPER_METRICS = tuple(name for name in PAPER_METRICS if name in COMPUTATION_AWARE)
"""Papers' variants that have a computation-aware form (Ma et al. 2020 defines AL_CA)."""


def reference_length(reference: str) -> int:
    """|Y*| in words, as SimulEval counts it: ``len(reference.split(" "))``."""
    return len(reference.split(" "))


def has_elapsed(record: Record) -> bool:
    """Whether the record carries one elapsed time per output word."""
    return len(record.elapsed) == len(record.delays)


def score_records(records: Sequence[Record],
                  segments: Sequence[Segment | None] | None = None) -> dict[str, float | str]:
    """Corpus quality and latency of ``records``, by metric name.

    Keys, in order: BLEU, chrF; the SimulEval metrics (AL, LAAL, DAL, AP, ATD, StartOffset,
    EndOffset, RTF); their ``_CA`` forms when every record has ``elapsed``; the papers'
    variants (AL_N21, AL_N21_orig, AL_orig, AL_M20, AL_M20_CA when every record has ``elapsed``,
    AL_K22); ``length_diff`` (mean hypothesis − reference words, Papi et al. 2022 Table 2);
    ``anticipation_rate`` and ``anticipation_rate_seg`` (pooled and per-segment, ratios;
    :mod:`simul.metrics.anticipation`) only when ``segments`` (the segment each record was
    decoded from, or None) has gold word links; BLEU_signature, chrF_signature; ``n``
    (number of records). Latency in ms except AP and RTF (ratios); in source words for
    records of text input (``source_type`` "text", no ``_CA`` forms), as SimulEval scores
    text-to-text. A latency is NaN when no record has an output word.
    """
    if not records:
        raise ValueError("no records to score")
    for k, r in enumerate(records):
        check(r.__dict__, f"record {k} (index {r.index})")
    kinds = {r.source_type for r in records}
    if len(kinds) > 1:
        raise ValueError("records of speech and of text input (source_type): their latencies "
                         "are in ms and in source words; score them apart")
    text_input = kinds == {"text"}
    delays = [r.delays for r in records]
    source_lengths = [r.source_length for r in records]
    reference_lengths = [reference_length(r.reference) for r in records]
    elapsed = ([r.elapsed for r in records]
               if all(map(has_elapsed, records)) and not text_input else None)
    empty = [r.index for r in records if not r.delays]
    if empty:
        log.warning("%d of %d records have no output word and are left out of the latency "
                    "means (as SimulEval does); their index: %s%s", len(empty), len(records),
                    empty[:20], " ..." if len(empty) > 20 else "")

    quality = corpus_quality([r.prediction for r in records], [r.reference for r in records])
    scores: dict[str, float | str] = {"BLEU": quality.bleu, "chrF": quality.chrf}

    def latency(name: str, computation_aware: bool = False) -> float:
        return corpus_latency(name, delays, source_lengths, reference_lengths,
                              elapsed if computation_aware else None, warn_skipped=False,
                              text_input=text_input)

    for name in SIMULEVAL_METRICS:
        scores[name] = latency(name)
    if elapsed is not None:
        for name in SIMULEVAL_METRICS:
            scores[f"{name}_CA"] = latency(name, computation_aware=True)
    for name in PAPER_METRICS:
        scores[name] = latency(name)
        if elapsed is not None and name in CA_PAPER_METRICS:
            scores[f"{name}_CA"] = latency(name, computation_aware=True)
    scores["length_diff"] = sum(len(d) - y for d, y in zip(delays, reference_lengths,
                                                            strict=True)) / len(records)
    if segments is not None:
        scores.update(anticipation.corpus_anticipation(records, segments))
    scores["BLEU_signature"] = quality.bleu_signature
    scores["chrF_signature"] = quality.chrf_signature
    scores["n"] = quality.n
    return scores


def main_score(path: str | Path, as_json: bool) -> int:
    """Print every metric of the records at ``path``: a table, or one JSON object.

    The anticipation rate is among them when the records' split has gold word links (their
    segments found by :func:`simul.metrics.anticipation.linked_segments`)."""
    recs = read(path)
    if not recs:
        raise ValueError(f"{path}: no records")
    scores = score_records(recs, anticipation.linked_segments(recs))
    if as_json:
        print(json.dumps({k: None if isinstance(v, float) and math.isnan(v) else v
                          for k, v in scores.items()}, ensure_ascii=False))
        return 0
    width = max(map(len, scores))
    print(f"{path}: {scores['n']} records")
    for name, value in scores.items():
        if name == "n":
            continue
        text = f"{value:10.3f}" if isinstance(value, float) else str(value)
        unit = _unit(name)
        if unit == "ms" and recs[0].source_type == "text":
            unit = "source words"
        print(f"{name:<{width}}  {text}  {unit}".rstrip())
    print("\n" + legend(scores))
    return 0


_FIXED_LEGEND = {
    "BLEU": "corpus BLEU of the detokenized output against the references (sacrebleu, 13a; "
            "its signature below)",
    "chrF": "corpus chrF (sacrebleu)",
    "length_diff": "mean hypothesis words − reference words per segment",
    **anticipation.LEGEND,
}


def legend(scores: dict) -> str:
    """What each metric of ``scores`` is (the first paragraph of its registered function's
    documentation), so that a table of numbers says what they mean."""
    import inspect
    import textwrap

    lines = ["What the numbers are (a word's delay: the source read, ms, when the word was "
             "complete):"]
    described = set()
    for name in scores:
        base = name.removesuffix("_CA")
        if base in described or name.endswith("_signature") or name == "n":
            continue
        described.add(base)
        if base in LATENCY:
            text = (inspect.getdoc(LATENCY[base]) or "").split("\n\n")[0]
        else:
            text = _FIXED_LEGEND.get(base, "")
        text = " ".join(text.replace("``", "").split())
        if text:
            lines += textwrap.wrap(f"{base}: {text}", width=100, initial_indent="  ",
                                   subsequent_indent="      ")
    lines += textwrap.wrap(
        "_CA: the same metric, computation-aware: on elapsed times (a word's delay plus all "
        "computation spent on its segment until it was written), SimulEval's definition. "
        "AL_N21 and AL_N21_orig exceed AL when a step writes many words (offline: every word "
        "at once): eq. (6)'s step form weights a step's lag by its words.",
        width=100, initial_indent="  ", subsequent_indent="  ")
    return "\n".join(lines)


def _unit(name: str) -> str:
    base = name.removesuffix("_CA")
    if base == "length_diff":
        return "words"
    if base in anticipation.LEGEND:
        return "(ratio)"
    if base in MEASURED_IN:
        return "(ratio)" if MEASURED_IN[base] == "ratio" else MEASURED_IN[base]
    return ""  # BLEU, chrF, signatures
