"""Sweeps: models × splits × a grid of policy settings → records and a summary table.

A spec (YAML file or dict) names what to run::

    name: n21_table1
    models: [blstm_char_en-es]            # shipped names or ESPnet2 ST model directories
    pair: en-es
    splits: [tst-COMMON, tst-HE]
    corpus: data/mini                     # default: the embedded mini corpus
    max_utterances: 50                    # default: the whole split
    output: runs/n21_table1
    policies:
      - policy: wait_k_frames
        grid: {k: [100, 200], s: [10, 20], n: [1, 2, 3]}   # every combination
        fixed: {maxlenratio: 1.6}                     # added to each
      - policy: wait_k_frames
        settings: [{k: 100, s: 10, n: 2}, {k: 200, s: 20, n: 1}]   # or a list
      - policy: offline
    store: true                           # default: reuse and fill the record store
    device: cpu                           # default; or cuda, cuda:N
    lockstep: 1                           # default; N: N utterances per task, in lockstep

:func:`run` decodes every utterance once per (model, split) under all settings, in that
order, with the settings sharing what they compute (:mod:`simul.shared`: encoder outputs of
a prefix, identical decoder calls), then writes

- ``records/<model>/<split>/<policy>/<setting>.jsonl`` — one record per utterance;
- ``summary.csv`` — one row per (model, split, policy, setting): its parameters
  (``param_<name>``), every metric of ``simul score`` (its ``n`` named ``utterances``),
  ``records`` (the path of its records, relative to the output; :func:`run` and
  :func:`read_summary` return it absolute) and provenance (simul version, git commit, model
  and corpus checksums, sacrebleu signature, machine, ``device``: the devices its records
  were decoded on, e.g. ``cpu`` or ``cuda:0 (NVIDIA H100 80GB HBM3)``; ``from_store`` and
  ``decoded``: how many of its records were taken from the record store and how many this
  sweep decoded);
- ``journal/<model>/<split>.jsonl`` — the work done, one line per utterance, appended and
  flushed as each utterance completes. A sweep killed at any point and started again
  with the same spec skips what the journal holds (a torn last line is cut off);
- ``sweep.json`` — the spec's fingerprint (settings, model and corpus checksums). A
  different spec in the same output directory is refused unless ``force``, which starts
  over.

The record store (:mod:`simul.store`, ``~/.cache/simul/records``) is shared by all sweeps:
before an utterance is decoded, the settings whose records it holds (same model and corpus
checksums, segment, policy settings and decoding code) are taken from it, whole (measured
times included), and only the others are decoded, then stored. The client looks up and
writes the store (workers never see it), so a cluster's nodes need not share it. Records
are the same either way; ``store: false`` (``simul sweep --no-store``) turns it off.

Execution is local (in this process with ``workers=1``, else a process pool, one per
core by default) or on a Dask distributed cluster (``scheduler="tcp://host:port"`` or a
``distributed.Client``). Tasks are utterances: the client reads the corpus and sends each
segment's audio; workers load the models from the spec's paths, so a cluster needs them
on a shared file system (or the same paths on every node) and simul installed.
Records are identical whatever the execution, but for the measured times.

Lockstep. With ``lockstep: N`` a task is N utterances of similar length (the same model,
the same settings to decode), decoded together by :mod:`simul.lockstep`: whenever they all
wait for the encoder, their equal-length prefixes are encoded in one batch. Each record
says how many were decoded together (``lockstep``; the summary's ``lockstep`` column has
the largest), and is charged, in its computation-aware times, what encoding its prefixes
alone costs (timed in the same step), so CA latency stays single-stream. Units are those
of decoding each utterance alone, but where batched float rounding flips a near-tie
(``benchmarks/lockstep.py`` counts them).

Device. Models decode on the spec's ``device`` (``simul sweep --device``, ``run(device=)``
override it): ``cpu`` by default, ``cuda`` or ``cuda:N``. A device torch cannot reach is
refused before any work (locally; with a Dask scheduler the client only checks the name,
since its own machine may have no GPU, and the workers refuse it when they load a model).
On the CPU the default is one worker process per core; with ``cuda`` one per GPU torch sees,
worker *i* on ``cuda:i`` (round robin when ``workers`` asks for more); with ``cuda:N`` one
worker, on that GPU (``workers`` asks for more, which share it). Dask workers load the models
on ``device`` as given: with ``cuda``, each worker's current GPU (dask-cuda gives each its
own). Decisions are timed with the device's clock (:func:`simul.models.device.timing_clock`:
on a GPU it waits for the queued kernels). The record store keys records by the device's
kind (``cpu``, ``cuda``), so a GPU sweep never takes CPU records or the reverse, and a
sweep's output directory holds one kind: resuming a ``cuda`` sweep on the CPU (or the
reverse) is refused as a different spec. The GPU paths have not been run on a GPU.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import itertools
import json
import multiprocessing
import os
import platform
import re
import shutil
import subprocess
import time
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from tqdm.auto import tqdm

from simul import store as record_store
from simul.corpus import DEFAULT_ROOT, Segment, load
from simul.corpus import manifest as corpus_manifest
from simul.corpus.mustc import find_split_dir
from simul.metrics.score import score_records
from simul.models import device as devices
from simul.policies import make, registry
from simul.records import Record
from simul.records import write as write_records

SPEC_FIELDS = ("name", "models", "pair", "splits", "corpus", "max_utterances", "output",
               "policies", "share", "workers", "scheduler", "store", "device", "lockstep")
POLICY_FIELDS = ("policy", "grid", "settings", "fixed")


class SweepError(ValueError):
    """A bad spec, or an output directory that holds another sweep."""


# --------------------------------------------------------------------------- the spec
@dataclass(frozen=True)
class Setting:
    """One policy with the parameters the spec gave it (the rest keep their defaults)."""

    policy: str
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def slug(self) -> str:
        """A file name: ``k=100_s=10_n=1`` (``default`` without parameters)."""
        text = "_".join(f"{k}={v}" for k, v in self.params) or "default"
        return re.sub(r"[^A-Za-z0-9=._+-]", "-", text)

    def make(self):
        return make(self.policy, dict(self.params))


@dataclass
class Spec:
    models: list[str]
    pair: str
    splits: list[str]
    settings: list[Setting]
    output: Path
    corpus: Path = DEFAULT_ROOT
    max_utterances: int | None = None
    share: bool = True
    workers: int | None = None
    scheduler: Any = None  # "tcp://host:port" or a distributed.Client
    name: str = ""
    store: bool = True  # reuse and fill the record store (simul.store)
    device: str = "cpu"  # where models decode: cpu, cuda, cuda:N (simul.models.device)
    lockstep: int = 1  # utterances per task, decoded in lockstep (simul.lockstep)

    @classmethod
    def load(cls, spec: Spec | dict | str | Path) -> Spec:
        """A spec from a YAML file, a dict (as in the file) or a Spec."""
        if isinstance(spec, Spec):
            return spec
        if isinstance(spec, dict):
            return cls.from_dict(spec, "spec")
        path = Path(spec)
        if not path.is_file():
            raise SweepError(f"{path}: no such spec file")
        try:
            data = yaml.safe_load(path.read_text())
        except yaml.YAMLError as e:
            raise SweepError(f"{path}: not valid YAML ({e})") from e
        return cls.from_dict(data, str(path), base=path.parent)

    @classmethod
    def from_dict(cls, data: Any, where: str = "spec", base: Path | None = None) -> Spec:
        if not isinstance(data, dict):
            raise SweepError(f"{where}: a spec is a mapping with fields {', '.join(SPEC_FIELDS)}")
        unknown = sorted(set(data) - set(SPEC_FIELDS))
        if unknown:
            raise SweepError(f"{where}: unknown field(s) {unknown}; known: {list(SPEC_FIELDS)}")
        for key in ("models", "pair", "output", "policies"):
            if key not in data:
                raise SweepError(f"{where}: field '{key}' is missing")

        def strings(key: str) -> list[str]:
            value = data.get(key)
            value = [value] if isinstance(value, str) else value
            if not isinstance(value, list) or not value or not all(
                    isinstance(v, str) and v for v in value):
                raise SweepError(f"{where}: field '{key}': a name or a non-empty list of names")
            return value

        models, splits = strings("models"), strings("splits") if "splits" in data else [
            "tst-COMMON"]
        if not isinstance(data["pair"], str) or not re.fullmatch(r"[a-z]+-[a-z]+", data["pair"]):
            raise SweepError(f"{where}: field 'pair': expected e.g. 'en-es', got {data['pair']!r}")
        limit = data.get("max_utterances")
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool)
                                  or limit < 1):
            raise SweepError(f"{where}: field 'max_utterances': a positive integer or null, "
                             f"got {limit!r}")
        workers = data.get("workers")
        if workers is not None and (not isinstance(workers, int) or workers < 1):
            raise SweepError(f"{where}: field 'workers': a positive integer, got {workers!r}")
        lockstep = data.get("lockstep", 1)
        if not isinstance(lockstep, int) or isinstance(lockstep, bool) or lockstep < 1:
            raise SweepError(f"{where}: field 'lockstep': a positive integer (utterances "
                             f"decoded together; 1: each alone), got {lockstep!r}")
        for key in ("share", "store"):
            if not isinstance(data.get(key, True), bool):
                raise SweepError(f"{where}: field '{key}': true or false")
        device = devices.CPU if data.get("device") is None else data["device"]
        if not isinstance(device, str):
            raise SweepError(f"{where}: field 'device': cpu, cuda or cuda:N, got {device!r}")
        try:  # whether torch reaches it is checked when the sweep runs (--device overrides)
            device = devices.parse(device, f"{where}: field 'device': {device}")
        except ValueError as e:
            raise SweepError(str(e)) from None

        def path(value: Any, key: str) -> Path:
            if not isinstance(value, str | Path):
                raise SweepError(f"{where}: field '{key}': a path, got {value!r}")
            p = Path(value).expanduser()
            return p if p.is_absolute() or base is None else base / p

        return cls(
            models=models, pair=data["pair"], splits=splits,
            settings=expand(data["policies"], f"{where}: field 'policies'"),
            output=path(data["output"], "output"),
            corpus=path(data["corpus"], "corpus") if data.get("corpus") else DEFAULT_ROOT,
            max_utterances=limit, share=data.get("share", True), workers=workers,
            scheduler=data.get("scheduler"), name=str(data.get("name") or ""),
            store=data.get("store", True), device=device, lockstep=lockstep,
        )


def expand(policies: Any, where: str) -> list[Setting]:
    """The settings a ``policies`` list stands for, each checked by building the policy."""
    if not isinstance(policies, list) or not policies:
        raise SweepError(f"{where}: a non-empty list of {{policy: NAME, grid: ..., ...}}")
    known = registry()
    out: list[Setting] = []
    seen: dict[tuple, str] = {}
    for n, entry in enumerate(policies):
        here = f"{where}[{n}]"
        if not isinstance(entry, dict) or "policy" not in entry:
            raise SweepError(f"{here}: a mapping with a 'policy' field")
        unknown = sorted(set(entry) - set(POLICY_FIELDS))
        if unknown:
            raise SweepError(f"{here}: unknown field(s) {unknown}; known: {list(POLICY_FIELDS)}")
        name = entry["policy"]
        if name not in known:
            raise SweepError(f"{here}.policy: unknown policy {name!r}; known: {sorted(known)}")
        grid, fixed = entry.get("grid") or {}, entry.get("fixed") or {}
        listed = entry.get("settings")
        if not isinstance(grid, dict) or not all(
                isinstance(v, list) and v for v in grid.values()):
            raise SweepError(f"{here}.grid: a mapping of parameter → non-empty list of values")
        if not isinstance(fixed, dict):
            raise SweepError(f"{here}.fixed: a mapping of parameter → value")
        if listed is not None and (not isinstance(listed, list) or not all(
                isinstance(s, dict) for s in listed)):
            raise SweepError(f"{here}.settings: a list of mappings of parameter → value")
        combos = [dict(zip(grid, values, strict=True))
                  for values in itertools.product(*grid.values())] if grid else []
        combos += listed or []
        for combo in combos or [{}]:
            params = {**fixed, **combo}
            setting = Setting(name, tuple(params.items()))
            try:
                policy = setting.make()
            except (ValueError, TypeError) as e:
                raise SweepError(f"{here}: {e}") from e
            full = (name, json.dumps(policy.settings(), sort_keys=True, default=str))
            if full in seen:
                raise SweepError(f"{here}: setting {setting.slug} repeats {seen[full]}")
            seen[full] = f"{here} {setting.slug}"
            out.append(setting)
    return out


# --------------------------------------------------------------------------- fingerprints
def _sha256(paths: Iterable[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(corpus_manifest.sha256(Path(p)).encode())
    return h.hexdigest()


@dataclass(frozen=True)
class ModelRef:
    """A model as workers find it: a label for records, its directory, its checksum."""

    label: str
    directory: str
    checksum: str  # SHA-256 of config.yaml and the model file


def resolve_model(ref: str) -> ModelRef:
    from simul.models.espnet_st import resolve_model_dir
    from simul.models.zoo import MODELS_DIR, shipped

    directory = MODELS_DIR / ref if ref in shipped() else Path(ref).expanduser()
    if not directory.is_dir():
        raise SweepError(f"no model {ref!r}: not a shipped model ({', '.join(shipped())}) nor "
                         "a directory")
    from simul.models import cascade

    if cascade.is_cascade(directory):
        try:
            files = cascade.files(directory)
        except ValueError as e:
            raise SweepError(str(e)) from None
        return ModelRef(directory.name, str(directory.resolve()), _sha256(files))
    config, model_file = resolve_model_dir(directory)
    return ModelRef(directory.name, str(directory.resolve()), _sha256([config, model_file]))


def corpus_checksum(root: Path, pair: str, split: str) -> str:
    """The manifest's checksum for a simul-built corpus; else the split's text files'."""
    for candidate in (Path(root), Path(root).parent):
        if (candidate / corpus_manifest.NAME).is_file():
            return corpus_manifest.sha256(candidate / corpus_manifest.NAME)
    txt = find_split_dir(root, pair, split) / "txt"
    return _sha256(sorted(p for p in txt.iterdir() if p.is_file()))


def git_commit() -> str | None:
    """The commit simul runs from (``-dirty`` with uncommitted changes); None outside git."""
    repo = Path(__file__).resolve().parents[1]
    if not (repo / ".git").exists():
        return None
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], text=True,
                              capture_output=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--", "simul"],
                               text=True, capture_output=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("-dirty" if dirty else "")


def machine() -> str:
    import torch

    return (f"{platform.node()} {platform.machine()} {os.cpu_count()} cpu "
            f"torch {torch.__version__} threads {torch.get_num_threads()}")


# --------------------------------------------------------------------------- the journal
class Journal:
    """Utterances done for one (model, split): a JSON line each, appended and fsynced."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def read(self) -> dict[int, list[dict]]:
        """Position in the split → records (one per setting); cuts off a torn last line."""
        return {pos: entry["records"] for pos, entry in self.entries().items()}

    def entries(self) -> dict[int, dict]:
        """Position in the split → its line (``records``, ``segment_id``, ``from_store``
        when written); cuts off a torn last line."""
        if not self.path.is_file():
            return {}
        done: dict[int, dict] = {}
        good = 0
        with open(self.path, "rb") as f:
            data = f.read()
        for line in data.splitlines(keepends=True):
            if not line.endswith(b"\n"):
                break
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                break
            done[entry["position"]] = entry
            good += len(line)
        if good < len(data):  # killed while writing: drop the partial line
            with open(self.path, "r+b") as f:
                f.truncate(good)
        return done

    def append(self, position: int, segment_id: str, records: list[dict],
               from_store: list[bool] | None = None,
               seconds: list[float | None] | None = None) -> None:
        """Journal an utterance; ``from_store``: which records came from the record store;
        ``seconds``: the wall time each record took to decode here (None: from the store),
        which ``benchmarks/reproduce_profile.py`` adds up."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        entry = {"position": position, "segment_id": segment_id, "records": records}
        if from_store is not None:
            entry["from_store"] = from_store
        if seconds is not None:
            entry["seconds"] = [None if x is None else round(x, 4) for x in seconds]
        line = json.dumps(entry, ensure_ascii=False)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())


# --------------------------------------------------------------------------- the work
_MODELS: dict[tuple[str, str, str], Any] = {}
_WORKER_DEVICE: str | None = None
"""The GPU this pool worker was given (``cuda`` sweeps over several GPUs); None elsewhere."""


def _model(ref: ModelRef, device: str = devices.CPU):
    from simul.models.zoo import load_dir

    key = (ref.directory, ref.checksum, device)
    if key not in _MODELS:
        _MODELS[key] = load_dir(ref.directory, device)
    return _MODELS[key]


def decode_utterance(ref: ModelRef, settings: list[Setting], segment: Segment, *,
                     share: bool = True, threads: int | None = None,
                     device: str = devices.CPU, seconds: list[float] | None = None
                     ) -> list[dict]:
    """One utterance under every setting (in order), sharing computations when ``share``,
    with the model on ``device``; the records as dicts. Workers run it
    (:func:`_decode_task`) for each :data:`Task`. ``seconds``, when given, receives each
    setting's wall time (with sharing, a computation is timed in the first setting that
    makes it: the profile of what a sweep spends, not a setting's cost alone)."""
    import torch

    from simul.shared import SharedCalls
    from simul.simulate import simulate

    if threads:
        torch.set_num_threads(threads)
    model = _model(ref, device)
    shared = SharedCalls(model) if share else None
    records = []
    for s in settings:
        t0 = time.perf_counter()
        records.append(asdict(simulate(shared or model, s.make(), segment,
                                       model_name=ref.label)))
        if seconds is not None:
            seconds.append(time.perf_counter() - t0)
    return records


def decode_lockstep(ref: ModelRef, settings: list[Setting], segments: list[Segment], *,
                    share: bool = True, threads: int | None = None,
                    device: str = devices.CPU) -> list[tuple[list[dict], list[float]]]:
    """Several utterances under every setting, decoded in lockstep (:mod:`simul.lockstep`:
    equal-length prefixes encoded in one batch); per utterance, its records (``lockstep``
    set to the number of utterances) and each setting's share of the wall time (the
    group's wall time split in proportion to the settings' charged compute)."""
    import torch

    from simul.lockstep import Lockstep
    from simul.shared import SharedCalls
    from simul.simulate import simulate

    if threads:
        torch.set_num_threads(threads)
    model = _model(ref, device)

    def job(segment: Segment):
        def decode(lane_model, clock):
            shared = SharedCalls(lane_model, clock=clock) if share else None
            records, charged = [], []
            for s in settings:
                t0 = clock()
                rec = asdict(simulate(shared or lane_model, s.make(), segment,
                                      model_name=ref.label, clock=clock))
                rec["lockstep"] = len(segments)
                records.append(rec)
                charged.append(clock() - t0)
            return records, charged
        return decode

    t0 = time.perf_counter()
    out = Lockstep(model).run([job(seg) for seg in segments])
    wall = time.perf_counter() - t0
    total = sum(sum(charged) for _, charged in out) or 1.0
    return [(records, [wall * c / total for c in charged]) for records, charged in out]


def _decode_task(ref: ModelRef, settings: list[Setting], segments: list[Segment], *,
                 share: bool = True, threads: int | None = None,
                 device: str = devices.CPU
                 ) -> tuple[str | None, list[tuple[list[dict], list[float]]]]:
    """The code version that decoded the task (the worker's: the records are stored under
    it; None when the worker's files changed since it imported them, and its records are
    not stored) and, per segment, its records under every setting and each one's wall
    seconds: :func:`decode_utterance` for one segment, :func:`decode_lockstep` for
    several. A pool worker given its own GPU decodes there."""
    device = _WORKER_DEVICE or device
    if len(segments) == 1:
        seconds: list[float] = []
        records = decode_utterance(ref, settings, segments[0], share=share, threads=threads,
                                   device=device, seconds=seconds)
        out = [(records, seconds)]
    else:
        out = decode_lockstep(ref, settings, segments, share=share, threads=threads,
                              device=device)
    code = None if record_store.code_changed() else record_store.code_version()
    return code, out


def _in_place(record: dict, ref: ModelRef, segment: Segment) -> dict:
    """A stored record with what :func:`~simul.simulate.simulate` takes from where the
    inputs are (the model's name, the segment's wav path, index and texts) set as a decode
    here would set them: the store's key names the model and the corpus by content."""
    return {**record, "model": ref.label, "index": segment.index, "reference": segment.target,
            "segment_id": segment.id, "source": [str(segment.wav), segment.id],
            "source_text": segment.source}


def _init_worker(threads: int, gpus=None) -> None:
    """A pool worker: ``threads`` torch threads; its GPU from the queue ``gpus`` (see
    :func:`worker_devices`), when given."""
    global _WORKER_DEVICE
    import queue

    import torch

    torch.set_num_threads(threads)
    if gpus is not None:
        try:
            _WORKER_DEVICE = gpus.get(timeout=60)
        except queue.Empty:  # more workers than GPUs handed out: the sweep's device
            _WORKER_DEVICE = None


def default_workers(device: str) -> int:
    """Local worker processes when neither the spec nor the caller says: one per core on
    the CPU, one per GPU torch sees with ``cuda``, one with ``cuda:N``."""
    if devices.kind(device) == devices.CPU:
        return os.cpu_count() or 1
    return max(1, devices.gpu_count()) if device == "cuda" else 1


def worker_devices(device: str, workers: int) -> list[str] | None:
    """The device of each of ``workers`` pool workers: with ``cuda`` and several GPUs,
    worker *i* on ``cuda:(i mod GPUs)``; None: all on ``device``."""
    gpus = devices.gpu_count() if device == "cuda" else 0
    if gpus < 2:
        return None
    return [f"cuda:{i % gpus}" for i in range(workers)]


Task = tuple[list[tuple[str, str, int]], ModelRef, list[Segment], list[Setting]]
"""Utterances to decode (one, or several in lockstep) under some settings: ([(model label,
split, position in the split)], the model, the segments, the settings not in the record
store, the same for each)."""
Result = tuple[tuple[str, str, int], str, str | None, list[dict], list[float]]
"""One decoded utterance: (its key, the segment id, the code version or None, the records,
each record's wall seconds)."""


def _results(keys: list[tuple[str, str, int]], segments: list[Segment],
             done: tuple[str | None, list[tuple[list[dict], list[float]]]]
             ) -> Iterator[Result]:
    code, outputs = done
    for key, seg, (records, seconds) in zip(keys, segments, outputs, strict=True):
        yield key, seg.id, code, records, seconds


def _execute(tasks: Iterator[Task], share: bool, workers: int,
             scheduler: Any, device: str = devices.CPU) -> Iterator[Result]:
    """Run tasks; yield each utterance's result as its task completes (any order)."""
    if scheduler is not None:
        yield from _execute_dask(tasks, share, scheduler, device)
        return
    if workers == 1:
        for keys, ref, segs, settings in tasks:
            yield from _results(keys, segs, _decode_task(ref, settings, segs, share=share,
                                                          device=device))
        return
    threads = max(1, (os.cpu_count() or 1) // workers)
    context = multiprocessing.get_context("spawn")
    gpus = None
    assigned = worker_devices(device, workers)
    if assigned:
        gpus = context.Queue()
        for d in assigned:
            gpus.put(d)
    with cf.ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker,
                                initargs=(threads, gpus)) as pool:
        pending: dict[cf.Future, tuple] = {}
        for task in itertools.chain(tasks, [None]):
            if task is not None:
                keys, ref, segs, settings = task
                fut = pool.submit(_decode_task, ref, settings, segs, share=share,
                                  device=device)
                pending[fut] = (keys, segs)
            while pending and (task is None or len(pending) >= 2 * workers):
                finished, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                for fut in finished:
                    keys, segs = pending.pop(fut)
                    yield from _results(keys, segs, fut.result())


def _execute_dask(tasks: Iterator[Task], share: bool, scheduler: Any,
                  device: str = devices.CPU) -> Iterator[Result]:
    from distributed import Client, as_completed

    client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
    try:
        window = 2 * max(1, sum(client.nthreads().values()))
        running = as_completed()
        meta = {}

        def submit(task: Task) -> None:
            keys, ref, segs, settings = task
            fut = client.submit(_decode_task, ref, settings, segs, share=share,
                                threads=1, device=device, pure=False)
            meta[fut.key] = (keys, segs)
            running.add(fut)

        for task in itertools.islice(tasks, window):
            submit(task)
        for fut in running:
            keys, segs = meta.pop(fut.key)
            yield from _results(keys, segs, fut.result())
            for task in itertools.islice(tasks, 1):
                submit(task)
    finally:
        if client is not scheduler:
            client.close()


# --------------------------------------------------------------------------- the runner
@dataclass
class _Job:
    """One (model, split) of the sweep: its segments, journal and what is done; each of its
    segments is a :data:`Task`."""

    ref: ModelRef
    split: str
    segments: list[Segment]
    journal: Journal
    done: dict[int, list[dict]] = field(default_factory=dict)
    from_store: dict[int, list[bool]] = field(default_factory=dict)  # of done's records
    found: dict[int, dict[int, dict]] = field(default_factory=dict)  # position → stored
    # records of some settings (index in the spec), awaiting the decode of the others


def _fingerprint(spec: Spec, refs: list[ModelRef], corpora: dict[str, str],
                 device: str = devices.CPU) -> dict:
    from simul import __version__

    out = {
        "simul": __version__,
        "models": {r.label: r.checksum for r in refs},
        "pair": spec.pair,
        "corpus": corpora,
        "max_utterances": spec.max_utterances,
        "share": spec.share,
        "settings": [[s.policy, [list(p) for p in s.params]] for s in spec.settings],
    }
    if devices.kind(device) != devices.CPU:  # CPU sweeps keep the fingerprint they had
        out["device"] = devices.kind(device)
    if spec.lockstep != 1:  # as do sweeps that decode each utterance alone
        out["lockstep"] = spec.lockstep
    return out


def _claim(output: Path, fingerprint: dict, force: bool) -> None:
    """Own ``output`` for this spec: new, same spec (resume), or ``force`` (start over)."""
    path = output / "sweep.json"
    if path.is_file():
        old = json.loads(path.read_text()).get("fingerprint", {})
        if old == fingerprint:
            return
        if not force:
            changed = sorted(k for k in set(old) | set(fingerprint)
                             if old.get(k) != fingerprint.get(k))
            raise SweepError(
                f"{output}: holds a different sweep (changed: {', '.join(changed)}); use "
                "another output directory, or --force (force=True) to discard its results")
        for name in ("journal", "records", "summary.csv", "sweep.json"):
            target = output / name
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
    output.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(".sweep.json.tmp")
    tmp.write_text(json.dumps({"fingerprint": fingerprint}, indent=1) + "\n")
    tmp.replace(path)


_WINDOW = 64
"""Utterances whose audio is read at once and decoded longest first."""


def run(spec: Spec | dict | str | Path, *, force: bool = False, progress: bool = True,
        workers: int | None = None, scheduler: Any = None, store: bool | None = None,
        device: str | None = None,
        on_result: Callable[[], None] | None = None) -> pd.DataFrame:
    """Run (or finish) a sweep; return its summary (also in ``<output>/summary.csv``).

    ``workers``, ``scheduler``, ``store`` (False: neither read nor write the record
    store) and ``device`` (``cpu``, ``cuda``, ``cuda:N``) override the spec's; a device
    torch cannot reach is refused before any work. ``on_result`` is called after each
    utterance is journaled (tests use it to stop a sweep half-way).
    """
    spec = Spec.load(spec)
    scheduler = scheduler if scheduler is not None else spec.scheduler
    asked = (f"--device {devices.normalize(device)}" if device is not None
             else f"sweep spec field 'device': {spec.device}")
    try:  # a Dask client need not have the workers' GPUs: they check when loading models
        device = (devices.parse if scheduler is not None else devices.check)(
            device if device is not None else spec.device, asked)
    except ValueError as e:
        raise SweepError(str(e)) from None
    workers = workers or spec.workers or default_workers(device)
    kept = record_store.Store.default() if (spec.store if store is None else store) else None
    if kept is not None and record_store.code_changed():
        warnings.warn("simul's decoding code changed since this process imported it: this "
                      "sweep neither takes records from the record store nor adds to it "
                      "(restart the process or kernel to use it)", stacklevel=2)
        kept = None
    refs = [resolve_model(m) for m in spec.models]
    labels = [r.label for r in refs]
    if len(set(labels)) != len(labels):
        raise SweepError(f"models {spec.models}: two share the name {labels}; rename a folder")
    corpora = {s: corpus_checksum(spec.corpus, spec.pair, s) for s in spec.splits}
    fingerprint = _fingerprint(spec, refs, corpora, device)
    _claim(spec.output, fingerprint, force)

    per_utt = len(spec.settings)
    jobs = []
    for split in spec.splits:
        segments = list(load(spec.corpus, spec.pair, split, with_audio=False,
                             limit=spec.max_utterances))
        for ref in refs:
            journal = Journal(spec.output / "journal" / ref.label / f"{split}.jsonl")
            entries = journal.entries()
            origins = {pos: e.get("from_store") for pos, e in entries.items()}
            jobs.append(_Job(ref, split, segments, journal,
                             {pos: e["records"] for pos, e in entries.items()},
                             {pos: o if isinstance(o, list) and len(o) == per_utt
                              else [False] * per_utt for pos, o in origins.items()}))
    total = sum(len(j.segments) for j in jobs) * per_utt
    done = sum(len(j.done) for j in jobs) * per_utt
    by_key = {(j.ref.label, j.split): j for j in jobs}
    full = [s.make().settings() for s in spec.settings]

    def store_key(job: _Job, segment_id: str, j: int, code: str | None = None) -> dict:
        return record_store.key_fields(
            model=job.ref.checksum, corpus=corpora[job.split], pair=spec.pair,
            split=job.split, segment=segment_id, policy=spec.settings[j].policy,
            settings=full[j], device=device, code=code)

    def finish(job: _Job, pos: int, segment_id: str, recs: list[dict],
               from_store: list[bool], seconds: list[float | None] | None = None) -> None:
        job.journal.append(pos, segment_id, recs, from_store, seconds)
        job.done[pos] = recs
        job.from_store[pos] = from_store
        bar.update(per_utt)
        if on_result is not None:
            on_result()

    def tasks() -> Iterator[Task]:
        for split in spec.splits:
            todo = [j for j in jobs if j.split == split and len(j.done) < len(j.segments)]
            if not todo:
                continue
            audio = enumerate(load(spec.corpus, spec.pair, split, limit=spec.max_utterances))
            while window := list(itertools.islice(audio, _WINDOW)):
                # longest first, so that no worker is left with a long utterance at the end
                # (and utterances decoded in lockstep are of similar lengths)
                for job in todo:
                    group: list[tuple[int, Segment]] = []
                    for pos, seg in sorted(window, key=lambda ps: -ps[1].duration_ms):
                        if pos in job.done:
                            continue
                        if group and (len(group) == spec.lockstep or
                                      set(job.found.get(pos, {})) !=
                                      set(job.found.get(group[0][0], {}))):
                            yield task(job, split, group)
                            group = []
                        group.append((pos, seg))
                    if group:
                        yield task(job, split, group)

    def task(job: _Job, split: str, group: list[tuple[int, Segment]]) -> Task:
        """The utterances of ``group`` (each lacking the same settings) as one task."""
        found = job.found.get(group[0][0], {})
        return ([(job.ref.label, split, pos) for pos, _ in group], job.ref,
                [seg for _, seg in group],
                [s for j, s in enumerate(spec.settings) if j not in found])

    bar = tqdm(total=total, initial=done, unit="decode", disable=not progress,
               desc=f"sweep {spec.name or spec.output.name}")
    try:
        if kept is not None:  # utterances whose every setting is stored are done here
            for job in jobs:
                for pos, seg in enumerate(job.segments):
                    if pos in job.done:
                        continue
                    found = {}
                    for j in range(per_utt):
                        rec = kept.get(store_key(job, seg.id, j))
                        if rec is not None:
                            found[j] = _in_place(rec, job.ref, seg)
                    if len(found) == per_utt:
                        finish(job, pos, seg.id, [found[j] for j in range(per_utt)],
                               [True] * per_utt)
                    elif found:
                        job.found[pos] = found
        for (label, split, pos), seg_id, code, decoded, seconds in _execute(
                tasks(), spec.share, workers, scheduler, device):
            job = by_key[(label, split)]
            found = job.found.pop(pos, {})
            fresh, timed = iter(decoded), iter(seconds)
            recs = [found[j] if j in found else next(fresh) for j in range(per_utt)]
            walls = [None if j in found else next(timed) for j in range(per_utt)]
            if kept is not None and code is not None:
                for j in range(per_utt):
                    if j not in found:
                        kept.put(store_key(job, seg_id, j, code), recs[j])
            finish(job, pos, seg_id, recs, [j in found for j in range(per_utt)], walls)
    finally:
        bar.close()
    return _summarize(spec, jobs, fingerprint)


def records_path(output: Path, model: str, split: str, setting: Setting) -> Path:
    return Path(output) / "records" / model / split / setting.policy / f"{setting.slug}.jsonl"


def _summarize(spec: Spec, jobs: list[_Job], fingerprint: dict) -> pd.DataFrame:
    from simul import __version__

    provenance = {"simul_version": __version__, "git_commit": git_commit(),
                  "machine": machine()}
    rows = []
    for job in jobs:
        missing = [p for p in range(len(job.segments)) if p not in job.done]
        if missing:
            raise SweepError(f"{job.journal.path}: utterances {missing[:10]} not decoded")
        for j, setting in enumerate(spec.settings):
            records = [Record(**job.done[p][j]) for p in range(len(job.segments))]
            path = write_records(records, records_path(spec.output, job.ref.label, job.split,
                                                       setting))
            stored = sum(job.from_store[p][j] for p in range(len(job.segments)))
            rows.append({
                "model": job.ref.label, "split": job.split, "policy": setting.policy,
                "setting": setting.slug, **{f"param_{k}": v for k, v in setting.params},
                **_renamed(score_records(records)),
                "records": str(path.relative_to(spec.output)),
                "from_store": stored, "decoded": len(records) - stored,
                "model_checksum": job.ref.checksum,
                "corpus_checksum": fingerprint["corpus"][job.split], **provenance,
                # records without the field were decoded before it existed: on the CPU
                "device": ", ".join(sorted({r.device or devices.CPU for r in records})),
                # the most utterances any of its records was decoded in lockstep with
                # (simul.lockstep; 1: each alone); CA charges are single-stream either way
                "lockstep": max(r.lockstep for r in records),
            })
    table = pd.DataFrame(rows)
    tmp = spec.output / ".summary.csv.tmp"
    table.to_csv(tmp, index=False)
    tmp.replace(spec.output / "summary.csv")
    return _located(table, spec.output)


def _located(table: pd.DataFrame, output: Path) -> pd.DataFrame:
    """The summary with its ``records`` paths made absolute (``summary.csv`` keeps them
    relative to the sweep's output, which can move)."""
    table["records"] = [str((Path(output) / p).resolve()) for p in table["records"]]
    return table


def _renamed(scores: dict) -> dict:
    """Scores with ``n`` (the number of records) called ``utterances``: ``n`` is also a
    policy setting (N units per write)."""
    return {("utterances" if k == "n" else k): v for k, v in scores.items()}


def read_summary(output: str | Path) -> pd.DataFrame:
    """The summary table of a finished sweep (``records``: each setting's records, absolute)."""
    path = Path(output) / "summary.csv"
    if not path.is_file():
        raise SweepError(f"{path}: no summary — the sweep has not finished")
    return _located(pd.read_csv(path), Path(output))


def main_sweep(spec_path: str, *, force: bool = False, workers: int | None = None,
               scheduler: str | None = None, quiet: bool = False, store: bool = True,
               device: str | None = None) -> int:
    table = run(spec_path, force=force, workers=workers, scheduler=scheduler,
                progress=not quiet, store=None if store else False, device=device)
    cols = [c for c in ("model", "split", "policy", "setting", "BLEU", "AL", "LAAL",
                        "LAAL_CA", "utterances") if c in table]
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(table[cols].to_string(index=False, float_format=lambda x: f"{x:.2f}"))
    stored = int(table.from_store.sum())
    print(f"\n{len(table)} settings → {Path(Spec.load(spec_path).output) / 'summary.csv'} "
          f"({stored} records from the store, {int(table.decoded.sum())} decoded)")
    return 0


__all__ = ["Spec", "Setting", "SweepError", "run", "read_summary", "expand", "records_path",
           "decode_utterance", "Journal"]
