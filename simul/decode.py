"""Offline decoding of a corpus split into records (the reference point of every curve)."""

from __future__ import annotations

import time
from collections.abc import Iterator

from tqdm import tqdm

from simul.corpus import DEFAULT_ROOT, load
from simul.models.espnet_st import ESPnetST
from simul.records import Record


def offline_records(model: ESPnetST, *, model_name: str, pair: str, split: str,
                    corpus_root=DEFAULT_ROOT, beam: int = 1, max_utterances: int | None = None,
                    progress: bool = True) -> Iterator[Record]:
    """Read the whole segment, then decode (greedy, or ESPnet beam search).

    Every word's delay is the source length; elapsed adds the compute time (ms).
    """
    segs = load(corpus_root, pair, split, limit=max_utterances)
    for seg in tqdm(segs, desc=f"offline {model_name} {split}", unit="utt",
                    disable=not progress, total=max_utterances):
        t0 = time.perf_counter()
        enc = model.encode(seg.audio)
        hyp = model.greedy(enc) if beam == 1 else model.beam_search(enc, beam=beam)[0]
        compute_ms = 1000 * (time.perf_counter() - t0)
        text = model.detokenize(hyp.tokens)
        words = text.split()
        yield Record(
            index=seg.index, prediction=text,
            delays=[seg.duration_ms] * len(words),
            elapsed=[seg.duration_ms + compute_ms] * len(words),
            prediction_length=len(words), reference=seg.target,
            source_length=seg.duration_ms, source=[str(seg.wav), seg.id],
            units=[model.token_list[t] for t in hyp.tokens],
            trace=[(seg.duration_ms, len(hyp.tokens))], model=model_name,
            policy="offline", settings={"beam": beam}, segment_id=seg.id,
            source_text=seg.source,
        )
