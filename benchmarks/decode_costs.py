"""Milliseconds per adapter call inside two policies (the numbers behind README Performance).

    python benchmarks/decode_costs.py [--utterances 20] [--threads 1]

1. ``blstm_char_en-es`` read like wait-k with a 100 ms stride (one greedy unit per read,
   decoder state reused): ms per encode and per greedy call.
2. ``conformer_bpe_en-es`` under LA-2 at 1 s chunks, beam 5: ms per chunk encoding and in
   beam search.

Printed, never asserted; compare within one run (the machine's speed drifts).
"""

from __future__ import annotations

import argparse
import time

import torch

from simul import corpus
from simul.corpus import DEFAULT_ROOT
from simul.decoding.simulate import simulate
from simul.models.loader import load
from simul.policies import make


def _timed(obj, name: str, totals: dict) -> None:
    inner = getattr(obj, name)

    def wrapper(*args, **kwargs):
        t0 = time.perf_counter()
        out = inner(*args, **kwargs)
        totals[name] = (totals.get(name, (0, 0.0))[0] + 1,
                        totals.get(name, (0, 0.0))[1] + time.perf_counter() - t0)
        return out
    setattr(obj, name, wrapper)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--utterances", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    segs = corpus.load_list(DEFAULT_ROOT, "en-es", "tst-COMMON", limit=args.utterances)

    blstm, totals = load("blstm_char_en-es"), {}
    for name in ("encode", "greedy"):
        _timed(blstm, name, totals)
    for seg in segs:
        units, state = [], None
        for end in range(16000, len(seg.audio) + 1600, 1600):
            hyp = blstm.greedy(blstm.encode(seg.audio[:end]), units, max_new=1, state=state)
            units, state = units + hyp.tokens, hyp.resume
    print(f"blstm_char_en-es, 100 ms reads, {args.threads} thread(s): " + ", ".join(
        f"{k} {1000 * t / n:.2f} ms/call ({n})" for k, (n, t) in totals.items()))

    conformer, totals = load("conformer_bpe_en-es"), {}
    for name in ("encode", "beam_search"):
        _timed(conformer, name, totals)
    policy = make("onlinization", {"chunk_ms": 1000.0, "rule": "la", "n": 2, "beam": 5})
    for seg in segs:
        simulate(conformer, policy, seg, model_name="conformer_bpe_en-es")
    print(f"conformer_bpe_en-es, LA-2 1 s chunks, {args.threads} thread(s): " + ", ".join(
        f"{k} {1000 * t / n:.1f} ms/chunk ({n})" for k, (n, t) in totals.items()))


if __name__ == "__main__":
    main()
