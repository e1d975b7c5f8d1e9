"""Summary statistics of a corpus: what `simul corpus info` prints."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import yaml

from simul.corpus import check_built, find_split_dir, load

SPLITS = ("train", "dev", "tst-COMMON", "tst-HE")
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_SENTENCE_END = re.compile(r"[.?!](?:\s|$)")
_INNER_PUNCT = re.compile(r"[,.?!;:](?=.*\w)")


def sentences(text: str) -> int:
    """Sentences in a segment's text: its "." / "?" / "!" ends (at least one)."""
    return max(1, len(_SENTENCE_END.findall(text.strip())))


def inner_punctuation(text: str) -> bool:
    """Whether ``text`` has punctuation before its last word (a comma, a sentence end, ...)."""
    return bool(_INNER_PUNCT.search(text))


def vocabulary(lines) -> set[str]:
    """Lower-cased word types (letters only; punctuation and digits dropped)."""
    return {w.lower() for line in lines for w in _WORD.findall(line)}


def _yaml(split_dir: Path, split: str) -> list[dict]:
    return yaml.load((split_dir / "txt" / f"{split}.yaml").read_text(), Loader=yaml.CSafeLoader)


def engines(root: str | Path, pair: str, split: str) -> list[str]:
    """The synthesizer of every segment, in corpus order ("" where the yaml names none)."""
    return [e.get("engine", "") for e in _yaml(find_split_dir(root, pair, split), split)]


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
            entries = _yaml(split_dir, split)
            voices = {e["voice"] for e in entries if "voice" in e}
            engines = pd.Series([e.get("engine", "") for e in entries])
            n_sent = pd.Series([sentences(s.source) for s in segs])
            rows.append({
                "pair": pair, "split": split, "segments": len(segs),
                "hours": round(durations.sum() / 3600, 2),
                "mean_s": round(durations.mean(), 2), "max_s": round(durations.max(), 2),
                "src_words": sum(len(s.source.split()) for s in segs),
                "src_vocab": len(vocabulary(s.source for s in segs)),
                "tgt_vocab": len(vocabulary(s.target for s in segs)),
                "speakers": len({s.speaker_id for s in segs}),
                "voices": len(voices) if voices else None,
                # share of the audio spoken by festival (the rest: espeak-ng); None for MuST-C
                "festival_%": (round(100 * durations[engines == "festival"].sum()
                                     / durations.sum(), 1) if engines.any() else None),
                "1_sent": int((n_sent == 1).sum()), "2_sent": int((n_sent == 2).sum()),
                "3+_sent": int((n_sent >= 3).sum()),
                "sent/seg": round(n_sent.mean(), 2),
                "inner_punct_%": round(100 * sum(inner_punctuation(s.target) for s in segs)
                                       / len(segs), 1),
            })
    if not rows:
        raise FileNotFoundError(f"{root}: no split of {pairs} found")
    return pd.DataFrame(rows)


def main_info(root: str | Path) -> int:
    """``simul corpus info``: :func:`info` as a table."""
    print(info(root).to_string(index=False))
    return 0
