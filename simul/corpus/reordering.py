"""Word reordering between source and target: how much a simultaneous translator must wait.

Two figures of a word alignment, a set of links ``(i, j)``: source word ``i`` (0-based
over ``source.split()``) and target word ``j`` (0-based over ``target.split()``) translate
each other.

**Crossing share** (:func:`crossing_share`): the share of links that cross at least one
other link of the same segment, where links ``(i, j)`` and ``(i', j')`` cross when
``(i - i') * (j - j') < 0`` (one is left of the other in the source and right of it in the
target; links sharing a source or a target word never cross). Over a corpus the share is
pooled: crossing links of all segments / links of all segments. 0 for a monotone alignment;
1 for a swap of two words.

**Mean wait** (:func:`mean_wait`): for each aligned target word ``j`` with aligned source
words ``S_j``, ``wait_j = max(0, max(S_j) + 1 - (j + 1) * n_src / n_tgt)``: the source words
beyond the diagonal (the ``(j + 1) * n_src / n_tgt`` source words a reader proceeding at the
segment's mean pace has heard when writing word ``j``) that must be heard before target word
``j`` can be written. Averaged over the aligned target words; over a corpus pooled as the
sum of all waits / the number of all aligned target words. Unaligned target words count in
neither. 0 for a monotone alignment of equal lengths.

Where a corpus has no gold links (``<split>.links``), :func:`corpus_links` fits eflomal
(Östling & Tiedemann 2016; the ``eflomal`` package, IBM1 + HMM + fertility, 3 samplers) on
the train split plus the split being described, in both directions, and keeps the
**intersection** of the forward and reverse links: eflomal 2.0.0's Python API returns the
two directions only and offers no grow-diag-final-and. eflomal takes no seed (its sampler
is seeded from ``/dev/urandom``), so two fits of the same corpus differ slightly; the fitted
links are cached under ``~/.cache/simul/alignments`` (``SIMUL_ALIGNMENTS`` moves it; ``off``
turns it off), keyed by the pair, the splits, the corpus' manifest checksum (or its texts'
checksum for a corpus without manifest) and the aligner's settings, so the same corpus gives
the same figures from then on.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

Links = Sequence[tuple[int, int]]
LinkTuple = tuple[tuple[int, int], ...]

ENV = "SIMUL_ALIGNMENTS"
OFF = ("0", "off", "none", "no", "false")
DEFAULT_CACHE = Path("~/.cache/simul/alignments")
FIT_SPLIT = "train"
EFLOMAL_SETTINGS = {"model": 3, "n_samplers": 3, "null_prior": 0.2, "symmetrisation":
                    "intersection", "cache_version": 1}
GOLD = "gold (grammar)"


# --------------------------------------------------------------------------- the figures
def _array(links: Iterable[tuple[int, int]]) -> np.ndarray:
    """Distinct links as an (n, 2) int array."""
    return np.array(sorted(set(links)), dtype=np.int64).reshape(-1, 2)


def crossing_links(links: Iterable[tuple[int, int]]) -> tuple[int, int]:
    """(links crossing at least one other link, all links) of one segment; duplicate links
    count once."""
    a = _array(links)
    if len(a) < 2:
        return 0, len(a)
    di = a[:, 0, None] - a[None, :, 0]
    dj = a[:, 1, None] - a[None, :, 1]
    return int(((di * dj) < 0).any(axis=1).sum()), len(a)


def crossing_share(links: Iterable[tuple[int, int]]) -> float:
    """Share of links ``(i, j)`` that cross at least one other link ``(i', j')``, i.e.
    ``(i - i') * (j - j') < 0``; 0.0 without links. See the module's docstring."""
    crossing, total = crossing_links(links)
    return crossing / total if total else 0.0


def waits(links: Iterable[tuple[int, int]], n_src: int, n_tgt: int) -> tuple[float, int]:
    """(sum of ``wait_j`` over the aligned target words, number of aligned target words),
    ``wait_j = max(0, max(S_j) + 1 - (j + 1) * n_src / n_tgt)``."""
    last: dict[int, int] = {}
    for i, j in links:
        if not (0 <= i < n_src and 0 <= j < n_tgt):
            raise ValueError(f"link {i}-{j} outside {n_src} source / {n_tgt} target words")
        last[j] = max(last.get(j, -1), i)
    total = sum(max(0.0, i + 1 - (j + 1) * n_src / n_tgt) for j, i in last.items())
    return total, len(last)


def mean_wait(links: Iterable[tuple[int, int]], n_src: int, n_tgt: int) -> float:
    """Mean over the aligned target words ``j`` of ``max(0, max(S_j) + 1 - (j + 1) *
    n_src / n_tgt)``: source words beyond the diagonal to hear before writing word ``j``
    (``S_j``: the source words linked to ``j``); 0.0 without links. See the module's
    docstring."""
    total, aligned = waits(links, n_src, n_tgt)
    return total / aligned if aligned else 0.0


@dataclass(frozen=True)
class Figures:
    """Pooled figures of a corpus split."""

    segments: int
    links: int
    crossing: int
    aligned_target_words: int
    wait_sum: float

    @property
    def crossing_share(self) -> float:
        return self.crossing / self.links if self.links else 0.0

    @property
    def mean_wait(self) -> float:
        return self.wait_sum / self.aligned_target_words if self.aligned_target_words else 0.0


def pooled(links: Sequence[Links], sources: Sequence[str], targets: Sequence[str]) -> Figures:
    """:class:`Figures` of segments given their links and texts (pooled over segments)."""
    n_links = n_cross = n_aligned = 0
    wait_sum = 0.0
    for seg_links, source, target in zip(links, sources, targets, strict=True):
        crossing, total = crossing_links(seg_links)
        w, aligned = waits(seg_links, len(source.split()), len(target.split()))
        n_cross, n_links = n_cross + crossing, n_links + total
        wait_sum, n_aligned = wait_sum + w, n_aligned + aligned
    return Figures(len(links), n_links, n_cross, n_aligned, wait_sum)


# --------------------------------------------------------------------------- Pharaoh
def parse_pharaoh(line: str) -> LinkTuple:
    """``"0-0 1-2"`` → ``((0, 0), (1, 2))``."""
    return tuple((int(i), int(j)) for i, _, j in (p.partition("-") for p in line.split()))


def pharaoh(links: Links) -> str:
    """Links as a Pharaoh line, ``"i-j ..."``, sorted by target then source word."""
    return " ".join(f"{i}-{j}" for i, j in sorted(set(links), key=lambda p: (p[1], p[0])))


def readable(links: Links, source: str, target: str) -> str:
    """Links as ``source→target`` word pairs in target order, e.g. ``met→habe I→Ich``."""
    src, tgt = source.split(), target.split()
    return " ".join(f"{src[i]}→{tgt[j]}"
                    for i, j in sorted(set(links), key=lambda p: (p[1], p[0])))


# --------------------------------------------------------------------------- eflomal
def fit_eflomal(sources: Sequence[str], targets: Sequence[str]) -> list[LinkTuple]:
    """Fit eflomal on the sentence pairs, both directions; return per pair the intersection
    of the forward and reverse links (indices over ``str.split()``; eflomal lower-cases)."""
    import eflomal

    if len(sources) != len(targets):
        raise ValueError(f"{len(sources)} source but {len(targets)} target sentences")
    if not sources:
        return []
    # eflomal needs at least one token per line; blank lines get a placeholder, no links
    blank = [not s.split() or not t.split() for s, t in zip(sources, targets, strict=True)]
    src = [" ".join(s.split()) or "<empty>" for s in sources]
    tgt = [" ".join(t.split()) or "<empty>" for t in targets]
    settings = {k: EFLOMAL_SETTINGS[k] for k in ("model", "n_samplers", "null_prior")}
    with tempfile.TemporaryDirectory(prefix="simul-eflomal-") as tmp:
        fwd, rev = Path(tmp) / "fwd", Path(tmp) / "rev"
        eflomal.Aligner(**settings).align(src, tgt, links_filename_fwd=str(fwd),
                                          links_filename_rev=str(rev), quiet=True)
        fwd_lines = fwd.read_text().split("\n")[: len(src)]
        rev_lines = rev.read_text().split("\n")[: len(src)]
    if len(fwd_lines) != len(src) or len(rev_lines) != len(src):
        raise RuntimeError(f"eflomal wrote {len(fwd_lines)}/{len(rev_lines)} link lines for "
                           f"{len(src)} sentence pairs")
    out = []
    for empty, f, r in zip(blank, fwd_lines, rev_lines, strict=True):
        both = set(parse_pharaoh(f)) & set(parse_pharaoh(r))
        out.append(() if empty else tuple(sorted(both, key=lambda p: (p[1], p[0]))))
    return out


# --------------------------------------------------------------------------- the cache
def cache_dir() -> Path | None:
    """``SIMUL_ALIGNMENTS`` or ``~/.cache/simul/alignments``; None when turned off."""
    value = os.environ.get(ENV, "").strip()
    if value.lower() in OFF:
        return None
    return Path(value or DEFAULT_CACHE).expanduser()


def _corpus_checksum(root: Path, text_files: Sequence[Path]) -> str:
    """A checksum of the texts the aligner reads: for a simul-built corpus the SHA-256 of
    their checksums in its manifest.json (so that adding another pair keeps the key; the
    whole manifest's where it does not list them), else of the texts themselves."""
    from simul.corpus import manifest

    for candidate in (root, root.parent):
        path = candidate / manifest.NAME
        if not path.is_file():
            continue
        try:
            files = json.loads(path.read_text())["files"]
            listed = [(p.resolve().relative_to(candidate.resolve()).as_posix())
                      for p in text_files]
            sums = [f"{rel} {files[rel]['sha256']}" for rel in listed]
        except (ValueError, KeyError, TypeError):
            return "manifest:" + manifest.sha256(path)
        return "manifest-texts:" + hashlib.sha256("\n".join(sums).encode()).hexdigest()
    h = hashlib.sha256()
    for path in text_files:
        h.update(path.name.encode() + b"\0" + manifest.sha256(path).encode())
    return "texts:" + h.hexdigest()


def _eflomal_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("eflomal")
    except PackageNotFoundError:
        return "unknown"


# --------------------------------------------------------------------------- a corpus split
@dataclass(frozen=True)
class SplitLinks:
    """The links of every segment of a split and where they come from."""

    pair: str
    split: str
    sources: list[str]
    targets: list[str]
    links: list[LinkTuple]
    alignment: str  # "gold (grammar)" or "eflomal (fitted on train+dev)"
    cached: bool = False

    def figures(self) -> Figures:
        return pooled(self.links, self.sources, self.targets)


def corpus_links(root: str | Path, pair: str, split: str = "dev", *,
                 segments=None) -> SplitLinks:
    """The word links of ``split``: gold where the corpus has them, else fitted by eflomal
    on ``train`` + ``split`` (read from / written to the cache). ``segments``: the split's
    segments when already loaded."""
    from simul.corpus import find_split_dir, load_list
    from simul.corpus.mustc import read_texts

    root = Path(root)
    if segments is None:
        segments = load_list(root, pair, split, with_audio=False)
    sources = [s.source for s in segments]
    targets = [s.target for s in segments]
    if segments and all(s.links is not None for s in segments):
        return SplitLinks(pair, split, sources, targets, [tuple(s.links) for s in segments],
                          GOLD)

    fit_splits = [split]
    if split != FIT_SPLIT:
        try:
            find_split_dir(root, pair, FIT_SPLIT)
            fit_splits = [FIT_SPLIT, split]
        except ValueError:
            pass
    label = f"eflomal (fitted on {'+'.join(fit_splits)})"
    src_lang, tgt_lang = pair.split("-")
    text_files = [find_split_dir(root, pair, s) / "txt" / f"{s}.{lang}"
                  for s in fit_splits for lang in (src_lang, tgt_lang)]
    fields = {"pair": pair, "split": split, "fit": fit_splits,
              "corpus": _corpus_checksum(root, text_files), "eflomal": _eflomal_version(),
              **EFLOMAL_SETTINGS}
    key = hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()
    where = cache_dir()
    path = None if where is None else where / f"{pair}.{split}.{key[:24]}.json"
    if path is not None and path.is_file():
        try:
            data = json.loads(path.read_text())
            links = [parse_pharaoh(line) for line in data["links"]]
            if data.get("fields") == fields and len(links) == len(segments):
                return SplitLinks(pair, split, sources, targets, links, label, cached=True)
        except (OSError, ValueError, KeyError, TypeError):
            pass  # torn or foreign: fit again

    fit_src, fit_tgt = [], []
    for s in fit_splits[:-1]:  # text only: a mini corpus has train's before it speaks it
        more_src, more_tgt = read_texts(root, pair, s)
        fit_src += more_src
        fit_tgt += more_tgt
    fitted = fit_eflomal(fit_src + sources, fit_tgt + targets)[len(fit_src):]
    if path is not None:
        _write_cache(path, {"fields": fields, "links": [pharaoh(x) for x in fitted]})
    return SplitLinks(pair, split, sources, targets, fitted, label)


def _write_cache(path: Path, data: dict) -> None:
    """Write ``data`` as JSON through a temporary file, so a reader never sees half of it;
    a cache that cannot be written only costs time."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except OSError:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
