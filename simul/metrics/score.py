"""Score a set of instance records: quality (sacrebleu) and every latency metric.

``score_records`` computes the metrics of records (read and checked by
:func:`simul.records.read`: simul's records or a SimulEval ``instances.log``);
``main_score`` prints them (``simul score RECORDS… [--json]``: one file, or several side by
side), with the anticipation rate (:mod:`simul.metrics.anticipation`) when the records'
corpus split has gold word links.
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


def _score_file(path: str | Path) -> tuple[list[Record], dict[str, float | str]]:
    recs = read(path)
    if not recs:
        raise ValueError(f"{path}: no records")
    return recs, score_records(recs, anticipation.linked_segments(recs))


def _as_json(scores: dict) -> dict:
    return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in scores.items()}


def main_score(paths: str | Path | Sequence[str | Path], as_json: bool) -> int:
    """Print every metric of the records at each of ``paths``: for one file a table of metric,
    value and unit, for several a table with one row per file; then what the numbers are.
    ``as_json``: one JSON object (one file), or one per line with its ``records`` path.

    The anticipation rate is among them when the records' split has gold word links (their
    segments found by :func:`simul.metrics.anticipation.linked_segments`). Files of speech
    and of text input are refused together: their latencies are in ms and in source words."""
    paths = [paths] if isinstance(paths, str | Path) else list(paths)
    if not paths:
        raise ValueError("no records file given")
    scored = [(path, *_score_file(path)) for path in paths]
    kinds = {path: recs[0].source_type for path, recs, _ in scored}
    if len(set(kinds.values())) > 1:
        speech = next(p for p, k in kinds.items() if k == "speech")
        text = next(p for p, k in kinds.items() if k == "text")
        raise ValueError(f"{speech} is of speech input (latency in ms), {text} of text input "
                         "(in source words): score them apart")
    text_input = kinds[paths[0]] == "text"
    if as_json:
        if len(scored) == 1:
            print(json.dumps(_as_json(scored[0][2]), ensure_ascii=False))
        for path, _, scores in scored if len(scored) > 1 else ():
            print(json.dumps({"records": str(path), **_as_json(scores)}, ensure_ascii=False))
        return 0
    if len(scored) == 1:
        path, _, scores = scored[0]
        print(f"{path}: {scores['n']} records")
        print(_vertical_table(scores, text_input))
    else:
        print(_side_by_side(scored, text_input))
    print()
    print(_signatures([(path, scores) for path, _, scores in scored]))
    if text_input:
        print("text input: latency in source words; no computation-aware (_CA) metrics, "
              "since a text source records no computation time (SimulEval writes elapsed 0)")
    every = {name: None for _, _, scores in scored for name in scores}
    print("\n" + legend(every, text_input=text_input))
    return 0


def _shown(value: float | str) -> str:
    if isinstance(value, float):
        return "–" if math.isnan(value) else f"{value:.3f}"
    return str(value)


def _metric_names(scores: dict) -> list[str]:
    return [k for k in scores if k != "n" and not k.endswith("_signature")]


def _vertical_table(scores: dict, text_input: bool) -> str:
    """One line per metric: name, value, unit."""
    names = _metric_names(scores)
    width = max(map(len, names))
    return "\n".join(f"{name:<{width}}  {_shown(scores[name]):>10}  {_unit(name, text_input)}"
                     .rstrip() for name in names)


def _side_by_side(scored: list, text_input: bool) -> str:
    """One row per file (its path, its number of records, each metric), a header of metric
    names and a row of units; a metric a file lacks (e.g. _CA without elapsed) shows –."""
    names: list[str] = []
    for _, _, scores in scored:
        names += [k for k in _metric_names(scores) if k not in names]
    header = ["records", "n", *names]
    units = ["", "", *(_unit(name, text_input) for name in names)]
    rows = [[str(path), str(scores["n"]), *(_shown(scores[k]) if k in scores else "–"
                                            for k in names)]
            for path, _, scores in scored]
    widths = [max(len(row[c]) for row in [header, units, *rows]) for c in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(cell.ljust(w) if c == 0 else cell.rjust(w)
                         for c, (cell, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    return "\n".join(line(cells) for cells in [header, units, *rows])


def _signatures(scored: list[tuple[str | Path, dict]]) -> str:
    """The sacrebleu signatures of BLEU and chrF: once when every file has the same, else
    one line per file."""
    lines = []
    for key in ("BLEU_signature", "chrF_signature"):
        values = {str(path): scores[key] for path, scores in scored}
        if len(set(values.values())) == 1:
            lines.append(f"{key}: {next(iter(values.values()))}")
        else:
            lines += [f"{key} ({path}): {value}" for path, value in values.items()]
    return "\n".join(lines)


_FIXED_LEGEND = {
    "BLEU": "corpus BLEU of the detokenized output against the references (sacrebleu, 13a; "
            "the BLEU_signature line says how it was computed)",
    "chrF": "corpus chrF (sacrebleu; the chrF_signature line)",
    "length_diff": "mean hypothesis words − reference words per segment",
    **anticipation.LEGEND,
}


def legend(scores: dict, *, text_input: bool = False) -> str:
    """What each metric of ``scores`` is (the first paragraph of its registered function's
    documentation), so that a table of numbers says what they mean. ``text_input``: the
    records' delays count source words, and the legend says so where a metric says ms."""
    import inspect
    import re
    import textwrap

    delay = ("the source words read when the word was complete" if text_input else
             "the source read, ms, when the word was complete")
    lines = [f"What the numbers are (a word's delay: {delay}):"]
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
        if text_input:
            text = re.sub(r", ms\b", ", source words", text)  # "AL, ms (…)", "…, ms:"
        if text:
            lines += textwrap.wrap(f"{base}: {text}", width=100, initial_indent="  ",
                                   subsequent_indent="      ")
    if any(name.endswith("_CA") for name in scores):
        lines += textwrap.wrap(
            "_CA: the same metric, computation-aware: on elapsed times (a word's delay plus all "
            "computation spent on its segment until it was written), SimulEval's definition.",
            width=100, initial_indent="  ", subsequent_indent="  ")
    if "AL_N21" in scores:
        lines += textwrap.wrap(
            "AL_N21 and AL_N21_orig exceed AL when a step writes many words (offline: every "
            "word at once): eq. (6)'s step form weights a step's lag by its words.",
            width=100, initial_indent="  ", subsequent_indent="  ")
    return "\n".join(lines)


def _unit(name: str, text_input: bool = False) -> str:
    """The unit of metric ``name``'s values; latencies of text records count source words."""
    base = name.removesuffix("_CA")
    if base == "length_diff":
        return "words"
    if base in anticipation.LEGEND:
        return "(ratio)"
    if base in MEASURED_IN:
        if MEASURED_IN[base] == "ratio":
            return "(ratio)"
        return "source words" if text_input else MEASURED_IN[base]
    return ""  # BLEU, chrF, signatures
