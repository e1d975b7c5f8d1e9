"""Loading a model by name, directory or Hub repo id: the adapter that fits it.

A shipped name, any directory or a Hugging Face Hub repo id
(:func:`simul.models.registry.resolve`; :func:`simul.models.registry.family` says which
adapter reads it): an ESPnet2 model (:class:`~simul.models.adapters.espnet_st.ESPnetST`, ESPnet's
packed layout included; with a monotonic multihead attention decoder
:class:`~simul.models.adapters.mma_st.ESPnetMMA`), a transformers Speech2Text model
(:class:`~simul.models.adapters.hf_s2t.HFSpeech2Text`), a cascade of an ASR and an MT model
(:class:`~simul.models.adapters.cascade.Cascade`, a directory with ``cascade.json``), or a text MT
model (:class:`~simul.models.adapters.cascade.TextMT`, ``task: mt`` in its ``simul.json``).
Each offers what policies call on a model (:class:`simul.models.adapter.Adapter`); the
decoding tier and the policies reach the adapters only through this module and the seam.
"""

from __future__ import annotations

from pathlib import Path

from simul.models import registry
from simul.models.adapter import Adapter
from simul.models.adapters.cascade import Cascade
from simul.models.adapters.espnet_st import ESPnetST, ModelError, resolve_model_dir


def load_dir(directory: str | Path, device: str = "cpu") -> Adapter:
    """The adapter of a model directory: an ESPnet2 ST model, or a cascade of an ASR and an
    MT model (a directory with ``cascade.json``, :mod:`simul.models.adapters.cascade`)."""
    directory = Path(directory)
    return load_model(registry.Model(str(directory), registry.label(directory), directory,
                                     registry.family(directory)), device)


def load_model(model: registry.Model, device: str = "cpu") -> Adapter:
    """The adapter that reads a :class:`~simul.models.registry.Model` (by its family, task
    and config), on ``device``."""
    if model.family == "cascade":
        return Cascade.from_dir(model.directory, device)
    if model.family == "transformers":
        from simul.models.adapters.hf_s2t import (
            HFSpeech2Text,  # transformers: an optional dependency
        )

        return HFSpeech2Text(model.directory, device)
    config, model_file = resolve_model_dir(model.directory)
    if model.task == "mt":  # text in (simul.decoding.text)
        from simul.models.adapters.cascade import TextMT

        return TextMT(config, model_file, device)
    try:
        decoder = model.config.get("decoder")
    except ValueError as e:  # the YAML the adapter names in its own words
        raise ModelError(str(e)) from None
    if decoder == "transformer_mma":
        from simul.models.adapters.mma_st import ESPnetMMA  # registers the decoder with ESPnet

        return ESPnetMMA(config, model_file, device)
    return ESPnetST(config, model_file, device)


def load(name_or_dir: str | Path | registry.Model, device: str = "cpu") -> Adapter:
    """A shipped model by name, any ESPnet2 ST model (or cascade) or transformers
    Speech2Text directory, or a Hub repo id of one (fetched once), or a
    :class:`~simul.models.registry.Model`; raises
    :class:`~simul.models.registry.UnknownModel` (a ``ValueError``) for anything else."""
    return load_model(registry.model(name_or_dir), device)


def assemble(model: str | Path | registry.Model) -> registry.Model:
    """``model``'s record, its complete model files written first where it (or a cascade's
    part) is a child model (:func:`simul.models.parent.assembled`), so that its
    :meth:`~simul.models.registry.Model.files` and checksum can be read. Raises
    :class:`~simul.models.adapters.espnet_st.ModelError` naming what is missing."""
    model = registry.model(model)
    if model.family == "transformers":
        return model
    for part in model.parts or (model,):
        resolve_model_dir(part.directory)
    return model
