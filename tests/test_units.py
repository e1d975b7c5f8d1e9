"""Word delays from characters, SentencePiece and @@ BPE units, worked by hand."""

import pytest

from simul.metrics.units import word_delays

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
