"""Loading a model by name or directory: the adapter that fits it.

A shipped name or any directory (:func:`simul.models.registry.resolve`): an ESPnet2 model
(:class:`~simul.models.espnet_st.ESPnetST`) or a cascade of an ASR and an MT model
(:class:`~simul.models.cascade.Cascade`, a directory with ``cascade.json``).
"""

from __future__ import annotations

from pathlib import Path

from simul.models import registry
from simul.models.cascade import Cascade
from simul.models.espnet_st import ESPnetST


def load_dir(directory: str | Path, device: str = "cpu") -> ESPnetST | Cascade:
    """The adapter of a model directory: an ESPnet2 ST model, or a cascade of an ASR and an
    MT model (a directory with ``cascade.json``, :mod:`simul.models.cascade`)."""
    if registry.is_cascade(directory):
        return Cascade.from_dir(directory, device)
    return ESPnetST.from_dir(directory, device)


def load(name_or_dir: str | Path, device: str = "cpu") -> ESPnetST | Cascade:
    """A shipped model by name, or any ESPnet2 ST model (or cascade) directory; raises
    :class:`~simul.models.registry.UnknownModel` (a ``ValueError``) for anything else."""
    return load_dir(registry.resolve(name_or_dir), device)
