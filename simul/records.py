"""Instance records: one per utterance, SimulEval's ``instances.log`` fields plus simul's own.

Records are JSON lines. The SimulEval fields (:data:`SIMULEVAL_FIELDS`: ``index``,
``prediction``, ``delays``, ``elapsed``, ``prediction_length``, ``reference``,
``source_length``, ``source``) keep their names and units (delays and elapsed in ms of
source audio, one per output word), so ``simuleval --score-only`` can read a folder of ours
(:func:`write_simuleval_dir`) and :func:`read` reads SimulEval's ``instances.log``.

:func:`read` is the one reader of a record file: it checks every line (:func:`check`) and
names the file, line and field of anything the metrics could not trust.
"""

from __future__ import annotations

import json
import math
import numbers
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

SIMULEVAL_FIELDS = ("index", "prediction", "delays", "elapsed", "prediction_length",
                    "reference", "source_length", "source")
"""Fields of a SimulEval 1.1 ``instances.log`` line; every record has them."""


SOURCE_TYPES = ("speech", "text")
"""What a record's source was: audio (delays in ms) or text a word at a time (in words)."""


@dataclass
class Record:
    index: int
    prediction: str
    delays: list[float]
    elapsed: list[float]
    prediction_length: int
    reference: str
    source_length: float
    source: list[str]
    units: list[str] = field(default_factory=list)  # output units as text pieces
    # how the pieces of `units` make words (simul.metrics.units: "char", "bpe", "bpe@@");
    # "" in records written before the field existed and in SimulEval logs
    unit_type: str = ""
    trace: list[tuple[float, int]] = field(default_factory=list)  # (ms read, units written)
    model: str = ""
    policy: str = ""
    settings: dict = field(default_factory=dict)
    segment_id: str = ""
    source_text: str = ""
    # where it was decoded (simul.models.device.label: "cpu", "cuda:0 (GPU name)"); "" in
    # records written before the field existed (all decoded on the CPU) and in SimulEval logs
    device: str = ""
    # utterances decoded in lockstep with this one (simul.sweep.lockstep: equal-length prefixes
    # encoded in one batch, each encode charged the time of encoding its prefix alone);
    # 1: decoded alone, as every record written before the field existed
    lockstep: int = 1
    # "speech": delays, elapsed and source_length in ms of audio; "text" (simul.decoding.text): the
    # source arrived a word at a time, and they count source words, as SimulEval's
    # text-to-text evaluation does (no elapsed: SimulEval has no computation-aware latency
    # for text input)
    source_type: str = "speech"


def line(record: Record) -> str:
    """A record as one JSON line (with its newline)."""
    return json.dumps(asdict(record), ensure_ascii=False) + "\n"


def write(records: Iterable[Record], path: str | Path) -> Path:
    """Write records as JSON lines, atomically (a temporary file renamed into place)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as f:
        for r in records:
            f.write(line(r))
    tmp.replace(path)
    return path


class Appender:
    """Records written one at a time as they are made, each line flushed to the file at
    once, so that a run stopped half-way (Ctrl-C, a killed process) keeps every record it
    finished. The file is opened at the first record (a run that finishes none leaves it
    as it was): emptied first, or appended to with ``append``."""

    def __init__(self, path: str | Path, *, append: bool = False):
        self.path, self.append, self.written = Path(path), append, 0
        self._file = None

    def add(self, record: Record) -> None:
        if self._file is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "a" if self.append else "w", encoding="utf-8")
        self._file.write(line(record))
        self._file.flush()
        self.written += 1

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> Appender:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def cut_partial_line(path: str | Path) -> bool:
    """Remove a last line that was not written to its end (no newline: a process killed in
    the middle of writing it); True when there was one."""
    path = Path(path)
    data = path.read_bytes()
    if not data or data.endswith(b"\n"):
        return False
    with open(path, "r+b") as f:
        f.truncate(data.rfind(b"\n") + 1)
    return True


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
    source_type = data.get("source_type", "speech")
    if source_type not in SOURCE_TYPES:
        raise bad("source_type", f"{source_type!r}, not one of {', '.join(SOURCE_TYPES)}")
    unit = "ms" if source_type == "speech" else "source words"
    if not _is_number(data["source_length"]) or not data["source_length"] > 0:
        raise bad("source_length", f"not a positive number of {unit} "
                                   f"({data['source_length']!r})")
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


def _simuleval_source_type(log: Path) -> str | None:
    """The ``source_type`` of the SimulEval run whose ``instances.log`` is ``log``: what the
    ``config.yaml`` SimulEval writes beside it says ("speech" or "text"); None without one
    (or for a file of another name: simul's records say their own source type).
    (Its ``target_type`` is not read: SimulEval 1.1.4 writes the source type there too.)"""
    config = log.with_name("config.yaml")
    if log.name != "instances.log" or not config.is_file():
        return None
    import yaml

    try:
        data = yaml.safe_load(config.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise ValueError(f"{config}: not SimulEval's YAML ({' '.join(str(e).split())})") from e
    kind = data.get("source_type") if isinstance(data, dict) else None
    if kind is None:
        return None
    if kind not in SOURCE_TYPES:
        raise ValueError(f"{config}: source_type {kind!r}: simul scores text output of "
                         f"{' or '.join(SOURCE_TYPES)} input")
    return kind


def _from_simuleval_text(data: dict, config_type: str | None) -> bool:
    """Whether ``data``, a line without simul's ``source_type``, is SimulEval's text-to-text
    log: its ``config.yaml`` says so, or (without one) the line is as only a text instance
    writes it: the source a string of words, and ``elapsed`` all zeros (SimulEval's
    ``TextInputInstance`` records no computation time, its delays count source words)."""
    if "source_type" in data:
        return False
    if config_type is not None:
        return config_type == "text"
    elapsed = data.get("elapsed")
    return (isinstance(data.get("source"), str) and isinstance(elapsed, list)
            and bool(elapsed) and all(v == 0 for v in elapsed))


def read(path: str | Path) -> list[Record]:
    """Read simul records or a SimulEval ``instances.log`` (JSON lines; or the folder that
    holds it, SimulEval's ``--output``), checking each line.

    Fields that Record does not know (e.g. SimulEval's ``prediction_spm``) are ignored;
    simul's own fields keep their defaults when absent (a SimulEval log, or records written
    before a field existed). Blank lines are skipped. Every line is checked (:func:`check`);
    errors name the file, the line and the field.

    A SimulEval text-to-text log (its ``config.yaml`` says ``source_type: text``, or, without
    one, see :func:`_from_simuleval_text`) reads as text records: delays and
    ``source_length`` in source words, and no ``elapsed`` (SimulEval writes zeros there, so
    there is no computation-aware latency to compute).
    """
    path = Path(path)
    if path.is_dir():  # SimulEval's output folder
        if not (path / "instances.log").is_file():
            raise ValueError(f"{path}: a folder without instances.log (give simul records, a "
                             "SimulEval instances.log or the folder that holds one)")
        path = path / "instances.log"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    config_type = _simuleval_source_type(path)
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
            if _from_simuleval_text(data, config_type):
                source = data.get("source")
                data = {**data, "source_type": "text", "elapsed": [],
                        "source": [source] if isinstance(source, str) else source}
            check(data, where)
            records.append(Record(**{k: v for k, v in data.items() if k in fields}))
    return records


def write_simuleval_dir(records: Iterable[Record], out_dir: str | Path) -> Path:
    """A folder ``simuleval --score-only --output DIR`` reads: ``instances.log`` (SimulEval's
    fields only) and ``config.yaml`` (speech or text in, as the records say; text out)."""
    records = list(records)
    kinds = {r.source_type for r in records} or {"speech"}
    if len(kinds) > 1:
        raise ValueError("records of speech and of text input: write them apart")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "config.yaml").write_text(f"source_type: {kinds.pop()}\ntarget_type: text\n")
    with open(out_dir / "instances.log", "w") as f:
        for r in records:
            data = asdict(r)
            f.write(json.dumps({k: data[k] for k in SIMULEVAL_FIELDS}, ensure_ascii=False)
                    + "\n")
    return out_dir
