"""Score a set of instance records: quality (sacrebleu) and every latency metric.

``read_any`` reads simul's records or a SimulEval ``instances.log`` (both JSON lines with
SimulEval's fields) and refuses malformed ones; ``score_records`` computes the metrics;
``main_score`` prints them (``simul score RECORDS [--json]``).
"""

from __future__ import annotations

import json
import logging
import math
import numbers
from collections.abc import Sequence
from pathlib import Path

from simul.metrics.latency import LATENCY, PAPER_METRICS, SIMULEVAL_METRICS, corpus_latency
from simul.metrics.quality import corpus_quality
from simul.records import Record

log = logging.getLogger(__name__)

SIMULEVAL_FIELDS = ("index", "prediction", "delays", "elapsed", "prediction_length",
                    "reference", "source_length", "source")
"""Fields of a SimulEval 1.1 ``instances.log`` line; every record must have them."""

CA_PAPER_METRICS = ("AL_M20",)
"""Papers' variants that have a computation-aware form (Ma et al. 2020 defines AL_CA)."""


def reference_length(reference: str) -> int:
    """|Y*| in words, as SimulEval counts it: ``len(reference.split(" "))``."""
    return len(reference.split(" "))


def has_elapsed(record: Record) -> bool:
    """Whether the record carries one elapsed time per output word."""
    return len(record.elapsed) == len(record.delays)


def _is_number(x: object) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)


def check(data: dict, where: str) -> None:
    """Refuse a record (as a dict of its fields) that the metrics cannot trust.

    Raises ``ValueError`` naming ``where`` (file and line, or record number) and the field.
    """
    for name in SIMULEVAL_FIELDS:
        if name not in data:
            raise ValueError(f"{where}: missing field '{name}'")

    def bad(name: str, why: str) -> ValueError:
        return ValueError(f"{where}: field '{name}': {why}")

    if not isinstance(data["index"], int) or isinstance(data["index"], bool):
        raise bad("index", f"not an integer ({data['index']!r})")
    for name in ("prediction", "reference"):
        if not isinstance(data[name], str):
            raise bad(name, f"not a string ({type(data[name]).__name__})")
    if not _is_number(data["source_length"]) or not data["source_length"] > 0:
        raise bad("source_length", f"not a positive number of ms ({data['source_length']!r})")
    for name in ("delays", "elapsed"):
        values = data[name]
        if not isinstance(values, list | tuple) or not all(map(_is_number, values)):
            raise bad(name, "not a list of finite numbers")
        if any(v < 0 for v in values):
            raise bad(name, "negative value")
        for k in range(1, len(values)):
            if values[k] < values[k - 1]:
                raise bad(name, f"not non-decreasing ({name}[{k}] = {values[k]} < "
                                f"{name}[{k - 1}] = {values[k - 1]})")
    delays, elapsed = data["delays"], data["elapsed"]
    words = len(data["prediction"].split())
    if len(delays) != words:
        raise bad("delays", f"{len(delays)} delays for {words} words in the prediction")
    length = data["prediction_length"]
    if not isinstance(length, int) or isinstance(length, bool) or length != len(delays):
        raise bad("prediction_length", f"{length!r}, but there are {len(delays)} delays")
    if elapsed:
        if len(elapsed) != len(delays):
            raise bad("elapsed", f"{len(elapsed)} elapsed for {len(delays)} delays")
        for k, (e, d) in enumerate(zip(elapsed, delays, strict=True)):
            if e < d:
                raise bad("elapsed", f"elapsed[{k}] = {e} < delays[{k}] = {d} "
                                     "(elapsed is the delay plus compute time)")


def read_any(path: str | Path) -> list[Record]:
    """Read simul records or a SimulEval ``instances.log`` (JSON lines) into Records.

    Fields that Record does not know (e.g. SimulEval's ``prediction_spm``) are ignored;
    simul's own fields keep their defaults when absent. Every line is checked (:func:`check`).
    """
    path = Path(path)
    fields = set(Record.__dataclass_fields__)
    records = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path}: line {n}"
            try:
                data = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{where}: not JSON ({e})") from e
            if not isinstance(data, dict):
                raise ValueError(f"{where}: not a JSON object")
            check(data, where)
            records.append(Record(**{k: v for k, v in data.items() if k in fields}))
    if not records:
        raise ValueError(f"{path}: no records")
    return records


def score_records(records: Sequence[Record]) -> dict[str, float | str]:
    """Corpus quality and latency of ``records``, by metric name.

    Keys, in order: BLEU, chrF; the SimulEval metrics (AL, LAAL, DAL, AP, ATD, StartOffset,
    EndOffset, RTF); their ``_CA`` forms when every record has ``elapsed``; the papers'
    variants (AL_N21, AL_N21_orig, AL_M20, AL_M20_CA when every record has ``elapsed``,
    AL_K22); ``length_diff`` (mean hypothesis − reference words, Papi et al. 2022 Table 2);
    BLEU_signature, chrF_signature; ``n`` (number of records). Latency in ms except AP and
    RTF (ratios). A latency is NaN when no record has an output word.
    """
    if not records:
        raise ValueError("no records to score")
    for k, r in enumerate(records):
        check(r.__dict__, f"record {k} (index {r.index})")
    delays = [r.delays for r in records]
    source_lengths = [r.source_length for r in records]
    reference_lengths = [reference_length(r.reference) for r in records]
    elapsed = [r.elapsed for r in records] if all(map(has_elapsed, records)) else None
    empty = [r.index for r in records if not r.delays]
    if empty:
        log.warning("%d of %d records have no output word and are left out of the latency "
                    "means (as SimulEval does); their index: %s%s", len(empty), len(records),
                    empty[:20], " ..." if len(empty) > 20 else "")

    quality = corpus_quality([r.prediction for r in records], [r.reference for r in records])
    scores: dict[str, float | str] = {"BLEU": quality.bleu, "chrF": quality.chrf}

    def latency(name: str, computation_aware: bool = False) -> float:
        return corpus_latency(name, delays, source_lengths, reference_lengths,
                              elapsed if computation_aware else None, warn_skipped=False)

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
    scores["BLEU_signature"] = quality.bleu_signature
    scores["chrF_signature"] = quality.chrf_signature
    scores["n"] = quality.n
    return scores


def main_score(path: str | Path, as_json: bool) -> int:
    """Print every metric of the records at ``path``: a table, or one JSON object."""
    scores = score_records(read_any(path))
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
        print(f"{name:<{width}}  {text}  {_unit(name)}".rstrip())
    return 0


def _unit(name: str) -> str:
    base = name.removesuffix("_CA")
    if base in ("BLEU", "chrF"):
        return ""
    if base in ("AP", "RTF"):
        return "(ratio)"
    if base == "length_diff":
        return "words"
    if base in LATENCY:
        return "ms"
    return ""
