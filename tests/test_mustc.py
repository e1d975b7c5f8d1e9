"""Tests for simul.corpus.mustc on tiny MuST-C style fixtures built in tmp_path."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import yaml

from simul.corpus import mustc
from simul.corpus.mustc import (
    SAMPLE_RATE,
    Alignment,
    CorpusError,
    Word,
    find_split_dir,
    load,
    load_list,
)

PAIR, SPLIT = "en-de", "dev"
TALKS = {"ted_1": (2.0, 440.0), "ted_2": (3.0, 660.0)}  # talk -> (seconds, tone Hz)
# (talk, offset s, duration s, speaker); the last segment ends exactly at the end of ted_2.
SEGMENTS = [
    ("ted_1", 0.0, 0.5, "spk.1"),
    ("ted_1", 0.75, 1.0, "spk.1"),
    ("ted_2", 0.5, 1.25, "spk.2"),
    ("ted_2", 1.8, 1.2, "spk.2"),
]
SOURCES = ["hello world", "this is a test", "", "the end"]
TARGETS = ["hallo welt", "das ist ein test", "leer", "das ende"]


def tone(seconds: float, freq: float, sr: int = SAMPLE_RATE) -> np.ndarray:
    """A 0.5-amplitude sine, float32."""
    t = np.arange(round(seconds * sr)) / sr
    return (0.5 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def yaml_line(talk: str, offset: float, duration: float, speaker: str | None) -> str:
    spk = f", speaker_id: {speaker}" if speaker is not None else ""
    return (
        f"- {{duration: {duration:.6f}, offset: {offset:.6f}, rW: 3, uW: 0{spk}, "
        f"wav: {talk}.wav}}\n"
    )


def make_corpus(
    pair_dir: Path,
    segments: list[tuple[str, float, float, str | None]] = SEGMENTS,
    sr: int = SAMPLE_RATE,
    align: bool = False,
) -> Path:
    """Write a MuST-C layout under pair_dir; return the split's txt directory."""
    wav_dir, txt = pair_dir / "data" / SPLIT / "wav", pair_dir / "data" / SPLIT / "txt"
    wav_dir.mkdir(parents=True)
    txt.mkdir()
    for talk, (seconds, freq) in TALKS.items():
        sf.write(wav_dir / f"{talk}.wav", tone(seconds, freq, sr), sr)
    (txt / f"{SPLIT}.yaml").write_text("".join(yaml_line(*s) for s in segments))
    n = len(segments)
    (txt / f"{SPLIT}.en").write_text("".join(f"{line}\n" for line in SOURCES[:n]))
    (txt / f"{SPLIT}.de").write_text("".join(f"{line}\r\n" for line in TARGETS[:n]))
    if align:
        lines = [alignment_json(i) for i in range(n)]
        (txt / f"{SPLIT}.align.jsonl").write_text("".join(f"{line}\n" for line in lines))
    return txt


def alignment_json(i: int) -> str:
    words = [["w", 10.0 * i, 10.0 * i + 50.0], ["x", 60.0, 120.5]]
    return json.dumps({"words": words, "phonemes": [["D", 0, 20], ["@", 20, 45.5]]})


@pytest.fixture
def pair_dir(tmp_path: Path) -> Path:
    make_corpus(tmp_path / PAIR)
    return tmp_path / PAIR


def txt_dir(pair_dir: Path) -> Path:
    return pair_dir / "data" / SPLIT / "txt"


def wav_path(pair_dir: Path, talk: str) -> Path:
    return pair_dir / "data" / SPLIT / "wav" / f"{talk}.wav"


def error_message(root: Path, pair: str = PAIR, split: str = SPLIT) -> str:
    with pytest.raises(CorpusError) as info:
        load(root, pair, split)
    return str(info.value)


# --------------------------------------------------------------------------- happy path


def test_happy_path(pair_dir: Path) -> None:
    segments = load_list(pair_dir, PAIR, SPLIT)
    assert len(segments) == len(SEGMENTS)
    assert [s.id for s in segments] == ["ted_1_0", "ted_1_1", "ted_2_0", "ted_2_1"]
    assert [s.index for s in segments] == [0, 1, 2, 3]
    assert [s.source for s in segments] == SOURCES
    assert [s.target for s in segments] == TARGETS
    for seg, (talk, offset, duration, speaker) in zip(segments, SEGMENTS, strict=True):
        assert seg.talk == talk
        assert seg.speaker_id == speaker
        assert seg.wav == wav_path(pair_dir, talk)
        assert seg.offset_ms == pytest.approx(offset * 1000)
        assert seg.duration_ms == pytest.approx(duration * 1000)
        assert seg.alignment is None
        assert seg.audio is not None and seg.audio.dtype == np.float32
        assert abs(seg.audio.size - duration * SAMPLE_RATE) <= 1
        full, _ = sf.read(seg.wav, dtype="float32")
        start = round(offset * SAMPLE_RATE)
        np.testing.assert_array_equal(seg.audio, full[start : start + seg.audio.size])


def test_ids_count_per_talk_in_yaml_order(tmp_path: Path) -> None:
    segments = [
        ("ted_2", 0.0, 0.5, "a"),
        ("ted_1", 0.0, 0.5, None),
        ("ted_2", 1.0, 0.5, "a"),
        ("ted_1", 1.0, 0.5, None),
    ]
    make_corpus(tmp_path / PAIR, segments)
    loaded = load_list(tmp_path, PAIR, SPLIT, with_audio=False)
    assert [s.id for s in loaded] == ["ted_2_0", "ted_1_0", "ted_2_1", "ted_1_1"]
    assert [s.speaker_id for s in loaded] == ["a", "unknown", "a", "unknown"]


@pytest.mark.parametrize(
    ("layout", "root_rel"),
    [
        (f"{PAIR}", f"{PAIR}"),  # the pair directory itself
        (f"{PAIR}", "."),  # parent of the pair directory (older releases)
        (f"MUSTC_v1.0/{PAIR}", "MUSTC_v1.0"),  # the release directory
        (f"MUSTC_v1.0/{PAIR}", "."),  # the directory holding the release
        (f"v2.0/{PAIR}", "."),  # v2 layout
        (f"downloads/MUSTC_v2.0/{PAIR}", "."),  # two levels above
    ],
)
def test_root_levels(tmp_path: Path, layout: str, root_rel: str) -> None:
    make_corpus(tmp_path / layout)
    root = tmp_path / root_rel
    assert find_split_dir(root, PAIR, SPLIT) == tmp_path / layout / "data" / SPLIT
    assert [s.id for s in load(root, PAIR, SPLIT, with_audio=False)][:1] == ["ted_1_0"]


def test_other_pair_is_not_picked(tmp_path: Path) -> None:
    make_corpus(tmp_path / "en-fr")
    with pytest.raises(CorpusError, match="no split directory"):
        find_split_dir(tmp_path, PAIR, SPLIT)


def test_ambiguous_root_refused(tmp_path: Path) -> None:
    make_corpus(tmp_path / "MUSTC_v1.0" / PAIR)
    make_corpus(tmp_path / "MUSTC_v2.0" / PAIR)
    with pytest.raises(CorpusError, match="ambiguous") as info:
        find_split_dir(tmp_path, PAIR, SPLIT)
    assert "MUSTC_v1.0" in str(info.value) and "MUSTC_v2.0" in str(info.value)


def test_without_audio(pair_dir: Path) -> None:
    with_audio = load_list(pair_dir, PAIR, SPLIT)
    without = load_list(pair_dir, PAIR, SPLIT, with_audio=False)
    assert all(s.audio is None for s in without)
    for a, b in zip(with_audio, without, strict=True):
        assert (a.id, a.offset_ms, a.duration_ms, a.source, a.target) == (
            b.id,
            b.offset_ms,
            b.duration_ms,
            b.source,
            b.target,
        )


@pytest.mark.parametrize(("limit", "expected"), [(0, 0), (1, 1), (3, 3), (10, 4), (None, 4)])
def test_limit(pair_dir: Path, limit: int | None, expected: int) -> None:
    assert len(load_list(pair_dir, PAIR, SPLIT, limit=limit)) == expected


def test_limit_still_validates_whole_split(pair_dir: Path) -> None:
    yaml_path = txt_dir(pair_dir) / f"{SPLIT}.yaml"
    lines = yaml_path.read_text().splitlines(keepends=True)
    lines[-1] = lines[-1].replace("offset: 1.800000, ", "")
    yaml_path.write_text("".join(lines))
    with pytest.raises(CorpusError, match=r"entry 4 \(line 4\): field 'offset' missing"):
        load(pair_dir, PAIR, SPLIT, limit=1)


def test_negative_limit_refused(pair_dir: Path) -> None:
    with pytest.raises(ValueError, match="limit"):
        load(pair_dir, PAIR, SPLIT, limit=-1)


def test_alignment_parsed(tmp_path: Path) -> None:
    make_corpus(tmp_path / PAIR, align=True)
    segments = load_list(tmp_path, PAIR, SPLIT, with_audio=False)
    assert segments[1].alignment == Alignment(
        words=(Word("w", 10.0, 60.0), Word("x", 60.0, 120.5)),
        phonemes=(Word("D", 0.0, 20.0), Word("@", 20.0, 45.5)),
    )
    assert all(s.alignment is not None for s in segments)


def test_resampled_from_8khz(tmp_path: Path) -> None:
    make_corpus(tmp_path / PAIR, sr=8000)
    segments = load_list(tmp_path, PAIR, SPLIT)
    for seg, (talk, _, duration, _) in zip(segments, SEGMENTS, strict=True):
        assert seg.audio is not None and seg.audio.dtype == np.float32
        assert abs(seg.audio.size - duration * SAMPLE_RATE) <= 1
        spectrum = np.abs(np.fft.rfft(seg.audio * np.hanning(seg.audio.size)))
        peak_hz = np.argmax(spectrum) * SAMPLE_RATE / seg.audio.size
        assert peak_hz == pytest.approx(TALKS[talk][1], abs=2.5)
        assert float(np.max(np.abs(seg.audio))) == pytest.approx(0.5, abs=0.05)


# --------------------------------------------------------------------------- errors


def write_lines(path: Path, lines: list[str]) -> None:
    path.write_text("".join(f"{line}\n" for line in lines))


def drop_last_line(path: Path) -> None:
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:-1]))


def set_yaml_line(pair_dir: Path, number: int, text: str) -> None:
    path = txt_dir(pair_dir) / f"{SPLIT}.yaml"
    lines = path.read_text().splitlines(keepends=True)
    lines[number - 1] = text + "\n"
    path.write_text("".join(lines))


def write_wav(pair_dir: Path, talk: str, data: np.ndarray, sr: int = SAMPLE_RATE) -> None:
    sf.write(wav_path(pair_dir, talk), data, sr)


def add_alignment(pair_dir: Path, lines: list[str]) -> None:
    write_lines(txt_dir(pair_dir) / f"{SPLIT}.align.jsonl", lines)


GOOD_ALIGN = [alignment_json(i) for i in range(4)]
Mutation = Callable[[Path], None]

ERROR_CASES: list[tuple[str, Mutation, list[str]]] = [
    (
        "missing wav",
        lambda d: wav_path(d, "ted_2").unlink(),
        ["dev.yaml: entry 3 (line 3)", "wav file not found", "ted_2.wav"],
    ),
    (
        "source line count",
        lambda d: drop_last_line(txt_dir(d) / f"{SPLIT}.en"),
        ["dev.en has 3 lines", "dev.de has 4 lines", "dev.yaml has 4 entries"],
    ),
    (
        "target line count",
        lambda d: write_lines(txt_dir(d) / f"{SPLIT}.de", TARGETS + ["extra"]),
        ["dev.en has 4 lines", "dev.de has 5 lines", "dev.yaml has 4 entries"],
    ),
    (
        "missing target file",
        lambda d: (txt_dir(d) / f"{SPLIT}.de").unlink(),
        ["dev.de", "not found"],
    ),
    (
        "segment beyond end of wav",
        lambda d: set_yaml_line(d, 4, yaml_line("ted_2", 2.5, 1.0, "s")),
        ["dev.yaml: entry 4 (line 4)", "ted_2.wav", "3500.000 ms", "3000.000 ms"],
    ),
    (
        "stereo wav",
        lambda d: write_wav(d, "ted_1", np.zeros((SAMPLE_RATE * 2, 2), np.float32)),
        ["dev.yaml: entry 1 (line 1)", "ted_1.wav", "2 channels", "mono"],
    ),
    (
        "zero-length wav",
        lambda d: write_wav(d, "ted_2", np.zeros(0, np.float32)),
        ["dev.yaml: entry 3 (line 3)", "ted_2.wav", "no audio samples"],
    ),
    (
        "empty segment",
        lambda d: set_yaml_line(d, 2, yaml_line("ted_1", 1.0, 0.00001, "s")),
        ["dev.yaml: entry 2 (line 2)", "ted_1.wav", "empty"],
    ),
    (
        "unreadable wav",
        lambda d: wav_path(d, "ted_1").write_bytes(np.random.default_rng(0).bytes(4096)),
        ["dev.yaml: entry 1 (line 1)", "cannot read audio", "ted_1.wav"],
    ),
    (
        "malformed yaml",
        lambda d: set_yaml_line(d, 3, "- {duration: 1.0, offset: [0.5, wav: ted_2.wav}"),
        ["dev.yaml", "line 3", "malformed YAML"],
    ),
    (
        "yaml not a list",
        lambda d: (txt_dir(d) / f"{SPLIT}.yaml").write_text("duration: 1.0\n"),
        ["dev.yaml", "expected a list", "dict"],
    ),
    (
        "yaml entry not a mapping",
        lambda d: set_yaml_line(d, 2, "- just a string"),
        ["dev.yaml: entry 2 (line 2)", "mapping"],
    ),
    (
        "missing offset",
        lambda d: set_yaml_line(d, 2, "- {duration: 1.0, wav: ted_1.wav}"),
        ["dev.yaml: entry 2 (line 2): field 'offset' missing"],
    ),
    (
        "missing wav field",
        lambda d: set_yaml_line(d, 1, "- {duration: 1.0, offset: 0.0}"),
        ["dev.yaml: entry 1 (line 1): field 'wav' missing"],
    ),
    (
        "non-numeric duration",
        lambda d: set_yaml_line(d, 2, "- {duration: long, offset: 0.0, wav: ted_1.wav}"),
        ["dev.yaml: entry 2 (line 2): field 'duration' must be a number", "'long'"],
    ),
    (
        "nan offset",
        lambda d: set_yaml_line(d, 2, "- {duration: 1.0, offset: .nan, wav: ted_1.wav}"),
        ["dev.yaml: entry 2 (line 2): field 'offset' must be finite"],
    ),
    (
        "negative offset",
        lambda d: set_yaml_line(d, 2, "- {duration: 1.0, offset: -0.5, wav: ted_1.wav}"),
        ["dev.yaml: entry 2 (line 2): field 'offset' must be >= 0"],
    ),
    (
        "zero duration",
        lambda d: set_yaml_line(d, 2, "- {duration: 0.0, offset: 0.5, wav: ted_1.wav}"),
        ["dev.yaml: entry 2 (line 2): field 'duration' must be > 0"],
    ),
    (
        "wav with directory",
        lambda d: set_yaml_line(d, 2, "- {duration: 1.0, offset: 0.5, wav: ../x.wav}"),
        ["dev.yaml: entry 2 (line 2): field 'wav' must be a bare file name"],
    ),
    (
        "bad alignment json",
        lambda d: add_alignment(d, [GOOD_ALIGN[0], '{"words": [', *GOOD_ALIGN[2:]]),
        ["dev.align.jsonl: line 2", "invalid JSON"],
    ),
    (
        "non-numeric alignment time",
        lambda d: add_alignment(
            d, [*GOOD_ALIGN[:2], '{"words": [["a", "x", 3]], "phonemes": []}', GOOD_ALIGN[3]]
        ),
        ["dev.align.jsonl: line 3", "words[1] start_ms must be a number"],
    ),
    (
        "boolean alignment time",
        lambda d: add_alignment(
            d, [*GOOD_ALIGN[:2], '{"words": [["a", 0, 3], ["b", 3, true]], "phonemes": []}',
                GOOD_ALIGN[3]]
        ),
        ["dev.align.jsonl: line 3", "words[2] end_ms must be a number, got True"],
    ),
    (
        "infinite alignment time",
        lambda d: add_alignment(
            d, [*GOOD_ALIGN[:2], '{"words": [], "phonemes": [["a", 0, Infinity]]}',
                GOOD_ALIGN[3]]
        ),
        ["dev.align.jsonl: line 3", "phonemes[1] end_ms must be finite"],
    ),
    (
        "alignment time going back",
        lambda d: add_alignment(
            d, [*GOOD_ALIGN[:2], '{"words": [["a", 5, 3]], "phonemes": []}', GOOD_ALIGN[3]]
        ),
        ["dev.align.jsonl: line 3", "words[1]: end_ms 3.0 < start_ms 5.0"],
    ),
    (
        "alignment entry of two fields",
        lambda d: add_alignment(
            d, [*GOOD_ALIGN[:2], '{"words": [["a", 5]], "phonemes": []}', GOOD_ALIGN[3]]
        ),
        ["dev.align.jsonl: line 3", "words[1] must be [text, start_ms, end_ms]"],
    ),
    (
        "alignment missing phonemes",
        lambda d: add_alignment(d, ['{"words": []}', *GOOD_ALIGN[1:]]),
        ["dev.align.jsonl: line 1", "field 'phonemes' missing"],
    ),
    (
        "alignment line count",
        lambda d: add_alignment(d, GOOD_ALIGN[:3]),
        ["dev.align.jsonl has 3 lines", "dev.yaml has 4 entries"],
    ),
]


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [pytest.param(m, e, id=name) for name, m, e in ERROR_CASES],
)
def test_bad_input_raises_before_yielding(
    pair_dir: Path, mutate: Mutation, expected: list[str]
) -> None:
    mutate(pair_dir)
    message = error_message(pair_dir)
    for part in expected:
        assert part in message
    assert str(pair_dir) in message  # full file paths are named


def test_split_dir_not_found(pair_dir: Path) -> None:
    # the pair is there, the split is not: the splits it has are named
    message = error_message(pair_dir.parent, split="tst-COMMON")
    assert message == (f"{pair_dir / 'data'}: no split 'tst-COMMON'; the splits there: "
                       f"{SPLIT}")
    # no such pair: the paths tried
    message = error_message(pair_dir.parent, pair="en-fr", split="tst-COMMON")
    assert "no split directory" in message
    assert str(pair_dir.parent / "en-fr" / "data" / "tst-COMMON") in message
    assert str(pair_dir.parent / "data" / "tst-COMMON") in message


@pytest.mark.parametrize("pair", ["ende", "en-de-fr", "-de", "en-"])
def test_bad_pair_refused(pair_dir: Path, pair: str) -> None:
    assert repr(pair) in error_message(pair_dir, pair=pair)


def test_missing_root_refused(tmp_path: Path) -> None:
    assert "not a directory" in error_message(tmp_path / "nowhere")


def test_block_style_yaml_lines(pair_dir: Path) -> None:
    blocks = [
        f"- duration: {d}\n  offset: {o}\n  speaker_id: {s}\n  wav: {t}.wav\n"
        for t, o, d, s in SEGMENTS
    ]
    blocks[2] = blocks[2].replace("  offset: 0.5\n", "")
    (txt_dir(pair_dir) / f"{SPLIT}.yaml").write_text("".join(blocks))
    assert "entry 3 (line 9): field 'offset' missing" in error_message(pair_dir)


def test_audio_failure_while_iterating_names_file_and_entry(pair_dir: Path) -> None:
    segments = load(pair_dir, PAIR, SPLIT)  # validated here
    wav_path(pair_dir, "ted_1").write_bytes(b"RIFF garbage")
    with pytest.raises(CorpusError) as info:
        next(segments)
    assert "dev.yaml: entry 1 (line 1)" in str(info.value)
    assert "ted_1.wav" in str(info.value)


MUSTC_LINE = (
    "- {duration: 3.500000, offset: 16.310000, rW: 9, uW: 0, speaker_id: spk.1, wav: ted_1.wav}"
)


@pytest.mark.parametrize(
    ("text", "fast"),
    [
        (MUSTC_LINE + "\n", True),
        (MUSTC_LINE + "\r\n" + MUSTC_LINE, True),
        ("- {offset: -0.5, duration: 0, wav: a-b.c_d.wav, speaker_id: nan}\n", True),
        ("- {speaker_id: yes, offset: 1.0}\n", False),  # YAML boolean
        ("- {speaker_id: Null, offset: 1.0}\n", False),  # YAML null
        ("- {true: 1, offset: 1.0}\n", False),  # boolean key
        ("- {offset: 016, duration: 1.0}\n", False),  # YAML 1.1 octal
        ("- {offset: 1e3, duration: 1.0}\n", False),  # a string in YAML 1.1
        ("- {offset: .5, duration: 1.0}\n", False),
        ("- {offset: 1_000.0, duration: 1.0}\n", False),
        ("- {offset: 1.0, wav: 'a b.wav'}\n", False),  # quoted
        ("- {offset: 1.0, wav: x.wav}  # comment\n", False),
        ("- {offset: 1.0}\n\n", False),  # blank line
        ("- offset: 1.0\n  wav: x.wav\n", False),  # block style
        ("", False),
    ],
)
def test_flow_fast_path_agrees_with_yaml(text: str, fast: bool) -> None:
    parsed = mustc._parse_flow_lines(text)
    assert (parsed is not None) == fast
    if parsed is not None:
        expected = yaml.safe_load(text)
        assert parsed == expected
        assert [type(v) for e in parsed for v in e.values()] == [
            type(v) for e in expected for v in e.values()
        ]


def test_yaml_fallback_loads_quoted_entries(pair_dir: Path) -> None:
    path = txt_dir(pair_dir) / f"{SPLIT}.yaml"
    path.write_text(path.read_text().replace("spk.1", "'spk 1'"))
    segments = load_list(pair_dir, PAIR, SPLIT, with_audio=False)
    assert [s.speaker_id for s in segments] == ["spk 1", "spk 1", "spk.2", "spk.2"]
    assert [s.offset_ms for s in segments] == pytest.approx([0.0, 750.0, 500.0, 1800.0])
