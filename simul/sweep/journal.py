"""What a sweep's output directory records about its work and where the work came from.

- :class:`Journal` — ``journal/<model>/<split>.jsonl``: one line per utterance done,
  appended and fsynced as it completes, so that a killed sweep resumes where it stopped;
- the claim on the output directory (``sweep.json``): the spec's fingerprint (settings,
  model and corpus checksums, device kind, lockstep), which refuses a different spec in the
  same directory unless forced;
- provenance for the summary: :func:`corpus_checksum`, :func:`git_commit`, :func:`machine`.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from simul.corpus import find_split_dir
from simul.corpus import manifest as corpus_manifest
from simul.models import device as devices
from simul.sweep.spec import ModelRef, Spec, SweepError


# --------------------------------------------------------------------------- the journal
class Journal:
    """Utterances done for one (model, split): a JSON line each, appended and fsynced."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def read(self) -> dict[int, list[dict]]:
        """Position in the split → records (one per setting); cuts off a torn last line."""
        return {pos: entry["records"] for pos, entry in self.entries().items()}

    def entries(self) -> dict[int, dict]:
        """Position in the split → its line (``records``, ``segment_id``, ``from_store``
        when written); cuts off a torn last line."""
        if not self.path.is_file():
            return {}
        done: dict[int, dict] = {}
        good = 0
        with open(self.path, "rb") as f:
            data = f.read()
        for line in data.splitlines(keepends=True):
            if not line.endswith(b"\n"):
                break
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                break
            done[entry["position"]] = entry
            good += len(line)
        if good < len(data):  # killed while writing: drop the partial line
            with open(self.path, "r+b") as f:
                f.truncate(good)
        return done

    def append(self, position: int, segment_id: str, records: list[dict],
               from_store: list[bool] | None = None,
               seconds: list[float | None] | None = None) -> None:
        """Journal an utterance; ``from_store``: which records came from the record store;
        ``seconds``: the wall time each record took to decode here (None: from the store),
        which ``benchmarks/reproduce_profile.py`` adds up."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        entry = {"position": position, "segment_id": segment_id, "records": records}
        if from_store is not None:
            entry["from_store"] = from_store
        if seconds is not None:
            entry["seconds"] = [None if x is None else round(x, 4) for x in seconds]
        line = json.dumps(entry, ensure_ascii=False)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())


# -------------------------------------------------------------------------- the claim
def _fingerprint(spec: Spec, refs: list[ModelRef], corpora: dict[str, str],
                 device: str = devices.CPU) -> dict:
    """What makes a sweep the same sweep: what it decodes, with which models, on which
    corpus, the device's kind and lockstep (as ``sweep.json`` keeps it)."""
    from simul import __version__

    out = {
        "simul": __version__,
        "models": {r.label: r.checksum for r in refs},
        "pair": spec.pair,
        "corpus": corpora,
        "max_utterances": spec.max_utterances,
        "share": spec.share,
        "settings": [[s.policy, [list(p) for p in s.params]] for s in spec.settings],
    }
    if devices.kind(device) != devices.CPU:  # CPU sweeps keep the fingerprint they had
        out["device"] = devices.kind(device)
    if spec.lockstep != 1:  # as do sweeps that decode each utterance alone
        out["lockstep"] = spec.lockstep
    if spec.skip_utterances:  # and sweeps from the start of each split
        out["skip_utterances"] = spec.skip_utterances
    return out


def _claim(output: Path, fingerprint: dict, force: bool, sources: dict | None = None) -> None:
    """Own ``output`` for this spec: new, same spec (resume), ``force`` (start over), or a
    different spec's that decoded nothing yet (a spec that failed before its first record).
    ``sources`` (where the models and the corpus were read from) is kept beside the
    fingerprint in ``sweep.json``, for a confirmatory run to decode the same settings
    again (:mod:`simul.confirm`); it does not make the sweep another one."""
    path = output / "sweep.json"
    if path.is_file():
        data = json.loads(path.read_text())
        old = data.get("fingerprint", {})
        if old == fingerprint:
            if sources and data.get("sources") != sources:  # e.g. written by an older simul
                _write_claim(path, fingerprint, sources)
            return
        decoded = any(p.is_file() and p.stat().st_size
                      for p in (output / "journal").rglob("*.jsonl"))
        if decoded and not force:
            changed = sorted(k for k in set(old) | set(fingerprint)
                             if old.get(k) != fingerprint.get(k))
            raise SweepError(
                f"{output}: holds a different sweep (changed: {', '.join(changed)}); use "
                "another output directory, or --force (force=True) to discard its results")
        for name in ("journal", "records", "summary.csv", "sweep.json"):
            target = output / name
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
    output.mkdir(parents=True, exist_ok=True)
    _write_claim(path, fingerprint, sources)


def _write_claim(path: Path, fingerprint: dict, sources: dict | None) -> None:
    tmp = path.with_name(".sweep.json.tmp")
    tmp.write_text(json.dumps({"fingerprint": fingerprint, **({"sources": sources}
                                                              if sources else {})},
                              indent=1) + "\n")
    tmp.replace(path)


# --------------------------------------------------------------------------- provenance
def _sha256(paths: Iterable[Path]) -> str:
    """One checksum of several files (each by its SHA-256, in order): a corpus' split, as a
    model's (:func:`simul.models.registry.files_checksum`, the one definition)."""
    from simul.models.registry import files_checksum

    return files_checksum(paths)


def corpus_checksum(root: Path, pair: str, split: str) -> str:
    """The split's checksum: for a simul-built corpus, of its files' checksums in the
    manifest, so that a split spoken later (train, for training) leaves the others' sweeps
    and stored records as they were (a manifest from before splits were spoken one by one,
    without ``splits``: the manifest's own checksum, as sweeps were keyed then); else of
    the split's text files."""
    for candidate in (Path(root), Path(root).parent):
        path = candidate / corpus_manifest.NAME
        if not path.is_file():
            continue
        found = json.loads(path.read_text())
        if "splits" not in found:
            return corpus_manifest.sha256(path)
        prefix = find_split_dir(root, pair, split).resolve().relative_to(
            candidate.resolve()).as_posix() + "/"
        sums = [f"{rel} {entry['sha256']}" for rel, entry in sorted(found["files"].items())
                if rel.startswith(prefix)]
        return "split:" + hashlib.sha256("\n".join(sums).encode()).hexdigest()
    txt = find_split_dir(root, pair, split) / "txt"
    return _sha256(sorted(p for p in txt.iterdir() if p.is_file()))


def git_commit() -> str | None:
    """The commit simul runs from (``-dirty`` with uncommitted changes); None outside git."""
    repo = Path(__file__).resolve().parents[2]  # simul/sweep/journal.py → the checkout
    if not (repo / ".git").exists():
        return None
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], text=True,
                              capture_output=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--", "simul"],
                               text=True, capture_output=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("-dirty" if dirty else "")


def machine() -> str:
    """The host, its CPU count, torch's version and threads (the summary's ``machine``)."""
    import torch

    return (f"{platform.node()} {platform.machine()} {os.cpu_count()} cpu "
            f"torch {torch.__version__} threads {torch.get_num_threads()}")
