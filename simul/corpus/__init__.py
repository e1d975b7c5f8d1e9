"""Corpora: one reader for MuST-C and for the embedded mini corpus built by simul.

``load(root, pair, split)`` yields :class:`Segment` objects. A corpus built by simul (it has
a ``manifest.json``) is first checked against its manifest, so a stale or damaged corpus is
reported instead of read. A split may name an acoustic condition after ``@``
(``tst-COMMON@snr=10``; :mod:`simul.corpus.conditions`): its segments are then heard under it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator
from pathlib import Path

from simul.corpus import conditions, manifest
from simul.corpus.built import BUILDER_VERSION, DEFAULT_ROOT, built_splits, not_built
from simul.corpus.mustc import (
    SAMPLE_RATE,
    Alignment,
    CorpusError,
    Segment,
    Word,
)
from simul.corpus.mustc import find_split_dir as _find_split_dir
from simul.corpus.mustc import load as _load_mustc

__all__ = [
    "SAMPLE_RATE", "Alignment", "CorpusError", "DEFAULT_ROOT", "Segment", "Word",
    "find_split_dir", "load", "load_list", "check_built", "manifest_root", "export_simuleval",
    "main_export_simuleval",
]


def find_split_dir(root: str | Path, pair: str, split: str) -> Path:
    """The folder of ``split`` (:func:`simul.corpus.mustc.find_split_dir`); a condition after
    ``@`` is checked, and the folder is its split's."""
    base, _ = conditions.split_condition(split)
    return _find_split_dir(root, pair, base)


def manifest_root(root: str | Path) -> Path | None:
    """The folder of the ``manifest.json`` of a simul-built corpus at ``root`` or its parent
    (``root`` a pair's folder); None for a corpus simul did not build (MuST-C)."""
    root = Path(root)
    for candidate in (root, root.parent):
        if (candidate / manifest.NAME).is_file():
            return candidate
    return None


def check_built(root: str | Path, split: str | None = None) -> dict | None:
    """Verify the manifest of a simul-built corpus at ``root`` (or its parent); None for
    MuST-C. With ``split``, a split the corpus has only the text of (not spoken yet) is
    refused, in one line naming the command that speaks it."""
    root = Path(root)
    base = manifest_root(root)
    if base is not None:
        found = manifest.verify(base, builder_version=BUILDER_VERSION)
        if split is not None:
            split = conditions.split_condition(split)[0]
        if (split is not None and split in found.get("sizes", {})
                and split not in built_splits(found)):
            raise CorpusError(not_built(base, split, found))
        return found
    if root.name.startswith("mini") and not root.exists():
        raise CorpusError(f"{root}: no corpus here — build it with `simul corpus build`")
    return None


def load(root: str | Path, pair: str, split: str, *, with_audio: bool = True,
         limit: int | None = None) -> Iterator[Segment]:
    """Segments of ``split`` for ``pair`` (e.g. "en-es") under ``root``, in corpus order;
    ``split`` may carry a condition (``tst-COMMON@rt60=0.6``), which changes their audio."""
    base, condition = conditions.split_condition(split)
    check_built(root, base)
    segments = _load_mustc(root, pair, base, with_audio=with_audio, limit=limit)
    if condition is None or not with_audio:
        return segments
    pool = functools.partial(_babble_pool, str(root), pair, conditions.babble_split(base))
    return (dataclasses.replace(seg, audio=condition.apply(seg.audio, seg.id, pool))
            for seg in segments)


@functools.lru_cache(maxsize=4)
def _babble_pool(root: str, pair: str, split: str) -> tuple:
    """The utterances babble is made of: the first segments of ``split``."""
    return tuple(seg.audio for seg in _load_mustc(root, pair, split,
                                                  limit=conditions.BABBLE_POOL))


def load_list(root: str | Path, pair: str, split: str, **kw) -> list[Segment]:
    return list(load(root, pair, split, **kw))


def export_simuleval(root: str | Path, pair: str, split: str, out: str | Path, *,
                     max_utterances: int | None = None,
                     ids: list[str] | None = None, text: bool = False) -> int:
    """Write a split as SimulEval reads speech input: one wav per segment (16 kHz mono,
    float samples, as the segments are read), ``source.txt`` (their paths, one per line)
    and ``target.txt`` (the references), under ``out``; the first ``max_utterances``
    segments, or those of ``ids``. ``text``: as SimulEval reads text input instead,
    ``source.txt`` holding each segment's transcript (no wav). Written into a temporary
    folder first, so an interrupted export leaves nothing half. Returns the number of
    segments."""
    import os
    import shutil
    import tempfile

    import soundfile as sf

    out = Path(out)
    segments = load_list(root, pair, split, limit=None if ids else max_utterances,
                         with_audio=not text)
    if ids:
        by_id = {s.id: s for s in segments}
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise CorpusError(f"{root} {pair} {split}: no segment {missing[0]!r}")
        segments = [by_id[i] for i in ids]
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        if text:
            (tmp / "source.txt").write_text("".join(f"{seg.source}\n" for seg in segments))
        else:
            for seg in segments:
                sf.write(tmp / f"{seg.id}.wav", seg.audio, SAMPLE_RATE, subtype="FLOAT")
            (tmp / "source.txt").write_text(
                "".join(f"{(out / seg.id).resolve()}.wav\n" for seg in segments))
        (tmp / "target.txt").write_text("".join(f"{seg.target}\n" for seg in segments))
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return len(segments)


def main_export_simuleval(root: str | Path, pair: str, split: str, out: str | Path, *,
                          max_utterances: int | None = None, text: bool = False) -> int:
    """``simul corpus simuleval``: :func:`export_simuleval`, then what was written."""
    n = export_simuleval(root, pair, split, out, max_utterances=max_utterances, text=text)
    print(f"{out}: {n} segments (source.txt, target.txt"
          f"{'' if text else ', one wav each'})")
    return 0
