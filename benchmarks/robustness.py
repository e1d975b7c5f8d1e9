"""Offline greedy BLEU of speech models on the robustness test: tst-COMMON under noise, rooms
and level (:data:`simul.corpus.conditions.ROBUSTNESS`), and tst-HE's unheard voices.

Prints one row per model: clean tst-COMMON BLEU, then each condition's BLEU as a fraction of
it, and tst-HE / tst-COMMON; ``✗`` marks a fraction under its bar (0.8 at SNR 10 dB, RT60
0.6 s and −20 dB; 0.7 at −30 dB; 0.85 for tst-HE).

A condition is tst-COMMON's first ``--max-utterances`` segments again, degraded: the ratio
compares the same sentences. tst-HE has sentences of its own, so its ratio compares whole
splits (``--voices-utterances``, default all): on a prefix it would mix the sentences'
difficulty with the voices (the retrained en-de Conformer reads 0.75 on the first 50 segments
of each, 0.90 on the whole splits). ``--voices-from-cards`` reads the whole splits' greedy
BLEU from each model's ``metrics.json`` instead (``simul models eval --into-model``: the same
decode of the same segments), refusing a model whose card lacks them or whose training corpus
is older than today's.

    python benchmarks/robustness.py [--models conformer_bpe_en-es ...] \
        [--max-utterances N] [--voices-utterances N | --voices-from-cards] [--out FILE.csv]
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


VOICES = "tst-HE"
VOICES_RUN = " (voices)"
"""The suffix of the columns decoded on ``--voices-utterances`` segments (default: all)."""


def _bleu(records) -> float:
    q = corpus_quality([r.prediction for r in records], [r.reference for r in records])
    return round(q.bleu, 2)


def from_card(name: str) -> dict:
    """``tst-COMMON (voices)`` and ``tst-HE (voices)``: the whole splits' greedy BLEU from
    the model's ``metrics.json``; ValueError naming the file when it cannot stand for them."""
    path = registry.resolve(name) / "metrics.json"
    found = registry.metrics(name)
    missing = [f"{split}/beam1" for split in ("tst-COMMON", VOICES)
               if f"{split}/beam1" not in found]
    if missing:
        raise ValueError(f"{path}: no {' or '.join(missing)} (simul models eval NAME "
                         "--into-model), or drop --voices-from-cards")
    if registry.stale(name):
        raise ValueError(f"{path}: the model was trained on an older corpus than today's; "
                         "drop --voices-from-cards")
    return {"tst-COMMON" + VOICES_RUN: found["tst-COMMON/beam1"]["bleu"],
            VOICES + VOICES_RUN: found[f"{VOICES}/beam1"]["bleu"]}


def measure(name: str, max_utterances: int | None, conditions,
            voices_utterances: int | None = None, voices_from_card: bool = False) -> dict:
    """BLEU of ``name``: ``tst-COMMON`` and every ``tst-COMMON@condition`` on the first
    ``max_utterances`` segments; ``tst-COMMON (voices)`` and ``tst-HE (voices)`` on the first
    ``voices_utterances`` (None: all), or from the model's card (``voices_from_card``,
    :func:`from_card`). tst-COMMON is decoded once for both."""
    voices = from_card(name) if voices_from_card else None  # refused before any decoding
    model = load(name)
    pair = registry.pair(name)
    t0 = time.monotonic()

    def decode(split: str, limit: int | None) -> list:
        return list(offline_records(model, model_name=name, pair=pair, split=split,
                                    max_utterances=limit, progress=False))

    if voices is not None:
        longest = max_utterances
    elif voices_utterances is None or max_utterances is None:
        longest = None
    else:
        longest = max(voices_utterances, max_utterances)
    clean = decode("tst-COMMON", longest)
    row: dict = {"model": name, "tst-COMMON": _bleu(clean[:max_utterances])}
    for condition in conditions:
        row[f"tst-COMMON@{condition}"] = _bleu(decode(f"tst-COMMON@{condition}",
                                                      max_utterances))
    if voices is not None:
        row.update(voices)
    else:
        row["tst-COMMON" + VOICES_RUN] = _bleu(clean[:voices_utterances])
        row[VOICES + VOICES_RUN] = _bleu(decode(VOICES, voices_utterances))
    row["seconds"] = round(time.monotonic() - t0, 1)
    return row


def table(rows: list[dict]) -> pd.DataFrame:
    """BLEU on clean tst-COMMON, then every condition as a fraction of it, and tst-HE as a
    fraction of tst-COMMON decoded on as many segments (the ``(voices)`` columns)."""
    out = []
    for row in rows:
        clean = row["tst-COMMON"]
        shown = {"model": row["model"], "tst-COMMON": clean}
        for split, bleu in row.items():
            if split in ("model", "tst-COMMON", "tst-COMMON" + VOICES_RUN, "seconds"):
                continue
            if split == VOICES + VOICES_RUN:
                label, base = VOICES, row["tst-COMMON" + VOICES_RUN]
            else:
                label, base = split.partition("@")[2], clean
            ratio = bleu / base if base else float("nan")
            bar = BARS.get(label)
            shown[label] = f"{ratio:.2f}{' ✗' if bar and ratio < bar else ''}"
        out.append(shown)
    return pd.DataFrame(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="*", default=None,
                    help="shipped speech-translation models [all]")
    ap.add_argument("--max-utterances", type=int, default=100,
                    help="first segments of tst-COMMON, clean and under each condition")
    ap.add_argument("--voices-utterances", type=int, default=None,
                    help="first segments of tst-COMMON and tst-HE for the tst-HE ratio [all]")
    ap.add_argument("--voices-from-cards", action="store_true",
                    help="the tst-HE ratio from each model's metrics.json (whole splits, "
                         "greedy) instead of decoding both splits again")
    ap.add_argument("--conditions", nargs="*", default=list(ROBUSTNESS),
                    help="conditions of tst-COMMON [the robustness test]")
    ap.add_argument("--out", default=None, help="also write the BLEU of every split as CSV")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    for flag, value in (("--max-utterances", args.max_utterances),
                        ("--voices-utterances", args.voices_utterances)):
        if value is not None and value < 1:
            ap.error(f"{flag}: a positive number of segments, got {value}")
    if args.voices_from_cards and args.voices_utterances is not None:
        ap.error("--voices-from-cards reads the whole splits; drop --voices-utterances")
    names = args.models or registry.shipped_translators()
    if args.voices_from_cards:
        for name in names:  # every card checked before the first decode
            try:
                from_card(name)
            except ValueError as e:
                ap.error(f"--voices-from-cards: {e}")
    rows = [measure(name, args.max_utterances, args.conditions, args.voices_utterances,
                    args.voices_from_cards) for name in names]
    voices = (f"first {args.voices_utterances} segments" if args.voices_utterances
              else "whole splits, from each model's card (metrics.json)"
              if args.voices_from_cards else "whole splits")
    print(f"offline greedy, first {args.max_utterances} segments; BLEU on clean tst-COMMON, "
          f"then each condition's BLEU ÷ it; tst-HE ÷ tst-COMMON on {voices}")
    print(table(rows).to_string(index=False))
    if args.out:
        pd.DataFrame(rows).to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
