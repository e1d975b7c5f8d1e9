"""Decoding a corpus split: one record per segment with any policy (offline is the reference
point), and the offline text of a cascade's halves (an MT model's translations of the gold
transcripts, an ASR model's CTC transcripts)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from simul.corpus import DEFAULT_ROOT, find_split_dir, load
from simul.models import device as devices
from simul.models.cascade import SpeechASR, TextMT
from simul.models.espnet_st import ESPnetST
from simul.policies.base import Policy
from simul.policies.cascade import CascadeWaitK
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


def main_decode(*, model: str, policy: str, settings: dict[str, str], out: str | Path,
                beam: int = 1, pair: str | None = None, split: str = "tst-COMMON",
                corpus_root=DEFAULT_ROOT, max_utterances: int | None = None,
                device: str = "cpu") -> int:
    """``simul decode``: records of ``split`` under ``policy`` written to ``out``, then
    their BLEU. The split is read in the model's own pair; ``pair`` names it for a model
    directory without simul.json, and is refused when it is not the model's."""
    from simul import records as records_io
    from simul.metrics.quality import corpus_quality
    from simul.models import loader, registry
    from simul.policies import make

    on = devices.check(device)  # before any work
    settings = dict(settings)
    if policy == "offline" and "beam" not in settings:
        settings["beam"] = str(beam)
    trained_on = registry.pair(model)
    if pair and trained_on and pair != trained_on:  # its references are another language
        raise ValueError(f"--pair {pair}: {model} translates {trained_on} (its simul.json); "
                         f"leave --pair out to read the {trained_on} split")
    pair = pair or trained_on or registry.DEFAULT_PAIR
    find_split_dir(corpus_root, pair, split)  # a mistyped split fails before the model loads
    adapter = loader.load(model, on)
    recs = list(records(adapter, make(policy, settings), model_name=str(model), pair=pair,
                        split=split, corpus_root=corpus_root, max_utterances=max_utterances))
    records_io.write(recs, out)
    q = corpus_quality([r.prediction for r in recs], [r.reference for r in recs])
    print(f"{len(recs)} records → {out}; BLEU {q.bleu:.2f}, length ratio "
          f"{q.length_ratio:.3f} ({q.bleu_signature})")
    return 0
