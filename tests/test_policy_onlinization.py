"""Onlinization (Polák et al. 2022): the stable-prefix rules by hand, the policy on a scripted
model, and on tiny random models (Transformer and RNN decoders)."""

import numpy as np
import pytest

from simul.decoding.simulate import simulate
from simul.models.adapters.espnet_st import ESPnetST, Hyp
from simul.policies.offline import Offline
from simul.policies.onlinization import (
    Onlinization,
    hold_n,
    local_agreement,
    longest_common_prefix,
    shared_prefix,
    whole_words,
)
from tests.test_simulate import Recording, segment


@pytest.fixture(scope="module")
def model(tiny_model_dir):
    return ESPnetST.from_dir(tiny_model_dir)


# ------------------------------------------------------------------ the rules by hand
@pytest.mark.parametrize(("sequences", "expected"), [
    ([], ()),
    ([[1, 2, 3]], (1, 2, 3)),
    ([[1, 2, 3], [1, 2, 4]], (1, 2)),
    ([[1, 2, 3], [1, 2]], (1, 2)),
    ([[1, 2, 3], [1, 2, 3, 4], [1, 2, 3]], (1, 2, 3)),
    ([[1, 2], [2, 1]], ()),
    ([[1, 2], []], ()),
])
def test_longest_common_prefix(sequences, expected):
    assert longest_common_prefix(sequences) == expected


@pytest.mark.parametrize(("best", "n", "expected"), [
    ([5, 6, 7, 8, 9], 2, (5, 6, 7)),
    ([5, 6, 7], 3, ()),  # |W| ≤ n: nothing
    ([5, 6], 3, ()),
    ([5, 6, 7], 0, (5, 6, 7)),
    ([], 1, ()),
])
def test_hold_n(best, n, expected):
    assert hold_n(best, n) == expected


@pytest.mark.parametrize(("best_per_chunk", "n", "expected"), [
    ([[1, 2, 3]], 2, ()),  # c = 1 < n = 2
    ([[1, 2, 3], [1, 2, 4]], 2, (1, 2)),
    ([[9], [1, 2, 3], [1, 2, 4]], 2, (1, 2)),  # only the last two chunks count
    ([[9], [1, 2, 3], [1, 2, 4]], 3, ()),
    ([[1, 5], [1, 2, 3], [1, 2, 4]], 3, (1,)),
    ([[1, 2, 3], [1, 2, 3]], 1, (1, 2, 3)),  # LA-1: the whole best hypothesis
])
def test_local_agreement(best_per_chunk, n, expected):
    assert local_agreement(best_per_chunk, n) == expected


@pytest.mark.parametrize(("beams_per_chunk", "n", "expected"), [
    ([[[1, 2, 3], [1, 2, 4], [1, 2]]], 1, (1, 2)),  # SP-1: one chunk's whole beam
    ([[[1, 2, 3], [1, 3]]], 1, (1,)),
    ([[[1, 2, 3], [1, 2, 4]]], 2, ()),  # c = 1 < n = 2
    ([[[1, 2, 3], [1, 2, 4]], [[1, 2, 3, 5], [1, 2, 3, 6]]], 2, (1, 2)),
    ([[[7]], [[1, 2, 3, 5], [1, 2, 3, 6]]], 1, (1, 2, 3)),
    ([[[7]], [[1, 2, 3, 5], [1, 2, 3, 6]]], 2, ()),
])
def test_shared_prefix(beams_per_chunk, n, expected):
    assert shared_prefix(beams_per_chunk, n) == expected


@pytest.mark.parametrize(("pieces", "unit", "expected"), [
    ([], "char", 0),
    (list("ab"), "char", 0),  # the first word is not known to be complete
    (["a", "b", "<space>"], "char", 3),  # complete with its space
    (["a", "b", "<space>", "c", "."], "char", 3),  # "c." may go on ("c.d")
    (["a", "<space>", "b", "<space>", "c"], "char", 4),
    (["\u2581ab"], "bpe", 0),
    (["\u2581a", "b", "\u2581c"], "bpe", 2),  # "▁c" shows "ab" complete, and may go on
    (["\u2581a", "b", "\u2581c", "."], "bpe", 2),
    (["a@@", "b"], "bpe@@", 2),
    (["a@@", "b", "c@@"], "bpe@@", 2),
])
def test_whole_words(pieces, unit, expected):
    assert whole_words(pieces, unit) == expected


@pytest.mark.parametrize("settings", [{"rule": "lcp"}, {"rule": "la", "n": 0},
                                      {"chunk_ms": 0}, {"beam": 0}, {"initial_wait_ms": -1},
                                      {"commit": "chars"}])
def test_bad_settings_are_refused(settings):
    with pytest.raises(ValueError, match="onlinization"):
        Onlinization(**settings)


# ------------------------------------------------------------------ a scripted model
class ScriptedBeams:
    """A fake adapter: its beam after reading d ms is ``script[d]`` (whole sequences, best
    first, as strings of units); it checks that the search continues the committed prefix."""

    unit_type = "char"
    token_list = ["<blank>", "<unk>", "a", "b", "c", "d", "e", "f", "<sos/eos>"]

    def __init__(self, script):
        self.script = script

    def encode(self, audio):
        return round(len(audio) / 16)  # "encoder states": the ms read

    def beam_search(self, enc, prefix, *, beam, nbest, maxlenratio):
        out = []
        for whole in self.script[enc]:
            ids = [self.token_list.index(u) for u in whole]
            assert ids[: len(prefix)] == list(prefix), f"{whole!r} does not continue {prefix}"
            out.append(Hyp(ids[len(prefix) :], 0.0, ended=True))  # EOS left out, as the adapter
        return out


BEST = {500: ["abd"], 1000: ["abce"], 1500: ["abcf"], 2000: ["abcfe"]}
BEAMS = {500: ["abd", "abc", "b"], 1000: ["abce", "abd", "abc"], 1500: ["abcf", "abce"],
         2000: ["abcfe"]}


@pytest.mark.parametrize(("policy", "script", "trace", "units"), [
    # LA-2: nothing after chunk 1; LCP(abd, abce) = ab; LCP(abce, abcf) = abc; end: abcfe
    (Onlinization(chunk_ms=500, rule="la", n=2), BEST,
     [(500, 0), (1000, 0), (1000, 2), (1500, 0), (1500, 1), (2000, 0), (2000, 2)], "abcfe"),
    # hold-2: abd → a; abce → ab; abcf → ab (nothing new); end: abcfe
    (Onlinization(chunk_ms=500, rule="hold", n=2), BEST,
     [(500, 0), (500, 1), (1000, 0), (1000, 1), (1500, 0), (2000, 0), (2000, 3)], "abcfe"),
    # SP-1: LCP(abd, abc, b) = ∅; LCP(abce, abd, abc) = ab; LCP(abcf, abce) = abc
    (Onlinization(chunk_ms=500, rule="sp", n=1), BEAMS,
     [(500, 0), (1000, 0), (1000, 2), (1500, 0), (1500, 1), (2000, 0), (2000, 2)], "abcfe"),
    # SP-2: c = 1 < 2; chunks 1–2 share ∅ ("b"); chunks 2–3 share ab; end from ab: abcfe
    (Onlinization(chunk_ms=500, rule="sp", n=2), BEAMS,
     [(500, 0), (1000, 0), (1500, 0), (1500, 2), (2000, 0), (2000, 3)], "abcfe"),
    # initial wait of 1000 ms, then 500 ms chunks; LA-2 agrees on abc at 1500 ms
    (Onlinization(chunk_ms=500, initial_wait_ms=1000, rule="la", n=2), BEST,
     [(1000, 0), (1500, 0), (1500, 3), (2000, 0), (2000, 2)], "abcfe"),
    # an empty ended hypothesis (EOS first) before the end does not finish the utterance
    (Onlinization(chunk_ms=500, rule="hold", n=0), {**BEST, 500: [""], 1000: ["abcf"]},
     [(500, 0), (1000, 0), (1000, 4), (1500, 0), (2000, 0), (2000, 1)], "abcfe"),
])
def test_scripted_traces_by_hand(policy, script, trace, units):
    rec = simulate(ScriptedBeams(script), policy, segment(np.zeros(32000, np.float32)))
    assert rec.trace == trace
    assert "".join(rec.units) == units


class ScriptedWords(ScriptedBeams):
    """ScriptedBeams whose hypotheses are lists of unit texts, of any ``unit_type``."""

    def __init__(self, script, unit_type, token_list):
        super().__init__(script)
        self.unit_type, self.token_list = unit_type, ["<blank>", "<unk>", *token_list,
                                                      "<sos/eos>"]


SP = "\u2581"
CHAR_SCRIPT = {500: ["ab c"], 1000: ["ab ca"], 1500: ["ab cab"], 2000: ["ab cab c"]}
CHAR_WORDS = ScriptedWords({ms: [["<space>" if u == " " else u for u in h] for h in hyps]
                            for ms, hyps in CHAR_SCRIPT.items()}, "char",
                           ["a", "b", "c", "<space>"])
SPM_WORDS = ScriptedWords({500: [[SP + "a", "b", SP + "c"]],
                           1000: [[SP + "a", "b", SP + "c", "d"]],
                           1500: [[SP + "a", "b", SP + "c", "d", SP + "a"]],
                           2000: [[SP + "a", "b", SP + "c", "d", SP + "a", "b"]]},
                          "bpe", [SP + "a", "b", SP + "c", "d"])


@pytest.mark.parametrize(("model", "commit", "trace"), [
    # units (K22): LCP(ab c, ab ca) = "ab c"; LCP(ab ca, ab cab) = "ab ca"; end: "b c"
    (CHAR_WORDS, "units",
     [(500, 0), (1000, 0), (1000, 4), (1500, 0), (1500, 1), (2000, 0), (2000, 3)]),
    # words: "ab c" is cut back to "ab " ("c" may go on); "ab ca" to "ab " again (nothing
    # new); the end commits the whole best hypothesis, "cab c"
    (CHAR_WORDS, "words", [(500, 0), (1000, 0), (1000, 3), (1500, 0), (2000, 0), (2000, 5)]),
    # SentencePiece: "▁a b ▁c" → "▁a b" ("▁c" shows "ab" complete but may go on);
    # "▁a b ▁c d" → "▁a b" again; the end commits "▁c d ▁a b"
    (SPM_WORDS, "units",
     [(500, 0), (1000, 0), (1000, 3), (1500, 0), (1500, 1), (2000, 0), (2000, 2)]),
    (SPM_WORDS, "words", [(500, 0), (1000, 0), (1000, 2), (1500, 0), (2000, 0), (2000, 4)]),
])
def test_committing_whole_words_by_hand(model, commit, trace):
    policy = Onlinization(chunk_ms=500, rule="la", n=2, commit=commit)
    rec = simulate(model, policy, segment(np.zeros(32000, np.float32)))
    assert rec.trace == trace
    assert rec.units == [u for h in model.script[2000] for u in h]


# ------------------------------------------------------------------ tiny random models


@pytest.mark.parametrize(("beam", "commit"), [(2, "units"), (5, "units"), (5, "words")])
def test_reading_everything_first_equals_offline_beam_search(model, speech, beam, commit):
    policy = Onlinization(chunk_ms=250, initial_wait_ms=5000, rule="la", n=2, beam=beam,
                          commit=commit)
    rec = simulate(model, policy, segment(speech))
    expected = model.beam_search(model.encode(speech), beam=beam)[0].tokens
    assert rec.units == [model.token_list[t] for t in expected]
    assert rec.units == simulate(model, Offline(beam=beam), segment(speech)).units
    assert rec.trace == [(rec.source_length, 0), (rec.source_length, len(expected))]


@pytest.mark.parametrize(("rule", "n", "chunk_ms", "initial_wait_ms", "commit"), [
    ("hold", 3, 250, 0, "units"), ("la", 2, 250, 0, "units"), ("la", 3, 400, 600, "units"),
    ("sp", 1, 300, 0, "units"), ("sp", 2, 250, 500, "units"), ("la", 2, 250, 0, "words"),
    ("hold", 1, 190, 0, "words"),
])
def test_chunked_properties(model, speech, rule, n, chunk_ms, initial_wait_ms, commit):
    policy = Recording(Onlinization(chunk_ms=chunk_ms, initial_wait_ms=initial_wait_ms,
                                    rule=rule, n=n, beam=3, commit=commit))
    rec = simulate(model, policy, segment(speech))
    reads = [ms for ms, _ in rec.trace]
    first = initial_wait_ms or chunk_ms
    assert reads == sorted(reads) and reads[0] == first and reads[-1] == rec.source_length
    boundaries = {first + i * chunk_ms for i in range(10)} | {rec.source_length}
    assert set(reads) <= boundaries
    assert all(d <= rec.source_length for d in rec.delays)
    assert len(rec.delays) == rec.prediction_length
    assert sum(w for _, w in rec.trace) == len(rec.units)
    final = [model.token_list.index(u) for u in rec.units]
    for before, after in zip(policy.seen, [*policy.seen[1:], final], strict=True):
        assert after[: len(before)] == before  # committed units only grow
    if commit == "words":  # while reading, every write ends with a word's <space>
        end = 0
        for ms, n in rec.trace:
            end += n
            if n and ms < rec.source_length:
                assert rec.units[end - 1] == "<space>"


@pytest.mark.parametrize(("rule", "n"), [("hold", 2), ("la", 2), ("sp", 2)])
def test_searches_stopping_early_decide_as_espnets_full_search(model, speech, rule, n):
    # hold-n and LA-n ask only for the best hypothesis, so the search may stop as soon as it
    # is settled; SP-n needs the whole beam. Either way, the units and the points they are
    # written at are those of ESPnet's search run to its own end.
    policy = Onlinization(chunk_ms=250, rule=rule, n=n, beam=4)
    runs = []
    for stop_early in (True, False):
        model.stop_early = stop_early
        runs.append(simulate(model, policy, segment(speech)))
    model.stop_early = True
    assert runs[0].units == runs[1].units and runs[0].trace == runs[1].trace
    assert runs[0].units
