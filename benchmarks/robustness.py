"""Offline greedy BLEU of speech models on the robustness test: tst-COMMON under noise, rooms
and level (:data:`simul.corpus.conditions.ROBUSTNESS`), and tst-HE's unheard voices.

Prints one row per model: clean tst-COMMON BLEU, then each condition's BLEU as a fraction of
it, and tst-HE / tst-COMMON; ``✗`` marks a fraction under its bar (0.8 at SNR 10 dB, RT60
0.6 s and −20 dB; 0.7 at −30 dB; 0.85 for tst-HE).

    python benchmarks/robustness.py [--models conformer_bpe_en-es ...] \
        [--max-utterances N] [--out FILE.csv]
"""

from __future__ import annotations

import argparse
import os
import time

import pandas as pd

from simul.corpus.conditions import ROBUSTNESS
from simul.decoding.decode_split import offline_records
from simul.metrics.quality import corpus_quality
from simul.models import registry
from simul.models.loader import load

BARS = {"snr=10": 0.8, "rt60=0.6": 0.8, "gain=-20": 0.8, "gain=-30": 0.7, "tst-HE": 0.85}
"""The fraction of clean tst-COMMON BLEU each condition must keep."""


def measure(name: str, max_utterances: int | None, splits) -> dict:
    model = load(name)
    pair = registry.pair(name)
    row: dict = {"model": name}
    t0 = time.monotonic()
    for split in splits:
        recs = list(offline_records(model, model_name=name, pair=pair, split=split,
                                    max_utterances=max_utterances, progress=False))
        q = corpus_quality([r.prediction for r in recs], [r.reference for r in recs])
        row[split] = round(q.bleu, 2)
    row["seconds"] = round(time.monotonic() - t0, 1)
    return row


def table(rows: list[dict]) -> pd.DataFrame:
    """BLEU on clean tst-COMMON, then every other column as a fraction of it."""
    out = []
    for row in rows:
        clean = row["tst-COMMON"]
        shown = {"model": row["model"], "tst-COMMON": clean}
        for split, bleu in row.items():
            if split in ("model", "tst-COMMON", "seconds"):
                continue
            label = split.partition("@")[2] or split
            ratio = bleu / clean if clean else float("nan")
            bar = BARS.get(label)
            shown[label] = f"{ratio:.2f}{' ✗' if bar and ratio < bar else ''}"
        out.append(shown)
    return pd.DataFrame(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="*", default=None,
                    help="shipped speech-translation models [all]")
    ap.add_argument("--max-utterances", type=int, default=100)
    ap.add_argument("--conditions", nargs="*", default=list(ROBUSTNESS),
                    help="conditions of tst-COMMON [the robustness test]")
    ap.add_argument("--out", default=None, help="also write the BLEU of every split as CSV")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    splits = ["tst-COMMON", *(f"tst-COMMON@{c}" for c in args.conditions), "tst-HE"]
    rows = [measure(name, args.max_utterances, splits)
            for name in args.models or registry.shipped_translators()]
    print(f"offline greedy, first {args.max_utterances} segments; BLEU on clean tst-COMMON, "
          "then each condition's BLEU ÷ it")
    print(table(rows).to_string(index=False))
    if args.out:
        pd.DataFrame(rows).to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
