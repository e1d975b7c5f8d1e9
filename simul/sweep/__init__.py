"""Sweeps: models × splits × a grid of policy settings → records and a summary table.

A spec (a YAML file or a dict: models, pair, splits, corpus, output, policies with their
grids) names what to run; :func:`run` decodes every utterance once per (model, split) under
all its settings, sharing what the settings compute, takes what the record store already
holds, journals each utterance as it completes (a killed sweep resumes where it stopped)
and writes one records file per setting and ``summary.csv``, locally or on a Dask cluster,
on the CPU or a GPU. The user manual (spec fields, outputs, the record store, execution,
lockstep, devices) is ``docs/reference/sweeps.md``.

The package, one idea per module: :mod:`~simul.sweep.spec` (the spec, its settings and
models), :mod:`~simul.sweep.runner` (:func:`run`, ``simul sweep``),
:mod:`~simul.sweep.executors` (decoding tasks in-process, in a pool or on Dask),
:mod:`~simul.sweep.journal` (the journal, the claim on the output, provenance),
:mod:`~simul.sweep.summary` (records and the summary table), :mod:`~simul.sweep.store`
(the record store), :mod:`~simul.sweep.calls` (calls shared by the settings of an
utterance) and :mod:`~simul.sweep.lockstep` (utterances decoded in lockstep).
"""

from simul.sweep.executors import (
    Result,
    Task,
    decode_lockstep,
    decode_utterance,
    default_workers,
    worker_devices,
)
from simul.sweep.journal import Journal, corpus_checksum, git_commit, machine
from simul.sweep.runner import main_sweep, run
from simul.sweep.spec import (
    POLICY_FIELDS,
    SPEC_FIELDS,
    ModelRef,
    Setting,
    Spec,
    SweepError,
    expand,
    resolve_model,
)
from simul.sweep.summary import read_summary, records_path

__all__ = ["Spec", "Setting", "SweepError", "run", "read_summary", "expand", "records_path",
           "decode_utterance", "decode_lockstep", "Journal", "ModelRef", "resolve_model",
           "main_sweep", "default_workers", "worker_devices", "corpus_checksum", "git_commit",
           "machine", "SPEC_FIELDS", "POLICY_FIELDS", "Task", "Result"]
