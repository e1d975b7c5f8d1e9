"""The record store: every decoded (model, segment, policy setting) kept once, for all sweeps.

Several notebooks decode the same things (every model offline, LA-2, wait-k-words settings
recur across papers). :func:`simul.sweep.run` looks each (segment, setting) up here before
decoding an utterance, decodes only the settings not found and stores what it decoded. A
stored record is the record dict as decoded, ``elapsed`` included, so a reused record keeps
the computation-aware latency its first decode measured.

**Key.** A record is stored under the SHA-256 of the canonical JSON (sorted keys, no
spaces) of :func:`key_fields`: the model's checksum (config and weights,
:attr:`simul.sweep.ModelRef.checksum`), the corpus checksum of the split (as the sweep
computes it), the pair, the split, the segment id, the policy and its full settings
(``Policy.settings()``: defaults included, so ``{}`` and explicit defaults are one key),
the kind of device it was decoded on (``cpu`` or ``cuda``, :func:`simul.models.device.kind`:
float results on a GPU may differ from the CPU's, in a unit or a decision, and its times
surely do) and :func:`code_version`. Not in the key: where the inputs live and what they are
called (the model directory's name, the wav's path), which a sweep sets on the records it
takes from here; nor ``share`` (shared computations give the same units, and each setting is
charged what it would have spent alone, see :mod:`simul.sweep.calls`), nor the machine, nor
which GPU (``cuda:0`` and ``cuda:1``, or two GPU models, share a key as two CPUs do; each
record's ``device`` field names the one that decoded it), nor whether it was decoded alone
or in lockstep with other utterances (:mod:`simul.sweep.lockstep`: its ``lockstep`` field says
so; its computation-aware times are single-stream either way, and its units are those of
decoding it alone but where batched float rounding flips a rare near-tie).

**Code version.** :func:`code_version` hashes the source text of the modules that decide
the units and their delays (:data:`CODE_FILES`: the streaming session, the simulator, the
lockstep scheduler,
the policies, the model adapter and its decoders, the device clock, the unit→word rules,
the shared calls, the record fields and the corpus reader that gives the audio) with the
installed torch and espnet versions. The text is read when the process imports this module (with
:mod:`simul.sweep` and the policies); a process whose files have changed since
(:func:`code_changed`: a notebook kernel left open across an edit, an autoreload, a
long-lived Dask worker) neither looks records up nor stores any, since the code it runs
may not be the files'. Workers report their own version with each result, and records
are stored under it. The version is coarse on purpose: any edit of those files, a comment or a
docstring included, makes every stored record a miss (they are decoded again and stored
under the new version). Deciding which edits could change a decode is what a cache must
not get wrong; redoing a decode costs minutes, while a record served from stale code would
silently mix two versions of a policy in one table. Records of other code versions stay on
disk until ``simul store clear``.

**Files.** One JSON file per record, ``<root>/<key[:2]>/<key>.json`` holding the key
fields, the record and when and where it was decoded. Writes go to a temporary file in the
same directory, renamed into place (``os.replace``), so concurrent writers and kills never
leave a torn record (the last writer of a key wins; both wrote a valid record). A file that
cannot be read, is not the JSON expected, holds other key fields than asked (a hash
collision or a hand edit) or a record :func:`simul.records.check` refuses is a miss, and
the next decode replaces it. The store is a cache: failing to write it warns and goes on.

**Where.** ``~/.cache/simul/records``; the environment variable ``SIMUL_STORE`` moves it
(a directory) or turns it off (``off``). A sweep turns it off with ``store: false`` in its
spec or ``simul sweep --no-store``, every notebook's sweeps with ``simul reproduce
--no-store``. ``simul store info`` describes it, ``simul store clear`` empties it.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import re
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from simul.records import check

ENV = "SIMUL_STORE"
DEFAULT_ROOT = Path("~/.cache/simul/records")
OFF = ("off", "none", "false", "no", "0")
"""Values of ``SIMUL_STORE`` that turn the store off."""
FORMAT = 1
"""The stored files' layout (``format`` in each file)."""

PACKAGE = Path(__file__).resolve().parents[1]
"""The :mod:`simul` package (this module is ``simul/sweep/store.py``)."""
CODE_FILES = ("decoding/session.py", "decoding/simulate.py", "decoding/text.py",
              "sweep/lockstep.py", "policies/*.py", "models/adapter.py", "models/adapters/*.py",
              "models/extensions/*.py", "models/device.py", "metrics/units.py",
              "sweep/calls.py", "records.py", "corpus/mustc.py")
"""Modules of :mod:`simul` (globs, relative to the package) whose source decides the records."""
LIBRARIES = ("torch", "espnet")

_NAME = re.compile(r"[0-9a-f]{64}\.json")


# --------------------------------------------------------------------------- keys
def canonical(data: Any) -> str:
    """The JSON text that keys hash: sorted keys, no spaces; tuples as lists."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False, default=str)


def source_digest(package: Path | None = None) -> str:
    """SHA-256 of the source text of :data:`CODE_FILES` (names and contents) in ``package``
    (simul's own by default) as the files are now."""
    package = PACKAGE if package is None else package
    h = hashlib.sha256()
    for pattern in CODE_FILES:
        for path in sorted(package.glob(pattern)):
            h.update(f"{path.relative_to(package).as_posix()}\0".encode())
            h.update(hashlib.sha256(path.read_bytes()).hexdigest().encode())
    return h.hexdigest()


_LOADED = source_digest()
"""The source when this process imported :mod:`simul.sweep` (which imports this module and
the policies): the code it decodes with, unless the files changed since."""


@cache
def code_version() -> str:
    """The decoding code's version: SHA-256 of :data:`CODE_FILES`' source text as this
    process imported it and of the :data:`LIBRARIES`' versions."""
    h = hashlib.sha256(_LOADED.encode())
    for name in LIBRARIES:
        try:
            version = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            version = "none"
        h.update(f"\0{name}={version}".encode())
    return h.hexdigest()


def code_changed() -> bool:
    """Whether :data:`CODE_FILES` changed since this process imported them: the code it
    runs may then be neither the files' nor :func:`code_version`'s (a long-lived kernel or
    worker, an autoreload), so its records are neither looked up nor stored."""
    try:
        return source_digest() != _LOADED
    except OSError:
        return True


def key_fields(*, model: str, corpus: str, pair: str, split: str, segment: str, policy: str,
               settings: dict, device: str = "cpu", code: str | None = None) -> dict:
    """What a record is stored under: model checksum, corpus checksum of the split, pair,
    split, segment id, policy name, its full settings, the device's kind (``cpu`` or
    ``cuda``; ``cuda:N`` is ``cuda``), code version (this process's by default)."""
    from simul.models.device import kind

    return {"model": model, "corpus": corpus, "pair": pair, "split": split,
            "segment": segment, "policy": policy, "settings": settings,
            "device": kind(device), "code": code_version() if code is None else code}


def key(fields: dict) -> str:
    """The record's name in the store: SHA-256 of the fields' canonical JSON."""
    return hashlib.sha256(canonical(fields).encode()).hexdigest()


# --------------------------------------------------------------------------- the store
def location() -> Path | None:
    """The store's directory (``SIMUL_STORE`` or ``~/.cache/simul/records``); None when
    ``SIMUL_STORE`` turns it off."""
    value = os.environ.get(ENV, "").strip()
    if value.lower() in OFF:
        return None
    return Path(value or DEFAULT_ROOT).expanduser()


@dataclass(frozen=True)
class Entry:
    """A stored file as read by :meth:`Store.entries`: ``data`` is None when unreadable."""

    path: Path
    size: int
    blocks: int  # bytes on disk
    mtime: float
    data: dict | None


class Store:
    """Records on disk, one file each, named by :func:`key`."""

    def __init__(self, root: str | Path):
        self.root = Path(root).expanduser()
        self._warned = False

    @classmethod
    def default(cls) -> Store | None:
        """The store at :func:`location`; None when turned off."""
        root = location()
        return None if root is None else cls(root)

    def path(self, fields: dict) -> Path:
        k = key(fields)
        return self.root / k[:2] / f"{k}.json"

    def get(self, fields: dict) -> dict | None:
        """The record stored under ``fields``; None when missing, torn or not matching."""
        path = self.path(fields)
        try:
            data = json.loads(path.read_bytes())
        except (OSError, ValueError):
            return None
        return _valid(data, fields, str(path))

    def put(self, fields: dict, record: dict) -> Path | None:
        """Store ``record`` under ``fields`` atomically; None (and a warning, once) when the
        store cannot be written."""
        path = self.path(fields)
        text = json.dumps({"format": FORMAT, "key": fields, "record": record,
                           "stored": time.time(), "machine": platform.node()},
                          ensure_ascii=False, default=str)
        tmp = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem[:16]}.",
                                       suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
        except OSError as e:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)
            if not self._warned:
                warnings.warn(f"record store {self.root}: not written ({e})", stacklevel=2)
                self._warned = True
            return None
        return path

    def files(self) -> Iterator[Path]:
        """The record files (not the temporary files of writers)."""
        if not self.root.is_dir():
            return
        for shard in sorted(self.root.iterdir()):
            if shard.is_dir() and len(shard.name) == 2:
                for path in sorted(shard.iterdir()):
                    if _NAME.fullmatch(path.name) and path.name.startswith(shard.name):
                        yield path

    def entries(self) -> Iterator[Entry]:
        for path in self.files():
            try:
                st = path.stat()
                data = json.loads(path.read_bytes())
            except FileNotFoundError:
                continue
            except (OSError, ValueError):
                data = None
            if not isinstance(data, dict) or not isinstance(data.get("key"), dict):
                data = None
            yield Entry(path, st.st_size, getattr(st, "st_blocks", 0) * 512 or st.st_size,
                        st.st_mtime, data)

    def info(self) -> dict:
        """Location, record files, bytes (apparent and on disk), counts by model, policy and
        code version (this code's, other)."""
        current = code_version()
        out = {"location": str(self.root), "records": 0, "bytes": 0, "disk_bytes": 0,
               "unreadable": 0, "current_code": 0, "other_code": 0,
               "by_model": Counter(), "by_policy": Counter()}
        for e in self.entries():
            out["records"] += 1
            out["bytes"] += e.size
            out["disk_bytes"] += e.blocks
            if e.data is None:
                out["unreadable"] += 1
                continue
            fields, record = e.data["key"], e.data.get("record") or {}
            out["current_code" if fields.get("code") == current else "other_code"] += 1
            model = f"{record.get('model') or '?'} ({str(fields.get('model'))[:12]})"
            out["by_model"][model] += 1
            out["by_policy"][str(fields.get("policy"))] += 1
        return out

    def clear(self, *, model: str | None = None, older_than_days: float | None = None,
              dry_run: bool = False) -> tuple[int, int]:
        """Remove records (all; or those of ``model`` — the name it was decoded under, or a
        prefix of its checksum — and/or older than ``older_than_days``) and return (files,
        bytes). Clearing everything also removes writers' leftover temporary files and
        empty shard directories; unreadable records go with any filter."""
        cutoff = None if older_than_days is None else time.time() - older_than_days * 86400
        removed = size = 0
        for e in self.entries():
            if cutoff is not None and e.mtime >= cutoff:
                continue
            if model is not None and e.data is not None:
                label = (e.data.get("record") or {}).get("model")
                checksum = str(e.data["key"].get("model"))
                if label != model and not (len(model) >= 6 and checksum.startswith(model)):
                    continue
            if not dry_run:
                e.path.unlink(missing_ok=True)
            removed += 1
            size += e.size
        if not dry_run and self.root.is_dir():
            everything = model is None and older_than_days is None
            for shard in self.root.iterdir():
                if not (shard.is_dir() and len(shard.name) == 2):
                    continue
                for tmp in shard.glob(".*.tmp"):
                    try:
                        if everything or tmp.stat().st_mtime < time.time() - 86400:
                            tmp.unlink()
                    except FileNotFoundError:  # its writer renamed it meanwhile
                        pass
                try:
                    shard.rmdir()  # only when empty
                except OSError:
                    pass
        return removed, size


def _valid(data: Any, fields: dict, where: str) -> dict | None:
    """The stored record when ``data`` is a stored file of ``fields`` holding a sound
    record, else None."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    record = data.get("record")
    if (not isinstance(record, dict) or not isinstance(data.get("key"), dict)
            or canonical(data["key"]) != canonical(fields)
            or record.get("policy") != fields["policy"]
            or record.get("segment_id") != fields["segment"]
            or canonical(record.get("settings")) != canonical(fields["settings"])):
        return None
    try:
        check(record, where)
    except ValueError:
        return None
    return record


# --------------------------------------------------------------------------- the CLI
def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def main_info() -> int:
    store = Store.default()
    if store is None:
        print(f"the record store is off ({ENV}={os.environ.get(ENV)})")
        return 0
    info = store.info()
    print(f"location: {info['location']}{'' if store.root.is_dir() else ' (not created yet)'}")
    print(f"records:  {info['records']} ({info['current_code']} of this code version, "
          f"{info['other_code']} of others, {info['unreadable']} unreadable)")
    print(f"size:     {_size(info['bytes'])} ({_size(info['disk_bytes'])} on disk)")
    for what in ("by_model", "by_policy"):
        if info[what]:
            print(f"{what.replace('_', ' ')}:")
            for name, n in sorted(info[what].items(), key=lambda kv: (-kv[1], kv[0])):
                print(f"  {n:8d}  {name}")
    return 0


def main_clear(*, model: str | None, older_than_days: float | None, yes: bool) -> int:
    store = Store.default()
    if store is None:
        print(f"the record store is off ({ENV}={os.environ.get(ENV)})")
        return 0
    if older_than_days is not None and older_than_days < 0:
        raise ValueError(f"--older-than: a number of days ≥ 0, got {older_than_days}")
    n, size = store.clear(model=model, older_than_days=older_than_days, dry_run=not yes)
    if not yes:
        print(f"{store.root}: would remove {n} records ({_size(size)}); add --yes to remove "
              "them")
        return 1
    print(f"{store.root}: removed {n} records ({_size(size)})")
    return 0


__all__ = ["Store", "key_fields", "key", "code_version", "location", "canonical"]
