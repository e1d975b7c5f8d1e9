"""What every notebook does besides its paper: set up, build and run a sweep spec, quick mode.

A notebook's setup cell is one call::

    nb = notebook.setup(figures_dir, runs_dir, models=[model], quick=quick,
                        dask_scheduler=dask_scheduler, workers=workers)
    max_utterances = nb.choose(max_utterances, quick_utterances)

:func:`setup` styles the plots, quiets ESPnet's notices and fails, naming the model, when a
model the notebook needs is neither shipped nor a directory; :meth:`Notebook.sweep` runs a
spec (cached and resumable, see :mod:`simul.sweep`) on the notebook's device (the
environment variable ``SIMUL_DEVICE``, :data:`DEVICE_ENV`: ``cpu``, ``cuda`` or ``cuda:N``,
which ``simul reproduce --device`` sets for the kernels; a device torch cannot reach fails
in :func:`setup`; unset, each spec's own, i.e. the CPU); :meth:`Notebook.choose` picks a
parameter's full-run or quick-run value. The modules that build the specs
(:mod:`simul.papers`, :mod:`simul.papers.tutorial`, :mod:`simul.papers.compare_policies`)
end each one with :func:`spec`.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from simul.models import registry

T = TypeVar("T")

EOS_VARIANT = ("-eos", "end of sentence allowed while reading (avoid_eos_while_reading off, "
                       "not A.2's setting)")
"""Claim id suffix and settings note of the claims on the sweep with
avoid_eos_while_reading off (``eos_allowed=True`` of
:func:`simul.papers.papi2022.trained_claims` and :func:`simul.papers.han2020.ktest_claims`):
a setting the paper did not use, so simul's own question."""


def training_schedule(model) -> dict:
    """How a model (a name or a :class:`~simul.models.registry.Model`) was trained in
    simultaneous mode (its record's ``training_schedule``: k_train, word_ms, detection);
    empty for an offline-trained model. ``ValueError`` for a model without simul.json."""
    model = registry.model(model)
    if not model.info:
        raise ValueError(f"{model.name}: no {registry.INFO_FILE} in {model.directory}")
    return dict(model.training_schedule)


DEVICE_ENV = "SIMUL_DEVICE"
"""The environment variable that names the device of every notebook's sweeps."""


def spec(models: Sequence[str], pair: str, splits: Sequence[str], output: str,
         policies: list[dict], *, corpus: str | Path | None = None,
         max_utterances: int | None = None) -> dict:
    """A sweep spec (the dict form of a ``simul sweep`` YAML file): ``policies`` on
    ``models`` × ``splits`` of ``pair``, written to ``output``; the embedded corpus unless
    ``corpus`` names another root, every segment unless ``max_utterances``."""
    out = {"models": list(models), "pair": pair, "splits": list(splits), "output": output,
           "max_utterances": max_utterances, "policies": policies}
    if corpus:
        out["corpus"] = corpus
    return out


def missing_models(models: Sequence[str | Path]) -> list[str]:
    """The models of ``models`` that are neither shipped (``data/models/<name>/``) nor an
    ESPnet2 model directory."""
    out = []
    for m in models:
        try:
            registry.resolve(m)
        except registry.UnknownModel:
            out.append(str(m))
    return out


@dataclass(frozen=True)
class Notebook:
    figures: Path  # tables (Markdown, CSV), figures (PNG, PDF) and claims.csv
    runs: Path  # the sweeps' outputs (records, summary.csv), one folder per sweep
    quick: bool = False  # a handful of utterances on a smaller grid (the tests)
    dask_scheduler: str | None = None  # e.g. "tcp://host:8786"
    workers: int | None = None  # local decoding processes (None: the sweep's default)
    device: str | None = None  # cpu, cuda, cuda:N (None: each spec's own)

    def choose(self, full: T, quick: T) -> T:
        """``quick`` in a quick run, ``full`` otherwise."""
        return quick if self.quick else full

    def sweep(self, spec: dict):
        """Run a sweep spec (:func:`simul.sweep.run`); its summary, one row per model ×
        split × setting. A notebook's runs are its own: a sweep whose spec, models or corpus
        changed since its folder was written starts over there (``force``), and the record
        store spares it the decodes that did not change."""
        from simul import sweep

        return sweep.run(spec, scheduler=self.dask_scheduler, workers=self.workers,
                         device=self.device, force=True)


def setup(figures_dir: str | Path, runs_dir: str | Path, *, models: Sequence[str | Path] = (),
          quick: bool = False, dask_scheduler: str | None = None,
          workers: int | None = None, device: str | None = None) -> Notebook:
    """Style the plots, quiet ESPnet's notices, set the claims' bootstrap resamples (fewer
    in a quick run) and check that every model of ``models`` is there (a shipped name or a
    model directory): a missing one raises ``FileNotFoundError`` before anything runs.

    ``device`` (default: ``$SIMUL_DEVICE``, else each spec's own) is where the sweeps
    decode; one torch cannot reach raises ``ValueError`` here (locally: with a Dask
    scheduler only the name is checked, the workers check the rest)."""
    from simul.analysis import claims, plots
    from simul.models import device as devices
    from simul.models.registry import MODELS_DIR

    if device is None and os.environ.get(DEVICE_ENV, "").strip():
        device = os.environ[DEVICE_ENV]
        asked = f"{DEVICE_ENV}={devices.normalize(device)}"
    else:
        asked = f"device {devices.normalize(device)}"
    if device is not None:
        device = (devices.parse if dask_scheduler else devices.check)(device, asked)

    missing = missing_models([models] if isinstance(models, str | Path) else models)
    if missing:
        raise FileNotFoundError(
            f"model(s) {missing} not found: neither shipped ({MODELS_DIR}/<name>/config.yaml)"
            " nor an ESPnet2 model directory; set the notebook's model parameters")
    plots.style()
    warnings.filterwarnings("ignore", category=FutureWarning)  # ESPnet's torch.cuda.amp
    logging.getLogger("espnet.nets.beam_search").setLevel(logging.ERROR)  # length-cap notices
    # fewer resamples in a quick run; a quick run's kernels share the cores: one process each
    claims.configure(quick=quick, workers=workers)
    return Notebook(Path(figures_dir), Path(runs_dir), quick=quick,
                    dask_scheduler=dask_scheduler, workers=workers, device=device)
