"""Offline greedy BLEU of shipped models on the test splits, overall and per synthesizer.

How much of a model's quality carries over to speech of the other engine, and to the
voices of tst-HE; and, for models trained on an older corpus, how much harder the current
one is. Prints one row per (model, split, engine) and the ratios tst-HE / tst-COMMON.

    python benchmarks/offline_by_engine.py [--models conformer_bpe_en-es ...] \
        [--max-utterances N] [--out FILE.csv]
"""

from __future__ import annotations

import argparse
import os
import time

import pandas as pd

from simul.corpus import DEFAULT_ROOT, stats
from simul.decoding.decode_split import offline_records
from simul.metrics.quality import corpus_quality
from simul.models import registry
from simul.models.loader import load

SPLITS = ("tst-COMMON", "tst-HE")


def split_records(model, name: str, pair: str, split: str,
                  max_utterances: int | None) -> tuple[list, list[str]]:
    """Offline greedy records of the first ``max_utterances`` segments of ``split`` and the
    synthesizer of each."""
    recs = list(offline_records(model, model_name=str(name), pair=pair, split=split,
                                max_utterances=max_utterances))
    return recs, stats.engines(DEFAULT_ROOT, pair, split)[: len(recs)]


def measure(name: str, max_utterances: int | None) -> list[dict]:
    model = load(name)
    pair = registry.pair(name)
    rows = []
    for split in SPLITS:
        t0 = time.monotonic()
        recs, engines = split_records(model, name, pair, split, max_utterances)
        seconds = time.monotonic() - t0
        for engine in ("all", "espeak-ng", "festival"):
            picked = [r for r, e in zip(recs, engines, strict=True) if engine in ("all", e)]
            if not picked:
                continue
            q = corpus_quality([r.prediction for r in picked], [r.reference for r in picked])
            hyp = sum(len(r.prediction.split()) for r in picked)
            ref = sum(len(r.reference.split()) for r in picked)
            rows.append({"model": name, "split": split, "engine": engine, "n": q.n,
                         "bleu": round(q.bleu, 2), "chrf": round(q.chrf, 2),
                         "len_ratio": round(hyp / ref, 3),
                         "seconds": round(seconds, 1) if engine == "all" else None})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="*", default=None, help="shipped models [all]")
    ap.add_argument("--max-utterances", type=int, default=None)
    ap.add_argument("--out", default=None, help="also write the table as CSV")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    rows = []
    for name in args.models or registry.shipped_translators():
        rows += measure(name, args.max_utterances)
    table = pd.DataFrame(rows)
    print(table.to_string(index=False))
    overall = table[table.engine == "all"].pivot(index="model", columns="split", values="bleu")
    overall["tst-HE / tst-COMMON"] = (overall["tst-HE"] / overall["tst-COMMON"]).round(2)
    print()
    print(overall.to_string())
    if args.out:
        table.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
