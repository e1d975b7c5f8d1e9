"""Offline greedy BLEU of a model on the first segments of tst-COMMON with the audio scaled,
without and with ``simul stream``'s level control (:class:`simul.decoding.level.LevelControl`); and
the speech level of the corpus, the control's target.

The models have heard the corpus at its own level only (global mean-variance normalisation
of log-mel features keeps the absolute level): quieter input translates worse. With
``--level on`` the scaled audio of each segment goes through a fresh level control, causally,
in chunks of ``--chunk-ms`` as ``simul stream --wav`` feeds it (with ``--warm``, having
first heard the segment before it in the talk, as a stream under way), and the levelled
audio is decoded. Prints one row per scale: the speech level in (dBFS), BLEU without the control
and with it, the speech level out and the gain at the end of the segments (means).

    python benchmarks/input_level.py [--model conformer_bpe_en-es] [--segments 30] \
        [--scales 1,0.3,0.1,0.03] [--level off|on|both]
    python benchmarks/input_level.py --corpus-level [--splits train,dev,tst-COMMON,tst-HE]
"""

from __future__ import annotations

import argparse
import os
from dataclasses import replace

import numpy as np
import pandas as pd
import soundfile as sf

from simul.corpus import DEFAULT_ROOT, load, load_list, stats
from simul.decoding import level
from simul.decoding.simulate import simulate
from simul.metrics.quality import corpus_quality
from simul.models import registry
from simul.models.loader import load as load_model
from simul.policies import make

SCALES = (1.0, 0.3, 0.1, 0.03)
SPLITS = ("train", "dev", "tst-COMMON", "tst-HE")


def levelled(audio: np.ndarray, chunk_ms: float,
             before: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """``audio`` through a fresh level control in chunks of ``chunk_ms`` (that has first
    heard ``before``, if given), and the gain at the end (dB)."""
    size = max(1, round(chunk_ms * 16))  # 16 kHz
    control = level.LevelControl()
    if before is not None:
        for a in range(0, before.size, size):
            control.process(before[a : a + size])
    out = np.concatenate([control.process(audio[a : a + size])
                          for a in range(0, audio.size, size)])
    return out, control.gain_db


def bleu_by_scale(model_name: str, segments: int, scales: list[float], levels: list[bool],
                  chunk_ms: float, pair: str, split: str, warm: bool = False) -> pd.DataFrame:
    model = load_model(model_name)
    segs = load_list(DEFAULT_ROOT, pair, split, limit=segments)
    refs = [s.target for s in segs]
    rows = []
    for scale in scales:
        row: dict = {"scale": scale, "n": len(segs), "speech in (dBFS)": round(float(np.mean(
            [level.speech_level_dbfs(scale * s.audio) for s in segs])), 1)}
        for on in levels:
            hyps, out_levels, gains = [], [], []
            for i, s in enumerate(segs):
                audio = (scale * s.audio).astype(np.float32)
                if on:
                    before = None  # --warm: the segment before, of the same talk
                    if warm and i and segs[i - 1].talk == s.talk:
                        before = (scale * segs[i - 1].audio).astype(np.float32)
                    audio, gain = levelled(audio, chunk_ms, before)
                    gains.append(gain)
                    out_levels.append(level.speech_level_dbfs(audio))
                seg = replace(s, audio=audio)
                hyps.append(simulate(model, make("offline", {}), seg).prediction)
            q = corpus_quality(hyps, refs)
            row[f"BLEU level {'on' if on else 'off'}"] = round(q.bleu, 1)
            if on:
                row["speech out (dBFS)"] = round(float(np.mean(out_levels)), 1)
                row["gain at end (dB)"] = round(float(np.mean(gains)), 1)
            print(f"  scale {scale:g}, level {'on' if on else 'off'}: BLEU {q.bleu:.1f}",
                  flush=True)
        rows.append(row)
    return pd.DataFrame(rows)


def corpus_level(pair: str, splits: list[str]) -> pd.DataFrame:
    """Speech level (:func:`simul.decoding.level.speech_level_dbfs`) of every talk of each split,
    by synthesizer: the energy mean over all its talks' speech frames, and the range of
    the talks' levels."""
    rows = []
    for split in splits:
        engines = stats.engines(DEFAULT_ROOT, pair, split)
        talks: dict = {}
        for seg, engine in zip(load(DEFAULT_ROOT, pair, split, with_audio=False), engines,
                               strict=True):
            talks.setdefault(seg.wav, engine)
        levels = {path: level.speech_level_dbfs(sf.read(path, dtype="float32")[0])
                  for path in talks}
        for engine in ("all", *sorted(set(talks.values()))):
            picked = [levels[p] for p, e in talks.items() if engine in ("all", e)]
            power = np.mean([10 ** (v / 10) for v in picked])  # talks weighted alike
            rows.append({"split": split, "engine": engine, "talks": len(picked),
                         "speech level (dBFS)": round(float(10 * np.log10(power)), 1),
                         "talks min": round(min(picked), 1),
                         "talks median": round(float(np.median(picked)), 1),
                         "talks max": round(max(picked), 1)})
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="conformer_bpe_en-es", help="[%(default)s]")
    ap.add_argument("--segments", type=int, default=30, help="first N segments [%(default)s]")
    ap.add_argument("--scales", default=",".join(f"{s:g}" for s in SCALES),
                    help="audio scale factors, comma-separated [%(default)s]")
    ap.add_argument("--level", choices=("off", "on", "both"), default="both",
                    help="decode without the level control, with it, or both [%(default)s]")
    ap.add_argument("--chunk-ms", type=float, default=100.0,
                    help="chunks fed to the level control [%(default)g]")
    ap.add_argument("--warm", action="store_true",
                    help="the control first hears the segment before, of the same talk (a "
                    "stream under way), not each segment afresh")
    ap.add_argument("--split", default="tst-COMMON", help="segments of [%(default)s]")
    ap.add_argument("--corpus-level", action="store_true",
                    help="print the corpus' speech level per split instead")
    ap.add_argument("--splits", default=",".join(SPLITS),
                    help="--corpus-level: splits [%(default)s]")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    pair = registry.pair_for(args.model)
    if args.corpus_level:
        table = corpus_level(pair, args.splits.split(","))
    else:
        levels = {"off": [False], "on": [True], "both": [False, True]}[args.level]
        scales = [float(s) for s in args.scales.split(",")]
        table = bleu_by_scale(args.model, args.segments, scales, levels, args.chunk_ms, pair,
                              args.split, args.warm)
        print(f"{args.model}, offline greedy, first {args.segments} segments of {args.split}; "
              f"level control: target {level.CORPUS_LEVEL_DBFS:g} dBFS, {args.chunk_ms:g} ms "
              f"chunks{', warmed on the segment before' if args.warm else ''}")
    with pd.option_context("display.width", 200):
        print(table.to_string(index=False))


if __name__ == "__main__":
    main()
