"""Word delays from unit-level output (characters, SentencePiece, ``@@`` BPE).

Latency is measured per output word (SimulEval's default unit). A model that writes
smaller units has a word's delay charged when the word is known to be complete (Nguyen et
al. 2021: "we wait until a complete word is merged, before committing the corresponding
delay"):

- ``"char"`` (ESPnet character units, ``"<space>"`` between words): at the following
  space unit, or at the end of the output;
- ``"bpe"`` (SentencePiece, ``"▁"`` starts a word): at the next unit that starts a word,
  or at the end of the output;
- ``"bpe@@"`` (subword-nmt, ``"@@"`` ends a unit that continues the word): at the unit
  without ``"@@"`` (the last unit of the word), or at the end of the output.

A word still open at the end of the output (EOS, or decoding stopped) is charged
``end_delay``, the source read (ms) when the output ended.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

UnitType = Literal["char", "bpe", "bpe@@"]

CHAR_SPACE = "<space>"
SPM_SPACE = "\u2581"  # ▁
BPE_CONTINUATION = "@@"

_BOUNDARY = None  # a word boundary, inside the pieces of one unit


def _pieces(unit: str, unit_type: str) -> list[str | None]:
    """Text and word boundaries (None) that one unit contributes, in order."""
    if unit_type == "char":
        return [_BOUNDARY] if unit in (CHAR_SPACE, " ") else [unit]
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
    raise ValueError(f"unknown unit_type {unit_type!r} (char, bpe or bpe@@)")


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
    words: list[str] = []
    delays: list[float] = []
    current = ""
    for unit, delay in zip(units, unit_delays, strict=True):
        for piece in _pieces(unit, unit_type):
            if piece is _BOUNDARY:
                if current:
                    words.append(current)
                    delays.append(delay)
                current = ""
            else:
                current += piece
    if current:
        words.append(current)
        delays.append(end_delay)
    for word in words:
        if any(c.isspace() for c in word):
            raise ValueError(f"unit text contains white space: word {word!r}")
    return words, delays


def unit_type(units: Sequence[str]) -> str:
    """``"bpe"`` when a unit carries SentencePiece's ``▁``, else ``"char"``."""
    return "bpe" if any(SPM_SPACE in u for u in units) else "char"


def text(units: Sequence[str]) -> str:
    """Output units (pieces, as in ``Record.units``) → the detokenized text."""
    words, _ = word_delays(list(units), [0.0] * len(units), unit_type(units), 0.0)
    return " ".join(words)


def word_spans(units: Sequence[str]) -> list[tuple[int, int]]:
    """(first, last) unit index of every output word, in order."""
    bpe = unit_type(units) == "bpe"
    spans: list[tuple[int, int]] = []
    start = None
    for j, unit in enumerate(units):
        boundary = unit.startswith(SPM_SPACE) if bpe else unit in (CHAR_SPACE, " ")
        if boundary and start is not None:
            spans.append((start, j - 1))
            start = None
        if start is None and unit not in (SPM_SPACE, CHAR_SPACE, " "):
            start = j
    if start is not None:
        spans.append((start, len(units) - 1))
    return spans
