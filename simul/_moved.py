"""The import names of modules that moved into the tier folders, kept for one release.

``import simul.session`` (and every other old name below, with its submodules) still
imports the module at its new place, with a :class:`DeprecationWarning` that names it; the
module object is the same, so ``simul.session.Session is simul.decoding.session.Session``,
and records or pickles that name an old path still load. The old names work through
0.7.0, the release that moves them, and go in 0.8.0 (CHANGELOG.md, "Deprecated").
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings

MOVED = {
    "simul.session": "simul.decoding.session",
    "simul.text": "simul.decoding.text",
    "simul.simulate": "simul.decoding.simulate",
    "simul.decode_split": "simul.decoding.decode_split",
    "simul.live": "simul.decoding.live",
    "simul.level": "simul.decoding.level",
    "simul.simuleval_agent": "simul.decoding.simuleval_agent",
    "simul.claims": "simul.analysis.claims",
    "simul.plots": "simul.analysis.plots",
    "simul.tables": "simul.analysis.tables",
    "simul.cli": "simul.commands.cli",
    "simul.reproduce": "simul.commands.reproduce",
    "simul.confirm": "simul.commands.confirm",
    "simul.envcheck": "simul.commands.envcheck",
    "simul.models.espnet_st": "simul.models.adapters.espnet_st",
    "simul.models.hf_s2t": "simul.models.adapters.hf_s2t",
    "simul.models.mma_st": "simul.models.adapters.mma_st",
    "simul.models.meta_st": "simul.models.adapters.meta_st",
    "simul.models.cascade": "simul.models.adapters.cascade",
    "simul.models.mma_decoder": "simul.models.extensions.mma_decoder",
    "simul.models.mma": "simul.models.extensions.mma",
    "simul.models.waitk_decoder": "simul.models.extensions.waitk_decoder",
    "simul.models.unidirectional_encoder": "simul.models.extensions.unidirectional_encoder",
    "simul.models.rnn_padded": "simul.models.extensions.rnn_padded",
    "simul.models.decoder_scorers": "simul.models.extensions.decoder_scorers",
    "simul.models.train": "simul.models.training.train",
    "simul.models.meta_train": "simul.models.training.meta_train",
    "simul.models.meta_tasks": "simul.models.training.meta_tasks",
    "simul.models.meta": "simul.models.training.meta",
    "simul.models.prepare": "simul.models.training.prepare",
    "simul.models.augment": "simul.models.training.augment",
}
"""Old import name → new one."""


def new_name(old: str) -> str | None:
    """The new name of ``old`` or of a submodule of a moved package (``simul.claims.report``
    → ``simul.analysis.claims.report``), else None."""
    for prefix, target in MOVED.items():
        if old == prefix or old.startswith(prefix + "."):
            return target + old[len(prefix):]
    return None


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old name and loads it as the module at its new name: the same object, whose
    ``__spec__`` the import system overwrites and :meth:`exec_module` puts back."""

    def __init__(self) -> None:
        self._specs: dict[str, importlib.machinery.ModuleSpec] = {}

    def find_spec(self, fullname, path=None, target=None):
        if new_name(fullname) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        new = new_name(spec.name)
        warnings.warn(f"{spec.name} moved to {new}; the old name goes in simul 0.8.0",
                      DeprecationWarning, stacklevel=2)
        module = importlib.import_module(new)
        self._specs[spec.name] = module.__spec__
        return module

    def exec_module(self, module):
        module.__spec__ = self._specs.pop(module.__spec__.name)


def install() -> None:
    """Put the finder first on ``sys.meta_path``, once: only old names match it, and a
    submodule of a moved package must not be found again, as a second module, through the
    new package's ``__path__``."""
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.insert(0, _Alias())
