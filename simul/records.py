"""Instance records: one per utterance, SimulEval's ``instances.log`` fields plus simul's own.

Records are JSON lines. The SimulEval fields (``index``, ``prediction``, ``delays``,
``elapsed``, ``prediction_length``, ``reference``, ``source_length``, ``source``) keep their
names and units (delays and elapsed in ms of source audio, one per output word), so
``simuleval --score-only`` can read a folder of ours.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path


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
    units: list[str] = field(default_factory=list)
    trace: list[tuple[float, int]] = field(default_factory=list)  # (ms read, units written)
    model: str = ""
    policy: str = ""
    settings: dict = field(default_factory=dict)
    segment_id: str = ""
    source_text: str = ""


def write(records: Iterable[Record], path: str | Path) -> Path:
    """Write records as JSON lines, atomically (a temporary file renamed into place)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w") as f:
        for r in records:
            f.write(json.dumps(asdict(r), ensure_ascii=False) + "\n")
    tmp.replace(path)
    return path


def read(path: str | Path) -> Iterator[Record]:
    fields = set(Record.__dataclass_fields__)
    with open(path) as f:
        for n, line in enumerate(f, 1):
            try:
                data = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}: line {n}: not JSON ({e})") from e
            yield Record(**{k: v for k, v in data.items() if k in fields})


SIMULEVAL_FIELDS = ("index", "prediction", "delays", "elapsed", "prediction_length",
                    "reference", "source_length", "source")


def write_simuleval_dir(records: Iterable[Record], out_dir: str | Path) -> Path:
    """A folder ``simuleval --score-only --output DIR`` reads: ``instances.log`` (SimulEval's
    fields only) and ``config.yaml`` (speech in, text out)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "config.yaml").write_text("source_type: speech\ntarget_type: text\n")
    with open(out_dir / "instances.log", "w") as f:
        for r in records:
            data = asdict(r)
            f.write(json.dumps({k: data[k] for k in SIMULEVAL_FIELDS}, ensure_ascii=False)
                    + "\n")
    return out_dir
