"""Offline greedy BLEU of several models against a control, per test split and synthesizer,
with paired-bootstrap intervals: the measurement behind a recipe ablation.

The first model is the control (e.g. a run continued with the recipe as it is); every other
one (a run with one change: speed perturbation, SpecAugment off, ...) is compared with it on
the same segments: BLEU(model) − BLEU(control), its 95 % interval from sacrebleu-style
paired resampling (:func:`simul.analysis.claims.bleu_difference`) and the verdict (holds: the change
helps; contradicted: it hurts; undecided). Models are shipped names or directories packed
with ``simul models pack ... --out-root DIR``.

    python benchmarks/compare_models.py CONTROL MODEL [MODEL ...] --pair en-es \
        [--max-utterances N] [--resamples 1000]
"""

from __future__ import annotations

import argparse
import os

import pandas as pd
from offline_by_engine import SPLITS, split_records  # benchmarks/, beside this script

from simul.analysis.claims import bleu_difference
from simul.metrics.quality import corpus_quality
from simul.models.loader import load

ENGINES = ("all", "espeak-ng", "festival")


def compare(names: list[str], pair: str, max_utterances: int | None,
            resamples: int) -> pd.DataFrame:
    control, *others = names
    models = {name: load(name) for name in names}  # loaded once for both splits
    rows = []
    for split in SPLITS:
        recs, engines = {}, []
        for name in names:
            recs[name], engines = split_records(models[name], name, pair, split,
                                                max_utterances)
        for engine in ENGINES:
            idx = [i for i, e in enumerate(engines) if engine in ("all", e)]
            if not idx:
                continue
            refs = [recs[control][i].reference for i in idx]
            hyps = {name: [recs[name][i].prediction for i in idx] for name in names}
            row = {"split": split, "engine": engine, "n": len(idx)}
            for name in names:
                row[f"BLEU {os.path.basename(str(name))}"] = round(
                    corpus_quality(hyps[name], refs).bleu, 2)
            for name in others:
                ev = bleu_difference(hyps[control], hyps[name], refs, claimed="greater",
                                     resamples=resamples)
                row[f"{os.path.basename(str(name))} − control"] = ev.text()
            rows.append(row)
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+", help="control first, then the models to compare")
    ap.add_argument("--pair", default="en-es")
    ap.add_argument("--max-utterances", type=int, default=None)
    ap.add_argument("--resamples", type=int, default=1000)
    args = ap.parse_args()
    if len(args.models) < 2:
        ap.error("give a control and at least one model to compare with it")
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    table = compare(args.models, args.pair, args.max_utterances, args.resamples)
    with pd.option_context("display.width", 250, "display.max_colwidth", 60):
        print(table.to_string(index=False))


if __name__ == "__main__":
    main()
