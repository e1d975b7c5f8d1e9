"""Output units and the words they make: simul's one home for word boundaries.

A model writes *units*: characters, SentencePiece pieces or ``@@``-style BPE pieces. Latency
is measured per output *word* (SimulEval's default unit), and wait-k over words (Papi et al.
2022) counts target words while units are being written. Both read word boundaries here.

Unit types (``unit_type``; a record keeps its own in ``Record.unit_type``):

- ``"char"`` (ESPnet character units): ``"<space>"`` (or ``" "``) separates words and
  belongs to none;
- ``"bpe"`` (SentencePiece): ``"▁"`` starts a word;
- ``"bpe@@"`` (subword-nmt): ``"@@"`` ends a unit that continues the word.

Word delays. A word's delay is charged when the word is known to be complete (Nguyen et al.
2021: "we wait until a complete word is merged, before committing the corresponding delay"):
for characters at the following space unit, for SentencePiece at the next unit that starts
a word, for ``@@`` BPE at the unit without ``@@`` (the last unit of the word). A word still
open at the end of the output (EOS, or decoding stopped) is charged ``end_delay``, the source
read (ms) when the output ended (:func:`word_delays`).

While writing (:func:`begins_word`, :func:`count_words`): a unit begins a word when it is
the first unit, or starts a word itself (SentencePiece ``"▁…"``), or follows a separator
(characters) or a unit without ``@@``; a separator begins nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, NamedTuple

UnitType = Literal["char", "bpe", "bpe@@"]
UNIT_TYPES = ("char", "bpe", "bpe@@")

CHAR_SPACE = "<space>"
SPM_SPACE = "\u2581"  # ▁
BPE_CONTINUATION = "@@"

_SEPARATORS = (CHAR_SPACE, " ")
_BOUNDARY = None  # a word boundary, inside the pieces of one unit


def espnet_unit_type(token_type: str) -> UnitType:
    """The unit type of an ESPnet ``token_type``: ``"char"`` for characters, else ``"bpe"``
    (SentencePiece; ESPnet's other token types carry no boundary marker of their own)."""
    return "char" if token_type == "char" else "bpe"


def guess_unit_type(units: Sequence[str]) -> UnitType:
    """``"bpe"`` when a unit carries SentencePiece's ``▁``, else ``"char"``: the unit type of
    a record that does not name its own (written before ``Record.unit_type`` existed)."""
    return "bpe" if any(SPM_SPACE in u for u in units) else "char"


def _pieces(unit: str, unit_type: str) -> list[str | None]:
    """Text and word boundaries (None) that one unit contributes, in order."""
    if unit_type == "char":
        return [_BOUNDARY] if unit in _SEPARATORS else [unit]
    if unit_type == "bpe":
        pieces: list[str | None] = []
        for k, text in enumerate(unit.split(SPM_SPACE)):
            if k > 0:
                pieces.append(_BOUNDARY)  # a "▁": the word before it is complete
            pieces.append(text)
        return pieces
    if unit_type == "bpe@@":
        if unit.endswith(BPE_CONTINUATION):
            return [unit[: -len(BPE_CONTINUATION)]]
        return [unit, _BOUNDARY]  # the last unit of its word
    raise ValueError(f"unknown unit_type {unit_type!r} ({', '.join(UNIT_TYPES)})")


class _Word(NamedTuple):
    text: str
    first: int  # index of the first unit that contributes text to the word
    last: int  # index of the last unit that contributes text to the word
    completed_at: int | None  # index of the unit that completes it; None: open at the end


def _words(units: Sequence[str], unit_type: str) -> list[_Word]:
    """The words of ``units`` in order; empty words (two separators in a row) are dropped."""
    words: list[_Word] = []
    current, first, last = "", -1, -1
    for j, unit in enumerate(units):
        for piece in _pieces(unit, unit_type):
            if piece is _BOUNDARY:
                if current:
                    words.append(_Word(current, first, last, j))
                current = ""
            elif piece:
                if not current:
                    first = j
                current += piece
                last = j
    if current:
        words.append(_Word(current, first, last, None))
    return words


def word_delays(units: Sequence[str], unit_delays: Sequence[float], unit_type: UnitType,
                end_delay: float) -> tuple[list[str], list[float]]:
    """Split ``units`` into words and charge each word when it is complete.

    Args:
        units: output units in the order written (no ``<sos/eos>``).
        unit_delays: ms of source read when each unit was written (non-decreasing).
        unit_type: ``"char"``, ``"bpe"`` (SentencePiece) or ``"bpe@@"``.
        end_delay: ms of source read when the output ended; charged to a word that is
            still open at the end (≥ the last unit's delay).

    Returns:
        ``(words, delays)`` of equal length; ``" ".join(words)`` is the detokenized output
        (empty words, e.g. from two spaces in a row, are dropped).
    """
    if len(units) != len(unit_delays):
        raise ValueError(f"{len(units)} units but {len(unit_delays)} unit_delays")
    for k in range(1, len(unit_delays)):
        if unit_delays[k] < unit_delays[k - 1]:
            raise ValueError(f"unit_delays decrease at unit {k}: "
                             f"{unit_delays[k]} < {unit_delays[k - 1]}")
    if unit_delays and end_delay < unit_delays[-1]:
        raise ValueError(f"end_delay {end_delay} is before the last unit's delay "
                         f"{unit_delays[-1]}")
    found = _words(units, unit_type)
    for word in found:
        if any(c.isspace() for c in word.text):
            raise ValueError(f"unit text contains white space: word {word.text!r}")
    return ([w.text for w in found],
            [end_delay if w.completed_at is None else unit_delays[w.completed_at]
             for w in found])


def complete_words(units: Sequence[str], unit_delays: Sequence[float], unit_type: UnitType
                   ) -> tuple[list[str], list[float]]:
    """While the output goes on: the words of ``units`` known to be complete so far, each
    charged as in :func:`word_delays`; a word still open at the end is left out (the next
    unit may continue it)."""
    if len(units) != len(unit_delays):
        raise ValueError(f"{len(units)} units but {len(unit_delays)} unit_delays")
    done = [w for w in _words(units, unit_type) if w.completed_at is not None]
    return [w.text for w in done], [unit_delays[w.completed_at] for w in done]


def words(units: Sequence[str], unit_type: UnitType) -> list[str]:
    """The words that ``units`` make (e.g. a source-language CTC transcript's)."""
    return [w.text for w in _words(units, unit_type)]


def text(units: Sequence[str], unit_type: UnitType | None = None) -> str:
    """Output units (pieces, as in ``Record.units``) → the detokenized text.

    ``unit_type`` None (or ""): guessed from the units (:func:`guess_unit_type`)."""
    found, _ = word_delays(list(units), [0.0] * len(units),
                           unit_type or guess_unit_type(units), 0.0)
    return " ".join(found)


def word_spans(units: Sequence[str], unit_type: UnitType | None = None) -> list[tuple[int, int]]:
    """(first, last) unit index of every output word, in order.

    ``unit_type`` None (or ""): guessed from the units (:func:`guess_unit_type`)."""
    return [(w.first, w.last) for w in _words(units, unit_type or guess_unit_type(units))]


# ---------------------------------------------------------------------- while writing
def is_separator(unit: str, unit_type: UnitType) -> bool:
    """A unit that only separates words and belongs to none (character ``<space>``)."""
    return unit_type == "char" and unit in _SEPARATORS


def begins_word(previous: Sequence[str], unit: str, unit_type: UnitType) -> bool:
    """Whether ``unit``, written after ``previous``, is the first unit of a new word.

    For SentencePiece, the unit that begins a word is also the first sign that the word
    before it is complete; for characters that sign is the separator before it."""
    if unit_type not in UNIT_TYPES:
        raise ValueError(f"unknown unit_type {unit_type!r} ({', '.join(UNIT_TYPES)})")
    if is_separator(unit, unit_type):
        return False
    if not previous:
        return True
    if unit_type == "bpe":
        return unit.startswith(SPM_SPACE)
    if unit_type == "char":
        return is_separator(previous[-1], unit_type)
    return not previous[-1].endswith(BPE_CONTINUATION)


def count_words(units: Sequence[str], unit_type: UnitType) -> int:
    """Words begun in ``units`` (complete or not)."""
    return sum(begins_word(units[i - 1:i], u, unit_type) for i, u in enumerate(units))


# ---------------------------------------------------------------------- greedy CTC
def ctc_collapse(frame_ids: Sequence[int], blank: int = 0) -> list[tuple[int, int]]:
    """Greedy CTC decoding of per-frame best ids: ``(unit id, frame)`` of every unit emitted,
    repeats merged and blanks removed, each unit at the first frame of its run (the frame
    whose encoder state first wrote it)."""
    out, previous = [], None
    for frame, unit in enumerate(frame_ids):
        if unit != previous and unit != blank:
            out.append((unit, frame))
        previous = unit
    return out


def ctc_word_frames(frame_ids: Sequence[int], token_list: Sequence[str], unit_type: UnitType,
                    blank: int = 0) -> list[int]:
    """The frame at which the greedy CTC transcript of ``frame_ids`` begins each of its
    words (:func:`ctc_collapse`, then :func:`word_spans`): the first frame whose unit gives
    the word text. The transcript of the first t frames has as many words as entries < t,
    since greedy CTC and word boundaries both read left to right: this is the adaptive word
    detection of Papi et al. 2022 §2.2 on a whole utterance."""
    emitted = ctc_collapse(frame_ids, blank)
    pieces = [token_list[unit] for unit, _ in emitted]
    return [emitted[first][1] for first, _ in word_spans(pieces, unit_type)]
