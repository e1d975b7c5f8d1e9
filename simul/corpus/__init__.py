"""Corpora: one reader for MuST-C and for the embedded mini corpus built by simul.

``load(root, pair, split)`` yields :class:`Segment` objects. A corpus built by simul (it has
a ``manifest.json``) is first checked against its manifest, so a stale or damaged corpus is
reported instead of read.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from simul.corpus import manifest
from simul.corpus.mustc import (
    SAMPLE_RATE,
    Alignment,
    CorpusError,
    Segment,
    Word,
    find_split_dir,
)
from simul.corpus.mustc import load as _load_mustc

DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "data" / "mini"

__all__ = [
    "SAMPLE_RATE", "Alignment", "CorpusError", "DEFAULT_ROOT", "Segment", "Word",
    "find_split_dir", "load", "load_list", "check_built",
]


def check_built(root: str | Path) -> dict | None:
    """Verify the manifest of a simul-built corpus at ``root`` (or its parent); None for MuST-C."""
    from simul.corpus.mini.build import BUILDER_VERSION

    root = Path(root)
    for candidate in (root, root.parent):
        if (candidate / manifest.NAME).is_file():
            return manifest.verify(candidate, builder_version=BUILDER_VERSION)
    if root.name.startswith("mini") and not root.exists():
        raise CorpusError(f"{root}: no corpus here — build it with `simul corpus build`")
    return None


def load(root: str | Path, pair: str, split: str, *, with_audio: bool = True,
         limit: int | None = None) -> Iterator[Segment]:
    """Segments of ``split`` for ``pair`` (e.g. "en-es") under ``root``, in corpus order."""
    check_built(root)
    return _load_mustc(root, pair, split, with_audio=with_audio, limit=limit)


def load_list(root: str | Path, pair: str, split: str, **kw) -> list[Segment]:
    return list(load(root, pair, split, **kw))
