"""What damaged input costs a shipped model: offline greedy BLEU on the first segments of
tst-COMMON fed as ``simul stream --wav`` feeds a file (through a fresh level control, in
100 ms chunks), as built and damaged three ways a recording often is:

- ``narrowband``: sampled at 8 kHz (telephone speech; nothing above 4 kHz), resampled back
  to 16 kHz as ``simul stream --wav`` resamples an 8 kHz file (soxr);
- ``clipped``: amplified ×``--clip-gain`` and cut flat at full scale (an overdriven
  recording; the level control then brings it back down, the distortion stays);
- ``silence``: digital silence as long as each segment: the words the model writes for it
  (all of them made up; BLEU is not defined).

Prints one row per condition: BLEU, words written per segment, the fraction of samples
clipped (:func:`simul.decoding.level.clipped_fraction`). ``simul.decoding.live.INPUT_COSTS`` and
the table in
``docs/reference/streaming.md`` quote it.

    python benchmarks/input_damage.py [--model conformer_bpe_en-es] [--segments 20] \
        [--clip-gain 8]
"""

from __future__ import annotations

import argparse
import os
from dataclasses import replace

import numpy as np
import pandas as pd
import soxr
from input_level import levelled  # benchmarks/, beside this script

from simul.corpus import DEFAULT_ROOT, SAMPLE_RATE, load_list
from simul.decoding.level import clipped_fraction
from simul.decoding.simulate import simulate
from simul.metrics.quality import corpus_quality
from simul.models import registry
from simul.models.loader import load as load_model
from simul.policies import make

NARROW_RATE = 8000


def damaged(audio: np.ndarray, condition: str, clip_gain: float) -> np.ndarray:
    """``audio`` (16 kHz) as the condition leaves it, at 16 kHz."""
    if condition == "clean":
        return audio
    if condition == "narrowband":
        narrow = soxr.resample(audio, SAMPLE_RATE, NARROW_RATE)
        return soxr.resample(narrow, NARROW_RATE, SAMPLE_RATE).astype(np.float32)[: audio.size]
    if condition == "clipped":
        return np.clip(clip_gain * audio, -1.0, 1.0).astype(np.float32)
    if condition == "silence":
        return np.zeros_like(audio)
    raise ValueError(f"unknown condition {condition!r}")


def measure(model_name: str, segments: int, clip_gain: float, split: str) -> pd.DataFrame:
    model = load_model(model_name)
    segs = load_list(DEFAULT_ROOT, registry.pair_for(model_name), split, limit=segments)
    refs = [s.target for s in segs]
    rows = []
    for condition in ("clean", "narrowband", "clipped", "silence"):
        hyps, clipped = [], []
        for s in segs:
            audio = damaged(s.audio, condition, clip_gain)
            clipped.append(clipped_fraction(audio))
            fed, _ = levelled(audio, 100.0)  # as simul stream --wav feeds a file
            hyps.append(simulate(model, make("offline", {}), replace(s, audio=fed)).prediction)
        q = corpus_quality(hyps, refs)
        rows.append({"condition": condition, "n": len(segs),
                     "BLEU": None if condition == "silence" else round(q.bleu, 1),
                     "words per segment": round(float(np.mean([len(h.split()) for h in hyps])),
                                                1),
                     "clipped (%)": round(100 * float(np.mean(clipped)), 2),
                     "seconds per segment": round(float(np.mean(
                         [s.audio.size / SAMPLE_RATE for s in segs])), 2)})
        print(f"  {condition}: {rows[-1]}", flush=True)
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="conformer_bpe_en-es", help="[%(default)s]")
    ap.add_argument("--segments", type=int, default=20, help="first N segments [%(default)s]")
    ap.add_argument("--clip-gain", type=float, default=8.0,
                    help="the clipped condition's gain before the cut [%(default)g]")
    ap.add_argument("--split", default="tst-COMMON", help="segments of [%(default)s]")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    table = measure(args.model, args.segments, args.clip_gain, args.split)
    print(f"{args.model}, offline greedy, first {args.segments} segments of {args.split}, "
          f"each through a fresh level control in 100 ms chunks (simul stream --wav)")
    with pd.option_context("display.width", 200):
        print(table.to_string(index=False))


if __name__ == "__main__":
    main()
