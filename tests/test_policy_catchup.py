"""Wait-k with stride and catch-up (Han et al. 2020): g(t) by hand, the policy on a scripted
model, and on tiny random models (Transformer and RNN decoders)."""

import numpy as np
import pytest

from simul.decoding.simulate import simulate
from simul.models.adapters.espnet_st import ESPnetST, Hyp
from simul.policies.offline import Offline
from simul.policies.wait_k_catchup import WaitKCatchup, g_ms
from tests.test_simulate import Recording, segment


@pytest.fixture(scope="module")
def model(tiny_model_dir):
    return ESPnetST.from_dir(tiny_model_dir)


# ------------------------------------------------------------------ g(t) by hand
@pytest.mark.parametrize(("k", "s", "c", "t", "source_ms", "expected"), [
    (3, 300, 0.0, 1, 10_000, 900),  # (3 + 0 − 0) · 300
    (3, 300, 0.0, 2, 10_000, 1200),  # (3 + 1 − 0) · 300
    (4, 800, 0.0, 3, 3000, 3000),  # (4 + 2) · 800 = 4800, capped at |x| = 3000
    (3, 300, 0.5, 1, 10_000, 900),  # ⌊0.5⌋ = 0
    (3, 300, 0.5, 2, 10_000, 900),  # (3 + 1 − ⌊1.0⌋) · 300
    (3, 300, 0.5, 3, 10_000, 1200),  # (3 + 2 − ⌊1.5⌋) · 300
    (3, 300, 0.5, 4, 10_000, 1200),  # (3 + 3 − ⌊2.0⌋) · 300
    (2, 100, 0.29, 100, 100_000, 7200),  # (2 + 99 − ⌊29.0⌋) · 100, not ⌊28.999…⌋
    (1, 100, -0.2, 1, 10_000, 200),  # (1 + 0 − ⌊−0.2⌋ = −1) · 100
    (1, 100, -0.2, 6, 10_000, 800),  # (1 + 5 − ⌊−1.2⌋ = −2) · 100
    (5, 400, 0.0, 1, 1000, 1000),  # even the first unit waits for the whole input
])
def test_g_by_hand(k, s, c, t, source_ms, expected):
    assert g_ms(t, k=k, stride_ms=s, catchup=c, source_ms=source_ms) == expected
    # the policy does not know |x|: its g(t) is uncapped, and a read past the end stops there
    policy = WaitKCatchup(k=k, stride_ms=s, catchup=c)
    assert min(policy.g_ms(t), source_ms) == expected


def test_t_counts_from_one():
    with pytest.raises(ValueError, match="t=0"):
        g_ms(0, k=3, stride_ms=300, catchup=0.0, source_ms=1000)


@pytest.mark.parametrize("settings", [{"k": 0}, {"stride_ms": 0}])
def test_bad_settings_are_refused(settings):
    with pytest.raises(ValueError, match="wait_k_catchup"):
        WaitKCatchup(**settings)


# ------------------------------------------------------------------ a scripted model
class ScriptedGreedy:
    """A fake adapter whose greedy output continues ``target`` (a string of units), except
    that after reading a time in ``eos_at`` (ms) it predicts EOS first."""

    unit_type = "char"
    token_list = ["<blank>", "<unk>", "a", "b", "c", "d", "e", "f", "g", "<sos/eos>"]

    def __init__(self, target, eos_at=()):
        self.target = [self.token_list.index(u) for u in target]
        self.eos_at = set(eos_at)

    def encode(self, audio):
        return round(len(audio) / 16)  # "encoder states": the ms read

    def greedy(self, enc, prefix, *, max_new=None, maxlenratio=0.0, state=None):
        assert list(prefix) == self.target[: len(prefix)]
        if enc in self.eos_at:
            return Hyp([], 0.0, ended=True)
        rest = self.target[len(prefix) :]
        new = rest if max_new is None else rest[:max_new]
        return Hyp(new, 0.0, ended=len(new) == len(rest))


@pytest.mark.parametrize(("policy", "script", "source_ms", "trace"), [
    # k = 2, s = 300: unit t at (t + 1) · 300 ms; EOS predicted at 900 ms reads one stride on
    (WaitKCatchup(k=2, stride_ms=300), ScriptedGreedy("abcdefg", eos_at=[900]), 1500,
     [(600, 0), (600, 1), (900, 0), (1200, 0), (1200, 1), (1200, 1), (1500, 0), (1500, 4)]),
    # c = 0.5: g = 600, 600, 900, 900, 1200, 1200, 1500 — two units per stride
    (WaitKCatchup(k=2, stride_ms=300, catchup=0.5), ScriptedGreedy("abcdef"), 1500,
     [(600, 0), (600, 1), (600, 1), (900, 0), (900, 1), (900, 1), (1200, 0), (1200, 1),
      (1200, 1), (1500, 0), (1500, 0)]),
    # k · s ≥ |x|: everything at the end, in one greedy pass
    (WaitKCatchup(k=10, stride_ms=300), ScriptedGreedy("abc"), 1500, [(1500, 0), (1500, 3)]),
])
def test_scripted_traces_by_hand(policy, script, source_ms, trace):
    audio = np.zeros(int(source_ms * 16), np.float32)
    rec = simulate(script, policy, segment(audio))
    assert rec.trace == trace
    assert rec.units == [script.token_list[u] for u in script.target]


def test_eos_while_reading_stops_the_hypothesis_when_asked():
    # the first case above with on_eos="stop": EOS predicted after reading 900 ms ends it
    audio = np.zeros(1500 * 16, np.float32)
    script = ScriptedGreedy("abcdefg", eos_at=[900])
    rec = simulate(script, WaitKCatchup(k=2, stride_ms=300, on_eos="stop"), segment(audio))
    assert rec.trace == [(600, 0), (600, 1), (900, 0), (900, 0)]
    assert rec.units == ["a"] and rec.delays == [900]  # the word ends at the last read
    with pytest.raises(ValueError, match="on_eos"):
        WaitKCatchup(on_eos="skip")


# ------------------------------------------------------------------ tiny random models


@pytest.mark.parametrize("policy", [WaitKCatchup(k=10, stride_ms=200),
                                    WaitKCatchup(k=4, stride_ms=300, catchup=0.5),
                                    WaitKCatchup(k=6, stride_ms=200, reuse_state=False)])
def test_reading_everything_first_equals_offline(model, speech, policy):
    rec = simulate(model, policy, segment(speech))
    expected = model.greedy(model.encode(speech)).tokens
    assert rec.units == [model.token_list[t] for t in expected]
    assert rec.units == simulate(model, Offline(), segment(speech)).units


@pytest.mark.parametrize(("k", "s", "c", "reuse_state"), [
    (2, 200, 0.0, True), (3, 120, 0.3, True), (1, 100, -0.2, False), (2, 150, 0.0, False),
])
def test_properties(model, speech, k, s, c, reuse_state):
    policy = Recording(WaitKCatchup(k=k, stride_ms=s, catchup=c, reuse_state=reuse_state))
    rec = simulate(model, policy, segment(speech))
    source = rec.source_length
    reads = [ms for ms, _ in rec.trace]
    assert reads == sorted(reads) and reads[-1] == source
    assert reads[0] == min((k - np.floor(c)) * s, source)
    assert all(w <= 1 for ms, w in rec.trace if ms < source)  # one unit per write
    unit_delays = [ms for ms, w in rec.trace for _ in range(w)]
    for t, delay in enumerate(unit_delays, start=1):  # unit t written once g(t) is read
        assert delay >= min((k + t - 1 - np.floor(c * t)) * s, source)
    assert all(d <= source for d in rec.delays)
    assert len(rec.delays) == rec.prediction_length
    final = [model.token_list.index(u) for u in rec.units]
    for before, after in zip(policy.seen, [*policy.seen[1:], final], strict=True):
        assert after[: len(before)] == before  # committed units only grow
