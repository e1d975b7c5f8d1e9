"""Manifest of a generated corpus: what built it and a checksum of every file.

``manifest.json`` is written last by the builder, so its absence means an unfinished
corpus; sizes (cheap) or SHA-256 checksums (``deep``) show files changed or lost since.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path

from simul.corpus.mustc import CorpusError

NAME = "manifest.json"
_TEXT_SUFFIXES = (".yaml", ".jsonl", ".en", ".es", ".pt", ".de", ".links")


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def sha256_files(paths: Iterable[Path]) -> str:
    """One checksum of several files (each by its SHA-256, in order): a model's, a corpus'."""
    h = hashlib.sha256()
    for p in paths:
        h.update(sha256(Path(p)).encode())
    return h.hexdigest()


def write(root: Path, info: dict) -> dict:
    """Checksum every file under ``root`` and write ``root/manifest.json`` (through a
    temporary file beside ``root``, so that a reader finds the old manifest or the new one)."""
    by_inode: dict[tuple[int, int], str] = {}  # hard links are hashed once
    files = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.name != NAME):
        st = path.stat()
        key = (st.st_dev, st.st_ino)
        if key not in by_inode:
            by_inode[key] = sha256(path)
        files[path.relative_to(root).as_posix()] = {"bytes": st.st_size, "sha256": by_inode[key]}
    manifest = {**info, "files": files}
    tmp = root.with_name(f".{root.name}.{NAME}.{os.getpid()}")
    try:
        tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, root / NAME)
    finally:
        tmp.unlink(missing_ok=True)
    return manifest


def read(root: Path) -> dict:
    path = Path(root) / NAME
    if not path.is_file():
        raise CorpusError(
            f"{path}: missing — the corpus at {root} is incomplete or was not built by simul "
            "(rebuild it with `simul corpus build`)"
        )
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise CorpusError(f"{path}: not valid JSON ({e})") from e


def verify(root: Path, *, builder_version: int | None = None, deep: bool = False) -> dict:
    """Check a built corpus; raise :class:`CorpusError` naming the first stale or bad file.

    Always checks presence and byte size of every listed file and the checksums of the text
    files (small); ``deep`` also hashes the audio.
    """
    root = Path(root)
    manifest = read(root)
    if builder_version is not None and manifest.get("builder_version") != builder_version:
        raise CorpusError(
            f"{root / NAME}: field 'builder_version' is {manifest.get('builder_version')}, "
            f"this simul writes {builder_version}: the corpus is stale (rebuild it with "
            "`simul corpus build --force`)"
        )
    for rel, entry in manifest.get("files", {}).items():
        path = root / rel
        if not path.is_file():
            raise CorpusError(f"{path}: listed in {root / NAME} but missing")
        if path.stat().st_size != entry["bytes"]:
            raise CorpusError(
                f"{path}: {path.stat().st_size} bytes, {root / NAME} says {entry['bytes']}"
            )
        if (deep or path.suffix in _TEXT_SUFFIXES) and sha256(path) != entry["sha256"]:
            raise CorpusError(f"{path}: checksum differs from {root / NAME}")
    return manifest
