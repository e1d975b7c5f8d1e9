"""Models that ship only what they changed: a child names its parent for the rest.

A model fine-tuned from a shipped model with some modules frozen (an en-de decoder on the
en-es encoder, say) carries those modules unchanged. It ships only its own parameters in
``model.pth`` and names its parent in ``simul.json``::

    "parent": {"model": "conformer_bpe_en-es", "sha256": "<model.pth of the parent>",
               "modules": ["ctc", "encoder"]}

:func:`split` (``simul models pack``) takes out of a state dict the parameters of the
modules that are the parent's, after checking they are (a frozen module's batch-norm
statistics, which training still moves, stay in the child); :func:`assembled` (the loader)
puts them back: the parent's ``model.pth`` must still have the pinned checksum, and the whole
state dict is written once to a cache (``~/.cache/simul/assembled``, ``SIMUL_ASSEMBLED``
moves it), so ESPnet loads a complete model file as for any other model.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import torch

from simul.corpus.manifest import sha256
from simul.models import registry

KEY = "parent"
ENV = registry.ASSEMBLED_ENV
DEFAULT_CACHE = registry.ASSEMBLED_CACHE


class ParentError(ValueError):
    """A child model whose parent is missing or is not the one it was made from."""


def _in(key: str, modules: list[str]) -> bool:
    return any(key == m or key.startswith(m + ".") for m in modules)


#: Buffers a frozen module still updates while training (batch normalisation's statistics,
#: kept in train mode): they are shipped by the child when they changed.
RUNNING = ("running_mean", "running_var", "num_batches_tracked")


def split(state: dict, parent_state: dict, modules: list[str], *,
          where: str = "the model") -> dict:
    """``state`` without what ``modules`` share with the parent (the frozen modules of a
    fine-tuning run; both state dicts as stored): their parameters must equal the parent's,
    and their running statistics stay in the child where training moved them."""
    own = {}
    for key, value in state.items():
        if not _in(key, modules):
            own[key] = value
            continue
        theirs = parent_state.get(key)
        if theirs is not None and theirs.shape == value.shape and torch.equal(theirs, value):
            continue
        if theirs is not None and key.rsplit(".", 1)[-1] in RUNNING:
            own[key] = value
            continue
        raise ParentError(f"{where}: {key} differs from the parent's — module "
                          f"{next(m for m in modules if _in(key, [m]))!r} was not frozen")
    missing = [k for k in parent_state if _in(k, modules) and k not in state]
    if missing:
        raise ParentError(f"{where}: the parent has {missing[0]} that this model lacks")
    return own


def info(model_dir: Path) -> dict | None:
    """The ``parent`` entry of a model directory's ``simul.json`` (None: a whole model)."""
    path = Path(model_dir) / "simul.json"
    if not path.is_file():
        return None
    return json.loads(path.read_text()).get(KEY)


def cache_dir() -> Path:
    return registry.assembled_dir()


def assembled(model_dir: Path, model_file: Path) -> Path:
    """A complete model file for a child model: its own ``model_file`` plus its parent's
    modules, cached by both checksums; ``model_file`` itself for a whole model."""
    entry = info(model_dir)
    if entry is None:
        return model_file
    where = f"{Path(model_dir) / 'simul.json'}: field {KEY!r}"
    sibling = Path(model_dir).parent / str(entry.get("model"))
    try:  # beside the child (a packed family), else a shipped model
        parent_dir = sibling if (sibling / "model.pth").is_file() else registry.resolve(
            entry["model"])
    except (KeyError, ValueError) as e:
        raise ParentError(f"{where}: parent model {entry.get('model')!r} not found ({e})") from None
    parent_file = parent_dir / "model.pth"
    found = sha256(parent_file)
    if found != entry["sha256"]:
        raise ParentError(f"{where}: {parent_file} has checksum {found[:12]}…, this model was "
                          f"made from {entry['sha256'][:12]}… (the parent was retrained: "
                          "retrain or repack this model)")
    out = registry.assembled_path(model_dir, model_file, found)
    if out.is_file():
        return out
    # a parent may itself be a child: its own modules come from its parent
    state = torch.load(assembled(parent_dir, parent_file), map_location="cpu")
    whole = {k: v for k, v in state.items() if _in(k, entry["modules"])}
    whole.update(torch.load(model_file, map_location="cpu"))
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, suffix=".tmp")
    os.close(fd)
    try:
        torch.save(whole, tmp)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return out
