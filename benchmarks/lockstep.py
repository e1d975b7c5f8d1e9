"""Lockstep decoding (equal-length prefixes of several utterances encoded in one batch)
against decoding each utterance alone: wall time, and how many records differ.

    python benchmarks/lockstep.py [--model blstm_char_en-es] [--policy-set N21]
                                  [--lockstep 8] [--utterances 40] [--split tst-COMMON]

Runs the same sweep twice in this process with one worker and one torch thread (a sweep
runs one worker per core), the record store off: ``lockstep: 1`` then ``lockstep: N``.
Prints both wall times and their ratio; the records whose units differ (float rounding of
batched products can flip a rare near-tie), per setting; and each setting's BLEU, AL,
LAAL and LAAL_CA in both runs. ``--utterances 0`` takes whole splits. Nothing is asserted.

``--encode-only MODEL ...`` times the encoder alone instead: the same-length prefixes (1 s
and 3 s) of the first 8 segments, encoded one by one and in one batch.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import torch

from simul import sweep
from simul.corpus import DEFAULT_ROOT
from simul.models import registry
from simul.sweep import executors

POLICY_SETS = {
    # N21's grid (BLSTM, reads every 100 ms or 200 ms)
    "N21": [{"policy": "wait_k_frames", "grid": {"k": [100, 200], "s": [10, 20], "n": [1, 2, 3]},
             "fixed": {"maxlenratio": 1.0}}],
    # K22's LA-2 at three chunk sizes (beam search per chunk)
    "K22": [{"policy": "onlinization",
             "settings": [{"chunk_ms": c, "rule": "la", "n": 2} for c in (250, 500, 1000)]}],
    # P22's wait-k over words, fixed and adaptive detection
    "P22": [{"policy": "wait_k_words",
             "settings": [{"k": k, "detection": d} for k in (3, 5) for d in ("fixed",
                                                                             "adaptive")]}],
}


def records(path: str) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def encode_only(models: list[str], split: str, corpus: str) -> None:
    from simul.corpus import load
    from simul.models import loader

    segments = list(load(corpus, "en-es", split, limit=8))
    for name in models:
        model = loader.load(name)
        for seconds in (1.0, 3.0):
            n = int(seconds * 16000)
            prefixes = [s.audio[:n] for s in segments if s.audio.size >= n]
            model.encode(prefixes[0])  # warm up
            t0 = time.perf_counter()
            alone = [model.encode(p) for p in prefixes]
            t1 = time.perf_counter()
            batch = model.encode_batch(prefixes)
            t2 = time.perf_counter()
            same = sum(torch.equal(a.states, b.states) for a, b in zip(alone, batch,
                                                                       strict=True))
            print(f"{name:22} {seconds:.0f} s prefixes × {len(prefixes)}: alone "
                  f"{1000 * (t1 - t0) / len(prefixes):6.1f} ms each, batched "
                  f"{1000 * (t2 - t1) / len(prefixes):6.1f} ms each ({(t1 - t0) / (t2 - t1):.1f}×);"
                  f" states identical in {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--encode-only", nargs="+", metavar="MODEL")
    parser.add_argument("--model", default="blstm_char_en-es")
    parser.add_argument("--pair", default=None, help="default: the model's")
    parser.add_argument("--policy-set", default="N21", choices=sorted(POLICY_SETS))
    parser.add_argument("--lockstep", type=int, default=8)
    parser.add_argument("--utterances", type=int, default=40, help="0: whole splits")
    parser.add_argument("--split", nargs="+", default=["tst-COMMON"])
    parser.add_argument("--corpus", default=str(DEFAULT_ROOT))
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.encode_only:
        encode_only(args.encode_only, args.split[0], args.corpus)
        return
    ref = sweep.resolve_model(args.model)
    pair = args.pair or registry.pair(ref.directory)
    executors._model(ref)  # load (and import ESPnet) before either timing
    tables, wall = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in (1, args.lockstep):
            spec = {"models": [args.model], "pair": pair, "splits": args.split,
                    "corpus": args.corpus, "max_utterances": args.utterances or None,
                    "output": f"{tmp}/lockstep{n}", "policies": POLICY_SETS[args.policy_set],
                    "store": False, "lockstep": n}
            t0 = time.perf_counter()
            tables[n] = sweep.run(spec, workers=1, progress=False)
            wall[n] = time.perf_counter() - t0
        alone, together = tables[1], tables[args.lockstep]
        print(f"## {args.model}, {args.policy_set}, {', '.join(args.split)}, "
              f"{int(alone.utterances.iloc[0])} segments per split")
        print(f"alone       {wall[1]:8.1f} s")
        print(f"lockstep {args.lockstep:<3}{wall[args.lockstep]:8.1f} s "
              f"({wall[1] / wall[args.lockstep]:.2f}× faster)")
        differ = []
        for a, b in zip(alone.records, together.records, strict=True):
            ra, rb = records(a), records(b)
            differ.append(sum(x["units"] != y["units"] or x["delays"] != y["delays"]
                              for x, y in zip(ra, rb, strict=True)))
    cols = ["split", "setting", "BLEU", "AL", "LAAL", "LAAL_CA"]
    table = alone[cols].merge(together[cols], on=["split", "setting"],
                              suffixes=("", f"_ls{args.lockstep}"))
    table["records_differ"] = differ
    print(table.to_string(index=False, float_format=lambda x: f"{x:.2f}"))
    print(f"records whose units or delays differ: {sum(differ)} of "
          f"{int(alone.utterances.sum())}")


if __name__ == "__main__":
    main()
