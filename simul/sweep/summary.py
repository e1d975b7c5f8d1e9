"""A finished sweep's outputs: its records and its summary table.

:func:`_summarize` writes ``records/<model>/<split>/<policy>/<setting>.jsonl``
(:func:`records_path`) and ``summary.csv``: one row per (model, split, policy, setting),
with its parameters, every metric of ``simul score`` (``n`` named ``utterances``), the path
of its records (relative to the output, so that the directory can move; :func:`read_summary`
and :func:`simul.sweep.run` return it absolute) and provenance.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from simul.metrics.score import score_records
from simul.models import device as devices
from simul.records import Record
from simul.records import write as write_records
from simul.sweep.journal import _Job, git_commit, machine
from simul.sweep.spec import Setting, Spec, SweepError


def records_path(output: Path, model: str, split: str, setting: Setting) -> Path:
    """Where a sweep writes the records of one (model, split, setting)."""
    return Path(output) / "records" / model / split / setting.policy / f"{setting.slug}.jsonl"


def _summarize(spec: Spec, jobs: list[_Job], fingerprint: dict) -> pd.DataFrame:
    """Write every setting's records and ``summary.csv`` (atomically) once every job is
    done; the summary, its ``records`` absolute."""
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
                **_renamed(score_records(records, job.segments)),  # en-de: anticipation
                "records": str(path.relative_to(spec.output)),
                "from_store": stored, "decoded": len(records) - stored,
                "model_checksum": job.ref.checksum,
                "corpus_checksum": fingerprint["corpus"][job.split], **provenance,
                # records without the field were decoded before it existed: on the CPU
                "device": ", ".join(sorted({r.device or devices.CPU for r in records})),
                # the most utterances any of its records was decoded in lockstep with
                # (simul.sweep.lockstep; 1: each alone); CA charges are single-stream either way
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
