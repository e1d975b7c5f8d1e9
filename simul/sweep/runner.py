"""Running a sweep: :func:`run` (the API) and :func:`main_sweep` (``simul sweep``).

:func:`run` checks the spec and the device, claims the output directory, then takes each
(model, split) of the spec as a job: it reads the job's journal (what a killed run already
did), takes from the record store the records it holds (:mod:`simul.sweep.store`), hands
the rest to the executors as tasks (:mod:`simul.sweep.executors`), longest utterances
first, and journals each utterance as it completes. Once every job is done it writes the
records and the summary (:mod:`simul.sweep.summary`).
"""

from __future__ import annotations

import functools
import itertools
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from simul import policies
from simul.corpus import Segment, load
from simul.models import device as devices
from simul.sweep import store as record_store
from simul.sweep.executors import Result, Task, _execute, _in_place, code_digest, default_workers
from simul.sweep.journal import Journal, _claim, _fingerprint, _Job, corpus_checksum
from simul.sweep.spec import ModelRef, Spec, SweepError, resolve_model
from simul.sweep.summary import _summarize

_WINDOW = 64
"""Utterances whose audio is read at once and decoded longest first."""


@dataclass(frozen=True)
class _StoreKeys:
    """What the record store keeps each record of the sweep under
    (:func:`simul.sweep.store.key_fields`)."""

    spec: Spec
    corpora: dict[str, str]  # split → corpus checksum
    device: str
    full: list[dict]  # each setting's full settings (defaults included), in the spec's order

    def __call__(self, job: _Job, segment_id: str, j: int, code: str | None = None) -> dict:
        return record_store.key_fields(
            model=job.ref.checksum, corpus=self.corpora[job.split], pair=self.spec.pair,
            split=job.split, segment=segment_id, policy=_policy_key(self.spec.settings[j].policy),
            settings=self.full[j], device=self.device, code=code)


@functools.cache
def _policy_key(name: str) -> str:
    """A policy as the record store keys it: its name; for a policy that is not simul's own
    (an entry point's, ``module:Class``), with its source file's digest, since the store's
    code version follows simul's source only."""
    digest = policies.source_digest(name)
    return name if digest is None else f"{name}@{digest}"


_Done = tuple[_Job, int, str, list[dict], list[bool], list[float | None] | None]
"""An utterance to journal: (its job, its position in the split, its segment id, its records
(one per setting), which came from the record store, each one's wall seconds here (None:
from the store; the whole list None when every record is))."""


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
    # every split read before the output is claimed: a mistyped split or a bad corpus line
    # stops here, with nothing written
    segments = {split: list(_segments(spec, split, with_audio=False)) for split in spec.splits}
    _claim(spec.output, fingerprint, force, {"models": {r.label: str(r.directory) for r in refs},
                                             "corpus": str(Path(spec.corpus))})

    per_utt = len(spec.settings)
    jobs = _jobs(spec, refs, segments)
    keys = _StoreKeys(spec, corpora, device, [s.make().settings() for s in spec.settings])
    total = sum(len(j.segments) for j in jobs) * per_utt
    done = sum(len(j.done) for j in jobs) * per_utt
    bar = tqdm(total=total, initial=done, unit="decode", disable=not progress,
               desc=f"sweep {spec.name or spec.output.name}")
    try:
        # utterances whose every setting is stored first, then the decoded ones as their
        # tasks complete (the tasks are made once the store has been looked up)
        for job, pos, segment_id, recs, from_store, seconds in itertools.chain(
                _stored(jobs, kept, keys),
                _decoded(_execute(_tasks(spec, jobs), spec.share, workers, scheduler, device,
                                  code_digest(s.policy for s in spec.settings)),
                         jobs, kept, keys)):
            job.journal.append(pos, segment_id, recs, from_store, seconds)
            job.done[pos] = recs
            job.from_store[pos] = from_store
            bar.update(per_utt)
            if on_result is not None:
                on_result()
    finally:
        bar.close()
    return _summarize(spec, jobs, fingerprint)


def _segments(spec: Spec, split: str, *, with_audio: bool = True) -> Iterator[Segment]:
    """The segments a sweep decodes of ``split``: after the first ``skip_utterances``, the
    next ``max_utterances`` (all when None), in corpus order."""
    skip, limit = spec.skip_utterances, spec.max_utterances
    return itertools.islice(load(spec.corpus, spec.pair, split, with_audio=with_audio,
                                 limit=None if limit is None else skip + limit), skip, None)


def _jobs(spec: Spec, refs: list[ModelRef], segments: dict[str, list[Segment]]) -> list[_Job]:
    """Every (model, split) of the sweep, split by split, with what its journal holds."""
    per_utt = len(spec.settings)
    jobs = []
    for split in spec.splits:
        for ref in refs:
            journal = Journal(spec.output / "journal" / ref.label / f"{split}.jsonl")
            entries = journal.entries()
            origins = {pos: e.get("from_store") for pos, e in entries.items()}
            jobs.append(_Job(ref, split, segments[split], journal,
                             {pos: e["records"] for pos, e in entries.items()},
                             {pos: o if isinstance(o, list) and len(o) == per_utt
                              else [False] * per_utt for pos, o in origins.items()}))
    return jobs


def _stored(jobs: list[_Job], kept: record_store.Store | None,
            keys: _StoreKeys) -> Iterator[_Done]:
    """The utterances not done whose every setting the record store holds; those it holds
    some settings of are left in their job's ``found``, for the decode of the others."""
    if kept is None:
        return
    per_utt = len(keys.full)
    for job in jobs:
        for pos, seg in enumerate(job.segments):
            if pos in job.done:
                continue
            found = {}
            for j in range(per_utt):
                rec = kept.get(keys(job, seg.id, j))
                if rec is not None:
                    found[j] = _in_place(rec, job.ref, seg)
            if len(found) == per_utt:
                yield job, pos, seg.id, [found[j] for j in range(per_utt)], [True] * per_utt, None
            elif found:
                job.found[pos] = found


def _tasks(spec: Spec, jobs: list[_Job]) -> Iterator[Task]:
    """The utterances not done as tasks, split by split, a window of utterances at a time:
    one task per utterance, or up to ``spec.lockstep`` of similar lengths (lacking the same
    settings) in one."""
    for split in spec.splits:
        todo = [j for j in jobs if j.split == split and len(j.done) < len(j.segments)]
        if not todo:
            continue
        audio = enumerate(_segments(spec, split))
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
                        yield _task(spec, job, group)
                        group = []
                    group.append((pos, seg))
                if group:
                    yield _task(spec, job, group)


def _task(spec: Spec, job: _Job, group: list[tuple[int, Segment]]) -> Task:
    """The utterances of ``group`` (each lacking the same settings) as one task."""
    found = job.found.get(group[0][0], {})
    return ([(job.ref.label, job.split, pos) for pos, _ in group], job.ref,
            [seg for _, seg in group],
            [s for j, s in enumerate(spec.settings) if j not in found])


def _decoded(results: Iterator[Result], jobs: list[_Job], kept: record_store.Store | None,
             keys: _StoreKeys) -> Iterator[_Done]:
    """Each decoded utterance with the records of its other settings from the store; what
    was decoded is stored under the code version that decoded it (none when None)."""
    by_key = {(j.ref.label, j.split): j for j in jobs}
    per_utt = len(keys.full)
    for (label, split, pos), seg_id, code, decoded, seconds in results:
        job = by_key[(label, split)]
        found = job.found.pop(pos, {})
        fresh, timed = iter(decoded), iter(seconds)
        recs = [found[j] if j in found else next(fresh) for j in range(per_utt)]
        walls = [None if j in found else next(timed) for j in range(per_utt)]
        if kept is not None and code is not None:
            for j in range(per_utt):
                if j not in found:
                    kept.put(keys(job, seg_id, j, code), recs[j])
        yield job, pos, seg_id, recs, [j in found for j in range(per_utt)], walls


def main_sweep(spec_path: str, *, force: bool = False, workers: int | None = None,
               scheduler: str | None = None, quiet: bool = False, store: bool = True,
               device: str | None = None) -> int:
    """``simul sweep``: run a spec file and print its summary."""
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
