"""Words from characters, SentencePiece and @@ BPE units, worked by hand: their delays,
text and spans, and the word boundaries policies see while units are written."""

import pytest

from simul.metrics import units as unit_words
from simul.metrics.units import complete_words, word_delays

S = "<space>"

# (id, units, unit delays, unit type, end delay, expected words, expected delays)
CASES = [
    # "ab cd": "ab" is complete at the space (300), "cd" only at the end (EOS read at 900)
    ("char_two_words", ["a", "b", S, "c", "d"], [100, 200, 300, 400, 500], "char", 900,
     ["ab", "cd"], [300, 900]),
    # one word spread over three steps; the trailing space completes it at 700, before EOS
    ("char_word_over_steps", ["h", "a", "u", "s", S], [100, 400, 400, 600, 700], "char",
     1000, ["haus"], [700]),
    # a leading space and a double space make no empty word
    ("char_extra_spaces", [S, "a", S, S, "b"], [0, 100, 200, 300, 400], "char", 500,
     ["a", "b"], [200, 500]),
    ("char_empty", [], [], "char", 800, [], []),
    # SentencePiece "▁Hal lo ▁Welt": "Hallo" is complete when "▁Welt" starts a word (500);
    # "Welt" at the end (EOS at 800)
    ("spm_split_word", ["\u2581Hal", "lo", "\u2581Welt"], [100, 300, 500], "bpe", 800,
     ["Hallo", "Welt"], [500, 800]),
    # a word of three pieces written at three steps, the next word's "▁" at 900 closes it;
    # a bare "▁" before "," starts the word ","
    ("spm_three_pieces", ["\u2581un", "glaub", "lich", "\u2581", ","],
     [200, 400, 600, 900, 900], "bpe", 1000, ["unglaublich", ","], [900, 1000]),
    ("spm_single_final_word", ["\u2581ja"], [250], "bpe", 250, ["ja"], [250]),
    ("spm_empty", [], [], "bpe", 0, [], []),
    # subword-nmt "Hal@@ lo Welt": "Hallo" is complete at "lo" (300), "Welt" at its own unit
    # (500), even though the output ends later (800)
    ("bpe@@_split_word", ["Hal@@", "lo", "Welt"], [100, 300, 500], "bpe@@", 800,
     ["Hallo", "Welt"], [300, 500]),
    # the output ends inside a word ("un@@ glaub@@" then EOS): charged at the end (1200)
    ("bpe@@_open_at_end", ["ein", "un@@", "glaub@@"], [100, 400, 600], "bpe@@", 1200,
     ["ein", "unglaub"], [100, 1200]),
    ("bpe@@_empty", [], [], "bpe@@", 100, [], []),
]


@pytest.mark.parametrize("units, unit_delays, unit_type, end_delay, words, delays",
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_word_delays(units, unit_delays, unit_type, end_delay, words, delays):
    got_words, got_delays = word_delays(units, unit_delays, unit_type, end_delay)
    assert got_words == words
    assert got_delays == delays
    assert len(got_words) == len(got_delays)


@pytest.mark.parametrize("units, unit_type, text", [
    (["d", "a", "s", S, "i", "s", "t", S], "char", "das ist"),
    (["\u2581das", "\u2581is", "t", "."], "bpe", "das ist."),
    (["das", "is@@", "t."], "bpe@@", "das ist."),
])
def test_words_are_the_detokenized_output(units, unit_type, text):
    words, delays = word_delays(units, list(range(len(units))), unit_type, len(units))
    assert " ".join(words) == text
    assert len(delays) == len(words)


@pytest.mark.parametrize("units, unit_delays, unit_type, end_delay, message", [
    (["a", "b"], [100], "char", 200, "2 units but 1 unit_delays"),
    (["a", "b"], [200, 100], "char", 300, "decrease at unit 1"),
    (["a"], [200], "char", 100, "end_delay"),
    (["a"], [200], "phones", 300, "unit_type"),
])
def test_refused(units, unit_delays, unit_type, end_delay, message):
    with pytest.raises(ValueError, match=message):
        word_delays(units, unit_delays, unit_type, end_delay)


# (id, units, unit type, expected words, expected (first, last) unit of each word)
SPANS = [
    ("char", ["h", "o", "l", "a", S, "m", "u", "n", "d", "o"], "char", ["hola", "mundo"],
     [(0, 3), (5, 9)]),
    # a leading space and a double space make no empty word
    ("char_extra_spaces", [S, "a", S, S, "b"], "char", ["a", "b"], [(1, 1), (4, 4)]),
    ("spm", ["\u2581ho", "la", "\u2581mun", "do"], "bpe", ["hola", "mundo"], [(0, 1), (2, 3)]),
    # a lone "▁" only separates: it belongs to neither word
    ("spm_lone_space", ["\u2581", "El", "\u2581gato"], "bpe", ["El", "gato"],
     [(1, 1), (2, 2)]),
    ("bpe@@", ["Hal@@", "lo", "Welt"], "bpe@@", ["Hallo", "Welt"], [(0, 1), (2, 2)]),
    ("empty", [], "bpe", [], []),
]


@pytest.mark.parametrize("units, unit_type, words, spans", [c[1:] for c in SPANS],
                         ids=[c[0] for c in SPANS])
def test_words_text_and_spans(units, unit_type, words, spans):
    assert unit_words.words(units, unit_type) == words
    assert unit_words.text(units, unit_type) == " ".join(words)
    assert unit_words.word_spans(units, unit_type) == spans


def test_records_without_a_unit_type_are_guessed_from_the_pieces():
    # "▁" anywhere: SentencePiece; otherwise characters ("<space>" separates)
    assert unit_words.guess_unit_type(["\u2581ho", "la"]) == "bpe"
    assert unit_words.guess_unit_type(["h", S, "a"]) == "char"
    assert unit_words.text(["\u2581ho", "la", "\u2581x"]) == "hola x"
    assert unit_words.text(["h", S, "a"], "") == "h a"
    assert unit_words.word_spans(["h", S, "a"]) == [(0, 0), (2, 2)]


def test_espnet_token_types():
    assert unit_words.espnet_unit_type("char") == "char"
    assert unit_words.espnet_unit_type("bpe") == "bpe"


# (id, units, unit type, which units begin a word, words begun)
BEGINS = [
    ("spm", ["\u2581a", "b", "\u2581c", "\u2581d", "e"], "bpe",
     [True, False, True, True, False], 3),
    # the first unit begins a word even without "▁"; a lone "▁" begins one too (the word
    # it opens has its text in the next units)
    ("spm_first_without_space", ["b", "\u2581", ","], "bpe", [True, True, False], 2),
    # a separator begins nothing; the unit after it begins a word
    ("char", ["a", "b", S, "c", S, S, "d"], "char",
     [True, False, False, True, False, False, True], 3),
    ("char_leading_space", [S, "a"], "char", [False, True], 1),
    # the unit after one without "@@" begins a word
    ("bpe@@", ["Hal@@", "lo", "Welt"], "bpe@@", [True, False, True], 2),
    ("empty", [], "char", [], 0),
]


@pytest.mark.parametrize("units, unit_type, begins, count", [c[1:] for c in BEGINS],
                         ids=[c[0] for c in BEGINS])
def test_begins_word_while_writing(units, unit_type, begins, count):
    assert [unit_words.begins_word(units[:i], u, unit_type)
            for i, u in enumerate(units)] == begins
    assert unit_words.count_words(units, unit_type) == count


def test_separators():
    assert unit_words.is_separator(S, "char")
    assert not unit_words.is_separator("a", "char")
    assert not unit_words.is_separator("\u2581", "bpe")  # "▁" also begins a word
    with pytest.raises(ValueError, match="unit_type"):
        unit_words.begins_word([], "a", "phones")


@pytest.mark.parametrize(("units", "unit_type", "words", "delays"), [
    (["a", "b", "<space>", "c"], "char", ["ab"], [30.0]),  # "c" may go on
    (["a", "<space>", "<space>", "c", "<space>"], "char", ["a", "c"], [20.0, 50.0]),
    (["\u2581ab", "c", "\u2581d"], "bpe", ["abc"], [30.0]),  # complete once "▁d" begins
    (["\u2581ab", "c"], "bpe", [], []),
    (["a@@", "b", "c@@"], "bpe@@", ["ab"], [20.0]),  # "b" has no "@@": its word is done
    ([], "bpe", [], []),
])
def test_complete_words_while_writing(units, unit_type, words, delays):
    unit_delays = [10.0 * (i + 1) for i in range(len(units))]
    assert complete_words(units, unit_delays, unit_type) == (words, delays)
