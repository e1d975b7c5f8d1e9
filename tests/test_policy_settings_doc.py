"""`simul policies NAME`: every setting of every built-in policy says what it is and in what
unit, and the command prints each note whole."""

import dataclasses
import re

import pytest

from simul.commands import cli
from simul.policies import _builtin, describe, setting_notes

BUILTIN = sorted(_builtin().items())

UNIT = re.compile(r"\bms\b|\bframes\b|\bsource words\b|\bunits\b|× (encoder frames|source "
                  r"units)|\bunitless\b|\ba count\b|\ba flag\b|\bone of\b|\ba layer index\b")
"""The units a note may name: ms, frames, source words, output units, a length cap's × frames
or units; or what a number without a unit is (unitless, a count, a layer index); a flag; or
the choices of a string (one of …)."""


@pytest.mark.parametrize(("name", "cls"), BUILTIN, ids=[name for name, _ in BUILTIN])
def test_every_setting_has_a_note_with_its_unit(name, cls):
    notes = setting_notes(cls)
    for field in dataclasses.fields(cls):
        note = notes.get(field.name, "")
        assert note, f"{name}: setting {field.name!r} has no description"
        assert UNIT.search(note), f"{name}: {field.name!r}: no unit in {note!r}"
        if field.type in (bool, "bool"):
            assert "a flag" in note, f"{name}: {field.name!r} is a flag: {note!r}"
        if field.type in (str, "str"):  # its choices, the default among them
            assert "one of" in note and f'"{field.default}"' in note, (name, field.name, note)


def test_inherited_settings_are_described():
    """AlignAtt and EDAtt declare their shared settings in a base class."""
    notes = setting_notes(_builtin()["edatt"])
    assert notes["chunk_ms"] == "audio read between decisions, ms"
    assert notes["alpha"].startswith("α, unitless")


def test_a_long_note_is_printed_whole(capsys):
    assert cli.main(["policies", "mma"]) == 0
    out = capsys.readouterr().out
    assert max(map(len, out.splitlines()[4:])) <= 100
    words = " ".join(out.split())
    assert ('trigger=\'\' one of "fixed" (every step_ms), "word" / "phoneme" (oracle ends) or '
            '"" (the model\'s own, as it was trained)') in words
    assert describe("offline").splitlines()[-1] == "  beam=1   beam size, a count (1: greedy)"
