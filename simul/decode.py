"""Decoding a corpus split into records with any policy (offline is the reference point)."""

from __future__ import annotations

from collections.abc import Iterator

from tqdm import tqdm

from simul.corpus import DEFAULT_ROOT, load
from simul.models.espnet_st import ESPnetST
from simul.policies.base import Policy
from simul.policies.offline import Offline
from simul.records import Record
from simul.simulate import simulate


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
