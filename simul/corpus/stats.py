"""Summary statistics of a corpus: what `simul corpus info` prints."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import yaml

from simul.corpus import check_built, find_split_dir, load

SPLITS = ("train", "dev", "tst-COMMON", "tst-HE")
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def vocabulary(lines) -> set[str]:
    """Lower-cased word types (letters only; punctuation and digits dropped)."""
    return {w.lower() for line in lines for w in _WORD.findall(line)}


def _voices(split_dir: Path, split: str) -> int | None:
    """Distinct espeak-ng voices (accent+variant) named in our yaml; None for MuST-C."""
    entries = yaml.load((split_dir / "txt" / f"{split}.yaml").read_text(), Loader=yaml.CSafeLoader)
    voices = {e["voice"] for e in entries if "voice" in e}
    return len(voices) if voices else None


def info(root: str | Path, pairs: tuple[str, ...] = ("en-es", "en-pt"),
         splits: tuple[str, ...] = SPLITS) -> pd.DataFrame:
    """One row per (pair, split) present under ``root``."""
    check_built(root)
    rows = []
    for pair in pairs:
        for split in splits:
            try:
                split_dir = find_split_dir(root, pair, split)
            except ValueError:
                continue
            segs = list(load(root, pair, split, with_audio=False))
            durations = pd.Series([s.duration_ms / 1000 for s in segs])
            rows.append({
                "pair": pair, "split": split, "segments": len(segs),
                "hours": round(durations.sum() / 3600, 2),
                "mean_s": round(durations.mean(), 2), "max_s": round(durations.max(), 2),
                "src_words": sum(len(s.source.split()) for s in segs),
                "src_vocab": len(vocabulary(s.source for s in segs)),
                "tgt_vocab": len(vocabulary(s.target for s in segs)),
                "speakers": len({s.speaker_id for s in segs}),
                "voices": _voices(split_dir, split),
            })
    if not rows:
        raise FileNotFoundError(f"{root}: no split of {pairs} found")
    return pd.DataFrame(rows)
