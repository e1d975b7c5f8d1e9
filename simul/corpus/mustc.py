"""Reader for MuST-C corpora (v1 and v2 layouts, any language pair) and our mini corpus.

Layout, for a pair such as ``en-de`` and a split such as ``dev``::

    <pair_dir>/data/<split>/wav/<talk>.wav          one wav per talk, 16 kHz mono
    <pair_dir>/data/<split>/txt/<split>.yaml        one entry per segment
    <pair_dir>/data/<split>/txt/<split>.<src>       one source line per segment
    <pair_dir>/data/<split>/txt/<split>.<tgt>       one target line per segment
    <pair_dir>/data/<split>/txt/<split>.align.jsonl optional (mini corpus only)
    <pair_dir>/data/<split>/txt/<split>.links       optional (mini corpus, en-de only)

A yaml entry looks like
``- {duration: 3.5, offset: 16.31, rW: 9, uW: 0, speaker_id: spk.1, wav: ted_1.wav}``
with ``offset`` and ``duration`` in seconds. Line ``i`` of the optional alignment file is
``{"words": [[text, start_ms, end_ms], ...], "phonemes": [[text, start_ms, end_ms], ...]}``
with times in milliseconds relative to the segment start. Line ``i`` of the optional links
file is the gold word alignment of segment ``i`` in Pharaoh format, ``"0-0 1-1 2-4 ..."``:
pairs ``source-target`` of 0-based word indices into the whitespace-split source and target
lines (target word ``j`` translates source word ``i``).

:func:`load` validates the whole split before it returns, so bad input never causes a
partial result; every bad-input error is a :class:`CorpusError` naming the file and the
field or (1-based) line.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf
import soxr
import yaml

__all__ = [
    "SAMPLE_RATE",
    "Alignment",
    "CorpusError",
    "Segment",
    "Word",
    "find_split_dir",
    "load",
    "load_list",
    "read_texts",
]

SAMPLE_RATE = 16000
"""Sample rate (Hz) of the audio served by :func:`load`."""

BOUNDS_TOLERANCE_MS = 1.0
"""How far (ms) a segment may run past the end of its wav before it is refused."""

_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SOUNDFILE_ERRORS = (sf.SoundFileError, RuntimeError, OSError)
_ENTRY_START = re.compile(r"-(\s|$)")
# Fast path for MuST-C's one-line flow entries ``- {key: value, ...}``. Only plain scalars
# whose YAML 1.1 type is unambiguous are accepted: decimal ints/floats without exponent,
# leading zeros or underscores, and words starting with a letter that are not YAML
# booleans or nulls. Any other line sends the whole file through PyYAML instead.
_INT = r"-?(?:0|[1-9][0-9]*)"
_FLOAT = _INT + r"\.[0-9]+"
_WORD = r"[A-Za-z_][A-Za-z0-9_.\-]*"
_FLOW_PAIR = rf"[A-Za-z_][A-Za-z0-9_]*: (?:{_FLOAT}|{_INT}|{_WORD})"
_FLOW_LINE = re.compile(rf"- \{{({_FLOW_PAIR}(?:, {_FLOW_PAIR})*)\}}[ \t\r]*", re.ASCII)
_INT_RE = re.compile(_INT, re.ASCII)
_FLOAT_RE = re.compile(_FLOAT, re.ASCII)
_YAML_SPECIAL_WORDS = frozenset(
    w
    for base in ("yes", "no", "true", "false", "on", "off", "null")
    for w in (base, base.capitalize(), base.upper())
)
_MAX_TRIED_LISTED = 20


class CorpusError(ValueError):
    """Bad corpus input; the message names the file and the field or 1-based line."""


@dataclass(frozen=True)
class Word:
    """A timed token (word or phoneme); times in ms relative to the segment start."""

    text: str
    start_ms: float
    end_ms: float


@dataclass(frozen=True)
class Alignment:
    """Word and phoneme timings of one segment (mini corpus only)."""

    words: tuple[Word, ...]
    phonemes: tuple[Word, ...]


@dataclass(frozen=True, eq=False)
class Segment:
    """One segment of a split.

    ``offset_ms`` and ``duration_ms`` locate the segment in ``wav`` (milliseconds).
    ``audio`` is float32 in [-1, 1], 16 kHz mono, the segment's samples only (None when
    loaded with ``with_audio=False``). Equality is identity, since ``audio`` is an array.
    """

    index: int
    id: str
    talk: str
    wav: Path
    offset_ms: float
    duration_ms: float
    speaker_id: str
    source: str
    target: str
    audio: np.ndarray | None
    alignment: Alignment | None
    links: tuple[tuple[int, int], ...] | None = None
    """Gold word alignment, ``(source word, target word)`` index pairs (None: not known)."""


@dataclass(frozen=True)
class _WavInfo:
    path: Path
    talk: str
    sample_rate: int
    frames: int


@dataclass(frozen=True)
class _Planned:
    """A validated segment, minus its audio; ``start``/``stop`` are native-rate frames."""

    segment: Segment
    where: str
    info: _WavInfo
    start: int
    stop: int


# --------------------------------------------------------------------------- locating


def _split_pair(pair: str) -> tuple[str, str]:
    """Return (source, target) language codes of a pair such as ``en-de``."""
    parts = pair.split("-")
    if len(parts) != 2 or not all(parts) or any("/" in p or "\\" in p for p in parts):
        raise CorpusError(f"language pair {pair!r}: expected '<src>-<tgt>', e.g. 'en-de'")
    return parts[0], parts[1]


def _subdirs(path: Path) -> list[Path]:
    """Visible subdirectories of ``path``, sorted; an unreadable directory has none."""
    try:
        children = sorted(path.iterdir())
    except OSError:
        return []
    return [c for c in children if not c.name.startswith(".") and c.is_dir()]


def _format_tried(tried: list[Path]) -> str:
    shown = "\n  ".join(str(p) for p in tried[:_MAX_TRIED_LISTED])
    more = len(tried) - _MAX_TRIED_LISTED
    return shown + (f"\n  ... and {more} more" if more > 0 else "")


def find_split_dir(root: str | Path, pair: str, split: str) -> Path:
    """Return ``<pair_dir>/data/<split>`` for a MuST-C style corpus below ``root``.

    ``root`` may be the pair directory itself (``.../en-de``) or a directory up to two
    levels above the one holding ``<pair>/`` (e.g. ``MUSTC_v1.0``, ``v2.0`` or their parent).
    The shallowest match wins; two matches at the same depth are refused as ambiguous.
    """
    _split_pair(pair)
    root = Path(root)
    if not root.is_dir():
        raise CorpusError(f"{root}: corpus root is not a directory")
    tried: list[Path] = []
    level = [root]
    for depth in range(3):
        candidates = [base / pair / "data" / split for base in level]
        if depth == 0:
            candidates.append(root / "data" / split)
        tried.extend(candidates)
        found = [c for c in candidates if c.is_dir()]
        if len(found) > 1:
            listing = ", ".join(str(f) for f in found)
            raise CorpusError(f"{root}: split {split!r} of {pair} is ambiguous: {listing}")
        if found:
            return found[0]
        level = [child for base in level for child in _subdirs(base)]
    data_dirs = sorted({c.parent for c in tried if c.parent.is_dir()})
    if data_dirs:  # the pair is there, the split is not: say which splits it has
        splits = sorted({d.name for base in data_dirs for d in _subdirs(base)})
        raise CorpusError(f"{data_dirs[0]}: no split {split!r}; the splits there: "
                          f"{', '.join(splits) or 'none'}")
    raise CorpusError(
        f"{root}: no split directory for pair {pair!r}, split {split!r}; tried:\n  "
        + _format_tried(tried)
    )


# --------------------------------------------------------------------------- text files


def _read_text(path: Path, what: str) -> str:
    """Read a UTF-8 text file, turning I/O and decoding failures into CorpusError."""
    try:
        data = path.read_bytes()
    except FileNotFoundError as e:
        raise CorpusError(f"{path}: {what} file not found") from e
    except OSError as e:
        raise CorpusError(f"{path}: cannot read {what} file: {e}") from e
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise CorpusError(f"{path}: line {line}: not valid UTF-8 ({e.reason})") from e


def _read_lines(path: Path, what: str) -> list[str]:
    """Lines of a text file without their "\\n" / "\\r\\n" ending; empty lines are kept."""
    lines = _read_text(path, what).split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


# --------------------------------------------------------------------------- yaml


def _entry_lines(text: str) -> list[int]:
    """1-based line numbers where top-level ``- `` list items start."""
    return [i for i, line in enumerate(text.split("\n"), 1) if _ENTRY_START.match(line)]


def _flow_scalar(value: str) -> int | float | str:
    """Type a fast-path scalar exactly as YAML 1.1 (PyYAML) would."""
    if _INT_RE.fullmatch(value):
        return int(value)
    if _FLOAT_RE.fullmatch(value):
        return float(value)
    return value


def _parse_flow_lines(text: str) -> list[dict[str, Any]] | None:
    """Parse a yaml made only of one-line flow entries; None when any line is not one.

    PyYAML's constructor is pure Python even with CSafeLoader: about a minute for a
    250k-entry MuST-C train yaml, against a few seconds here for the same result.
    """
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if not lines:
        return None
    entries = []
    for line in lines:
        match = _FLOW_LINE.fullmatch(line)
        if match is None:
            return None
        entry = {}
        for pair in match.group(1).split(", "):
            key, value = pair.split(": ")
            if key in _YAML_SPECIAL_WORDS or value in _YAML_SPECIAL_WORDS:
                return None
            entry[key] = _flow_scalar(value)
        entries.append(entry)
    return entries


def _parse_yaml(path: Path) -> tuple[list[Any], list[int] | None]:
    """Parse the split yaml; return its entries and, if known, their 1-based lines."""
    text = _read_text(path, "segment yaml")
    fast = _parse_flow_lines(text)
    if fast is not None:
        return fast, list(range(1, len(fast) + 1))
    try:
        entries = yaml.load(text, Loader=_YAML_LOADER)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e)
        raise CorpusError(f"{path}: {where}malformed YAML: {problem}") from e
    if not isinstance(entries, list):
        kind = "empty" if entries is None else type(entries).__name__
        raise CorpusError(f"{path}: expected a list of segment entries, got {kind}")
    lines = _entry_lines(text)
    return entries, lines if len(lines) == len(entries) else None


def _entry_where(path: Path, number: int, lines: list[int] | None) -> str:
    """``<yaml>: entry N (line L)`` for the 1-based entry ``number``."""
    line = f" (line {lines[number - 1]})" if lines is not None else ""
    return f"{path}: entry {number}{line}"


def _number(value: Any, where: str) -> float:
    """A finite float from a yaml/JSON number; booleans and strings are refused."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CorpusError(f"{where} must be a number, got {value!r}")
    result = float(value)
    if not math.isfinite(result):
        raise CorpusError(f"{where} must be finite, got {value!r}")
    return result


def _field(entry: dict[Any, Any], name: str, where: str) -> Any:
    if name not in entry:
        raise CorpusError(f"{where}: field {name!r} missing")
    return entry[name]


def _parse_entry(entry: Any, where: str) -> tuple[str, float, float, str]:
    """Validate a yaml entry; return (wav name, offset ms, duration ms, speaker id)."""
    if not isinstance(entry, dict):
        raise CorpusError(f"{where}: expected a mapping, got {type(entry).__name__}")
    offset_s = _number(_field(entry, "offset", where), f"{where}: field 'offset'")
    duration_s = _number(_field(entry, "duration", where), f"{where}: field 'duration'")
    wav = _field(entry, "wav", where)
    if offset_s < 0:
        raise CorpusError(f"{where}: field 'offset' must be >= 0, got {offset_s}")
    if duration_s <= 0:
        raise CorpusError(f"{where}: field 'duration' must be > 0, got {duration_s}")
    if not isinstance(wav, str) or not wav or "/" in wav or "\\" in wav or wav in (".", ".."):
        raise CorpusError(f"{where}: field 'wav' must be a bare file name, got {wav!r}")
    speaker = entry.get("speaker_id")
    speaker_id = "unknown" if speaker is None else str(speaker)
    return wav, offset_s * 1000.0, duration_s * 1000.0, speaker_id


# --------------------------------------------------------------------------- alignment


def _parse_timed(items: Any, key: str, where: str) -> tuple[Word, ...]:
    """Parse ``[[text, start_ms, end_ms], ...]`` into Words."""
    if not isinstance(items, list):
        raise CorpusError(f"{where}: {key!r} must be a list")
    words = []
    for j, item in enumerate(items, 1):
        item_where = f"{where}: {key}[{j}]"
        if not isinstance(item, list) or len(item) != 3 or not isinstance(item[0], str):
            raise CorpusError(f"{item_where} must be [text, start_ms, end_ms], got {item!r}")
        start = _number(item[1], f"{item_where} start_ms")
        end = _number(item[2], f"{item_where} end_ms")
        if end < start:
            raise CorpusError(f"{item_where}: end_ms {end} < start_ms {start}")
        words.append(Word(item[0], start, end))
    return tuple(words)


def _parse_alignment(line: str, where: str) -> Alignment:
    """Parse one alignment JSON line (times in ms relative to the segment start)."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise CorpusError(f"{where}: invalid JSON: {e.msg} (column {e.colno})") from e
    if not isinstance(obj, dict):
        raise CorpusError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    for key in ("words", "phonemes"):
        if key not in obj:
            raise CorpusError(f"{where}: field {key!r} missing")
    return Alignment(
        words=_parse_timed(obj["words"], "words", where),
        phonemes=_parse_timed(obj["phonemes"], "phonemes", where),
    )


def _parse_links(line: str, n_src: int, n_tgt: int, where: str) -> tuple[tuple[int, int], ...]:
    """Parse one Pharaoh line ``"i-j i-j ..."``; every index within its sentence."""
    links = []
    for item in line.split():
        i, sep, j = item.partition("-")
        if not sep or not i.isdigit() or not j.isdigit():
            raise CorpusError(f"{where}: {item!r} is not SOURCE-TARGET (two word indices)")
        if int(i) >= n_src or int(j) >= n_tgt:
            raise CorpusError(f"{where}: {item!r} points past the {n_src} source or "
                              f"{n_tgt} target words")
        links.append((int(i), int(j)))
    return tuple(links)


# --------------------------------------------------------------------------- audio


def _wav_info(wav_dir: Path, name: str, where: str, cache: dict[str, _WavInfo]) -> _WavInfo:
    """``soundfile.info`` of a mono wav, cached by name; ``where`` names the entry."""
    if name in cache:
        return cache[name]
    path = wav_dir / name
    if not path.is_file():
        raise CorpusError(f"{where}: wav file not found: {path}")
    try:
        info = sf.info(str(path))
    except _SOUNDFILE_ERRORS as e:
        raise CorpusError(f"{where}: cannot read audio file {path}: {e}") from e
    if info.channels != 1:
        raise CorpusError(
            f"{where}: {path} has {info.channels} channels; only mono audio is supported"
        )
    if info.frames <= 0 or info.samplerate <= 0:
        raise CorpusError(f"{where}: {path} contains no audio samples")
    cache[name] = _WavInfo(path, path.stem, int(info.samplerate), int(info.frames))
    return cache[name]


def _frame_range(info: _WavInfo, offset_ms: float, duration_ms: float, where: str) -> range:
    """Native-rate frame range of a segment, checked against the wav's length."""
    wav_ms = info.frames * 1000.0 / info.sample_rate
    end_ms = offset_ms + duration_ms
    if end_ms > wav_ms + BOUNDS_TOLERANCE_MS:
        raise CorpusError(
            f"{where}: segment ends at {end_ms:.3f} ms (offset {offset_ms:.3f} ms + "
            f"duration {duration_ms:.3f} ms) but {info.path} lasts only {wav_ms:.3f} ms"
        )
    start = round(offset_ms * info.sample_rate / 1000.0)
    stop = min(round(end_ms * info.sample_rate / 1000.0), info.frames)
    if stop <= start:
        raise CorpusError(f"{where}: segment of {info.path} is empty (0 samples)")
    return range(start, stop)


def _read_audio(planned: _Planned) -> np.ndarray:
    """Read a segment's frames; resample to 16 kHz with soxr; clip to [-1, 1]."""
    path, where = planned.info.path, planned.where
    try:
        audio, rate = sf.read(str(path), start=planned.start, stop=planned.stop, dtype="float32")
    except _SOUNDFILE_ERRORS as e:
        raise CorpusError(f"{where}: cannot read audio from {path}: {e}") from e
    if audio.ndim != 1:
        raise CorpusError(f"{where}: {path} is not mono")
    if audio.size == 0:
        raise CorpusError(f"{where}: segment of {path} is empty (0 samples read)")
    if audio.size != planned.stop - planned.start:
        raise CorpusError(
            f"{where}: short read from {path}: got {audio.size} of "
            f"{planned.stop - planned.start} samples"
        )
    if rate != SAMPLE_RATE:
        audio = soxr.resample(audio, rate, SAMPLE_RATE).astype(np.float32, copy=False)
    return np.clip(audio, -1.0, 1.0, out=audio)


# --------------------------------------------------------------------------- validation


def _check_counts(yaml_path: Path, n_entries: int, texts: dict[Path, list[str]]) -> None:
    """Refuse text files whose line counts differ from the yaml entry count."""
    if all(len(lines) == n_entries for lines in texts.values()):
        return
    counts = " and ".join(f"{p} has {len(lines)} lines" for p, lines in texts.items())
    raise CorpusError(f"line count mismatch: {counts}, but {yaml_path} has {n_entries} entries")


def _plan(split_dir: Path, pair: str, split: str) -> list[_Planned]:
    """Validate the whole split (without reading audio) and return its segments."""
    src, tgt = _split_pair(pair)
    txt = split_dir / "txt"
    yaml_path = txt / f"{split}.yaml"
    entries, lines = _parse_yaml(yaml_path)
    src_path, tgt_path = txt / f"{split}.{src}", txt / f"{split}.{tgt}"
    texts = {src_path: _read_lines(src_path, "source text")}
    texts[tgt_path] = _read_lines(tgt_path, "target text")
    align_path = txt / f"{split}.align.jsonl"
    align_lines = _read_lines(align_path, "alignment") if align_path.exists() else None
    if align_lines is not None:
        texts[align_path] = align_lines
    links_path = txt / f"{split}.links"
    links_lines = _read_lines(links_path, "word links") if links_path.exists() else None
    if links_lines is not None:
        texts[links_path] = links_lines
    _check_counts(yaml_path, len(entries), texts)

    wav_dir = split_dir / "wav"
    cache: dict[str, _WavInfo] = {}
    per_talk: dict[str, int] = {}
    planned = []
    for index, entry in enumerate(entries):
        where = _entry_where(yaml_path, index + 1, lines)
        wav_name, offset_ms, duration_ms, speaker_id = _parse_entry(entry, where)
        info = _wav_info(wav_dir, wav_name, where, cache)
        frames = _frame_range(info, offset_ms, duration_ms, where)
        alignment = None
        if align_lines is not None:
            alignment = _parse_alignment(align_lines[index], f"{align_path}: line {index + 1}")
        links = None
        if links_lines is not None:
            links = _parse_links(links_lines[index], len(texts[src_path][index].split()),
                                 len(texts[tgt_path][index].split()),
                                 f"{links_path}: line {index + 1}")
        talk = info.talk
        k = per_talk.get(talk, 0)
        per_talk[talk] = k + 1
        segment = Segment(
            index=index,
            id=f"{talk}_{k}",
            talk=talk,
            wav=info.path,
            offset_ms=offset_ms,
            duration_ms=duration_ms,
            speaker_id=speaker_id,
            source=texts[src_path][index],
            target=texts[tgt_path][index],
            audio=None,
            alignment=alignment,
            links=links,
        )
        planned.append(_Planned(segment, where, info, frames.start, frames.stop))
    return planned


def _serve(planned: list[_Planned], with_audio: bool) -> Iterator[Segment]:
    for item in planned:
        if not with_audio:
            yield item.segment
            continue
        audio = _read_audio(item)
        yield replace(item.segment, audio=audio)


def load(
    root: str | Path,
    pair: str,
    split: str,
    *,
    with_audio: bool = True,
    limit: int | None = None,
) -> Iterator[Segment]:
    """Validate a split, then return an iterator over its segments in yaml order.

    Validation covers the whole split and happens here, before anything is yielded:
    the yaml (fields ``offset``/``duration`` in seconds, finite, offset >= 0, duration > 0,
    ``wav``), text and alignment line counts, alignment JSON, and every wav (exists,
    readable by ``soundfile.info``, mono, non-empty, each segment within it, 1 ms
    tolerance). Audio is read lazily, one segment at a time, as float32 in [-1, 1];
    wavs not at 16 kHz are resampled with ``soxr.resample(x, sr, 16000)`` (python-soxr,
    deterministic), applied to the segment's samples only. ``limit`` caps how many
    segments are yielded (validation still covers the whole split).
    """
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0 or None, got {limit}")
    split_dir = find_split_dir(root, pair, split)
    planned = _plan(split_dir, pair, split)
    if limit is not None:
        planned = planned[:limit]
    return _serve(planned, with_audio)


def read_texts(root: str | Path, pair: str, split: str) -> tuple[list[str], list[str]]:
    """The source and target lines of a split, as :func:`load` gives them, read from its
    two text files alone: no yaml, alignment or audio needed (a split of the mini corpus
    that has its text only, not spoken yet, has them)."""
    src, tgt = _split_pair(pair)
    txt = find_split_dir(root, pair, split) / "txt"
    sources = _read_lines(txt / f"{split}.{src}", "source text")
    targets = _read_lines(txt / f"{split}.{tgt}", "target text")
    if len(sources) != len(targets):
        raise CorpusError(f"line count mismatch: {txt / f'{split}.{src}'} has {len(sources)} "
                          f"lines, {txt / f'{split}.{tgt}'} has {len(targets)}")
    return sources, targets


def load_list(
    root: str | Path,
    pair: str,
    split: str,
    *,
    with_audio: bool = True,
    limit: int | None = None,
) -> list[Segment]:
    """:func:`load`, collected into a list."""
    return list(load(root, pair, split, with_audio=with_audio, limit=limit))
