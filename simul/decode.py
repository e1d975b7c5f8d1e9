"""Decoding a corpus split into records with any policy (offline is the reference point)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from tqdm import tqdm

from simul.corpus import DEFAULT_ROOT, load
from simul.models.espnet_st import ESPnetST
from simul.policies.base import Policy
from simul.policies.offline import Offline
from simul.records import Record
from simul.simulate import simulate

DEFAULT_PAIR = "en-es"
"""The pair ``simul decode`` reads for a model that does not record its own."""


def model_pair(model: str | Path) -> str | None:
    """The language pair a model was trained on: the ``pair`` of its ``simul.json`` (every
    shipped or packed model has one); None for a model directory without it."""
    from simul.models.zoo import MODELS_DIR

    directory = MODELS_DIR / str(model)
    if not (directory / "config.yaml").is_file():
        directory = Path(model)
    info = directory / "simul.json"
    if not info.is_file():
        return None
    try:
        pair = json.loads(info.read_text()).get("pair")
    except json.JSONDecodeError as e:
        raise ValueError(f"{info}: not JSON ({e})") from e
    if pair is not None and not isinstance(pair, str):
        raise ValueError(f"{info}: field 'pair': expected e.g. 'en-es', got {pair!r}")
    return pair


def records(model: ESPnetST, policy: Policy, *, model_name: str, pair: str, split: str,
            corpus_root=DEFAULT_ROOT, max_utterances: int | None = None,
            progress: bool = True) -> Iterator[Record]:
    """One record per segment of ``split``, in corpus order."""
    segs = load(corpus_root, pair, split, limit=max_utterances)
    for seg in tqdm(segs, desc=f"{policy.name} {model_name} {split}", unit="utt",
                    disable=not progress, total=max_utterances):
        yield simulate(model, policy, seg, model_name=model_name)


def offline_records(model: ESPnetST, *, beam: int = 1, **kw) -> Iterator[Record]:
    """Read the whole segment, then decode (greedy, or ESPnet beam search): every word's
    delay is the source length; elapsed adds the compute time (ms)."""
    return records(model, Offline(beam=beam), **kw)
