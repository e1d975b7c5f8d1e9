"""Decoding a corpus split into records with any policy (offline is the reference point)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from simul.corpus import DEFAULT_ROOT, load
from simul.models import device as devices
from simul.models.cascade import SpeechASR, TextMT
from simul.models.espnet_st import ESPnetST
from simul.policies.base import Policy
from simul.policies.cascade import CascadeWaitK
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


@dataclass(frozen=True)
class Translation:
    """A model's offline text for one segment (a text MT model's translation, an ASR
    model's CTC transcript) and the reference it is scored against; ``ms``: its compute
    time."""

    index: int
    prediction: str
    reference: str
    ms: float


def text_offline(model: TextMT, *, beam: int = 1, maxlenratio: float = CascadeWaitK.maxlenratio,
                 model_name: str, pair: str, split: str, corpus_root=DEFAULT_ROOT,
                 max_utterances: int | None = None,
                 progress: bool = True) -> Iterator[Translation]:
    """A text MT model's offline translations of the gold source transcripts of ``split``
    (no audio is read): the second half of a cascade behind a perfect ASR. The output is
    capped at ``maxlenratio`` units per source unit, as the ``cascade`` policy caps it."""
    clock = devices.timing_clock(model.device)
    segs = load(corpus_root, pair, split, with_audio=False, limit=max_utterances)
    for seg in tqdm(segs, desc=f"offline {model_name} {split}", unit="utt",
                    disable=not progress, total=max_utterances):
        start = clock()
        ids = model.translate(seg.source.split(), beam=beam, maxlenratio=maxlenratio)
        text = model.detokenize(ids)
        yield Translation(seg.index, text, seg.target, 1000.0 * (clock() - start))


def ctc_offline(model: SpeechASR, *, model_name: str, pair: str, split: str,
                corpus_root=DEFAULT_ROOT, max_utterances: int | None = None,
                progress: bool = True) -> Iterator[Translation]:
    """An ASR model's greedy CTC transcripts of the whole segments of ``split``, scored
    against their English source text: what the ``cascade`` policy feeds the MT once the
    segment has been heard (:meth:`simul.models.cascade.Cascade.asr_words`, the ASR's
    :meth:`~simul.models.espnet_st.ESPnetST.ctc_words` of the encoded audio; no attention
    decoder runs). ``ms``: encoding and CTC."""
    clock = devices.timing_clock(model.device)
    segs = load(corpus_root, pair, split, limit=max_utterances)
    for seg in tqdm(segs, desc=f"CTC {model_name} {split}", unit="utt",
                    disable=not progress, total=max_utterances):
        start = clock()
        words = model.ctc_words(model.encode(seg.audio))
        yield Translation(seg.index, " ".join(words), seg.source, 1000.0 * (clock() - start))
