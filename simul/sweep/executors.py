"""Decoding a sweep's tasks: in this process, in a local process pool or on a Dask cluster.

A :data:`Task` is one utterance (or several of similar length, decoded in lockstep) of one
model under the settings the record store did not hold. :func:`decode_utterance` decodes
one utterance under every setting, the settings sharing what they compute
(:class:`simul.sweep.calls.SharedCalls`); :func:`decode_lockstep` decodes several together
(:mod:`simul.sweep.lockstep`). :func:`_execute` runs tasks where the sweep says and yields
each utterance's :data:`Result` as it completes; its records are the same whatever the
execution, but for the measured times. Workers load each model once per process and
decode on the sweep's device, or on the GPU their pool handed them (:func:`worker_devices`).
"""

from __future__ import annotations

import atexit
import concurrent.futures as cf
import hashlib
import itertools
import multiprocessing
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from typing import Any

from simul.corpus import Segment
from simul.models import device as devices
from simul.sweep import store as record_store
from simul.sweep.spec import ModelRef, Setting

_MODELS: dict[tuple[str, str, str], Any] = {}
"""The models this process loaded, by (directory, checksum, device)."""
_WORKER_DEVICE: str | None = None
"""The GPU this pool worker was given (``cuda`` sweeps over several GPUs); None elsewhere."""


def _model(ref: ModelRef, device: str = devices.CPU):
    """The adapter of ``ref`` on ``device``, loaded once per process."""
    from simul.models.loader import load_model

    key = (str(ref.directory), ref.checksum, device)
    if key not in _MODELS:
        _MODELS[key] = load_model(ref, device)
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

    from simul.decoding.simulate import simulate
    from simul.sweep.calls import SharedCalls

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
    """Several utterances under every setting, decoded in lockstep (:mod:`simul.sweep.lockstep`:
    equal-length prefixes encoded in one batch); per utterance, its records (``lockstep``
    set to the number of utterances) and each setting's share of the wall time (the
    group's wall time split in proportion to the settings' charged compute)."""
    import torch

    from simul.decoding.simulate import simulate
    from simul.sweep.calls import SharedCalls
    from simul.sweep.lockstep import Lockstep

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
    """A stored record with what :func:`~simul.decoding.simulate.simulate` takes from where the
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
             scheduler: Any, device: str = devices.CPU, code: str | None = None
             ) -> Iterator[Result]:
    """Run tasks; yield each utterance's result as its task completes (any order). A local
    pool is kept for the next sweep whose ``code`` (:func:`code_digest`) is the same."""
    if scheduler is not None:
        yield from _execute_dask(tasks, share, scheduler, device)
        return
    if workers == 1:
        for keys, ref, segs, settings in tasks:
            yield from _results(keys, segs, _decode_task(ref, settings, segs, share=share,
                                                          device=device))
        return
    pool = _pool(workers, device, code)
    pending: dict[cf.Future, tuple] = {}
    try:
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
    except BaseException:  # a failed task, an interrupt, or a consumer that stopped early
        _discard_pool(workers, device)
        raise


_POOLS: dict[tuple[int, str], tuple[cf.ProcessPoolExecutor, str | None]] = {}
"""This process's local worker pools, by (workers, device), with the digest of the decoding
code when each started: kept from one sweep to the next (a notebook runs dozens), so that
workers start, import torch and load each model once."""


def _pool(workers: int, device: str, code: str | None) -> cf.ProcessPoolExecutor:
    """The pool of ``workers`` processes for ``device``, started on first use; workers get
    ``cores // workers`` torch threads and, with several GPUs, one each
    (:func:`worker_devices`). A pool started under other ``code`` (or None) is replaced:
    a sweep decodes with the files as they are when it starts, as a new pool would."""
    key = (workers, device)
    if key in _POOLS and (code is None or _POOLS[key][1] != code):
        _discard_pool(workers, device)
    if key not in _POOLS:
        if not _POOLS:
            atexit.register(shutdown_pools)
        context = multiprocessing.get_context("spawn")
        gpus = None
        assigned = worker_devices(device, workers)
        if assigned:
            gpus = context.Queue()
            for d in assigned:
                gpus.put(d)
        threads = max(1, (os.cpu_count() or 1) // workers)
        _POOLS[key] = (cf.ProcessPoolExecutor(workers, mp_context=context,
                                              initializer=_init_worker,
                                              initargs=(threads, gpus)), code)
    return _POOLS[key][0]


def code_digest(policy_names: Iterable[str]) -> str | None:
    """The code a sweep of ``policy_names`` decodes with, as its files are now: simul's
    decoding source and the source file of each policy that is not simul's own (a plugin's
    workers import it once); None when a file cannot be read (no pool is then reused)."""
    from simul import policies

    try:
        parts = [record_store.source_digest(),
                 *(policies.source_digest(name) or name for name in sorted(set(policy_names)))]
    except OSError:
        return None
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _discard_pool(workers: int, device: str) -> None:
    """Stop a pool after a sweep that did not finish: its queued tasks are cancelled, the
    running ones end with their worker; the next sweep starts a new pool."""
    pool, _ = _POOLS.pop((workers, device), (None, None))
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


def shutdown_pools() -> None:
    """Stop this process's worker pools (at exit; a caller may free the workers sooner)."""
    while _POOLS:
        _POOLS.popitem()[1][0].shutdown(wait=True, cancel_futures=True)


def _execute_dask(tasks: Iterator[Task], share: bool, scheduler: Any,
                  device: str = devices.CPU) -> Iterator[Result]:
    """Run tasks on a Dask cluster (a ``distributed.Client`` or its scheduler's address),
    two per worker thread in flight; yield each utterance's result as its task completes."""
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
