"""espeak-ng synthesis with word times, and apertium translation with line identity."""

import shutil

import pytest

from simul.corpus.mini import speech, translate
from tests.audio_checks import speech_end_ms

needs_espeak = pytest.mark.skipif(
    __import__("ctypes.util").util.find_library("espeak-ng") is None, reason="no libespeak-ng"
)
needs_apertium = pytest.mark.skipif(shutil.which("apertium") is None, reason="no apertium")


@pytest.mark.parametrize(
    ("n_spans", "counts", "expected_sizes"),
    [
        (6, [3, 3], [3, 3]),  # "did not" spoken as one word: 3 + 3 phonemes
        (5, [2, 3], [2, 3]),
        (4, [3, 3], [2, 2]),  # counts disagree: proportional split
        (7, [1, 1, 1], [2, 3, 2]),  # rounded cumulative bounds 2.33→2, 4.67→5, 7
        (2, [1, 3], [1, 1]),
    ],
)
def test_split_phonemes_among_merged_words(n_spans, counts, expected_sizes):
    spans = [(f"p{i}", 10.0 * i, 10.0 * (i + 1)) for i in range(n_spans)]
    parts = speech._split(spans, counts)
    assert [len(p) for p in parts] == expected_sizes
    assert [s for p in parts for s in p] == spans


def test_tokens_positions_are_one_based():
    assert speech._tokens("The cat, it ran.") == [(1, "The"), (5, "cat"), (10, "it"), (13, "ran")]


@needs_espeak
def test_synthesis_word_times_cover_speech():
    e = speech.Espeak()
    text = "Because it rained, the old teacher did not see the red car."
    utt = e.synthesize(text, speech.Voice("en-us", "m3", 160, 50))
    assert [w for w, _, _ in utt.words] == [t.strip(",.") for t in text.split()]
    starts = [s for _, s, _ in utt.words]
    ends = [t for _, _, t in utt.words]
    assert all(s < t for s, t in zip(starts, ends, strict=True))
    assert all(t <= s2 for t, s2 in zip(ends, starts[1:], strict=False))  # no overlap
    assert abs(ends[-1] - speech_end_ms(utt.audio)) <= 100
    assert utt.phonemes[0][1] == pytest.approx(utt.words[0][1])


@needs_espeak
def test_unknown_voice_is_refused():
    with pytest.raises(speech.EspeakError, match="no voice"):
        speech.Espeak().synthesize("Hello.", speech.Voice("xx-nowhere", "", 170, 50))


@needs_apertium
def test_translation_keeps_line_identity_and_matches_single_calls():
    sentences = [
        "The old teacher did not see the red car.",
        "Did you know that she was running?",
        "Because it rained, the children stayed at home.",
        "The dog sleeps.",
    ]
    batch = translate.translate(sentences, ("es", "pt"))
    assert batch["es"][0] == "El profesor viejo no vio el coche rojo."
    assert batch["pt"][0] == "O professor velho não viu o carro vermelho."
    for i, s in enumerate(sentences):  # each line equals the translation of that line alone
        alone = translate.translate([s], ("es", "pt"))
        assert batch["es"][i] == alone["es"][0]
        assert batch["pt"][i] == alone["pt"][0]


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("  Sabes que  corría?", "Sabes que corría?"),
        ("El *gato #comió .", "El gato comió."),
        ("Porque llovió , los niños", "Porque llovió, los niños"),
    ],
)
def test_clean(raw, clean):
    assert translate.clean(raw) == clean
