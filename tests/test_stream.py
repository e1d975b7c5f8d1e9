"""Streaming sessions: every policy gives the same record fed in chunks of any size as on
the whole segment; what each call returns adds up to the record; bad input is refused."""

import itertools
import math

import numpy as np
import pytest

from simul.decoding.session import PolicyError, Session, StreamError
from simul.decoding.simulate import simulate
from simul.models.adapters.espnet_st import ESPnetST
from simul.policies import make, registry
from simul.policies.base import Policy, Read, Write
from tests.test_policy_predecision import ALIGNMENT
from tests.test_simulate import segment

# settings of every policy that make it decide (and write) several times while it reads
SETTINGS = {
    "offline": [{}, {"beam": 3}],
    "wait_k_frames": [{"k": 30, "s": 7, "n": 2}, {"k": 25, "s": 10, "n": 1, "reuse_state": False}],
    "wait_k_words": [{"k": 1, "detection": "fixed", "word_ms": 150, "chunk_ms": 130,
                      "avoid_eos_while_reading": True},
                     {"k": 2, "detection": "adaptive", "chunk_ms": 170}],
    "predecision": [{"trigger": "fixed", "step_ms": 120, "k": 2},
                    {"trigger": "word", "k": 1}, {"trigger": "phoneme", "k": 2}],
    "onlinization": [{"chunk_ms": 250, "rule": "la", "n": 2, "beam": 3},
                     {"chunk_ms": 190, "rule": "hold", "n": 1, "beam": 2},
                     {"chunk_ms": 300, "rule": "sp", "n": 1, "beam": 3, "initial_wait_ms": 450}],
    "wait_k_catchup": [{"k": 1, "stride_ms": 90, "catchup": 0.3},
                       {"k": 2, "stride_ms": 100, "on_eos": "stop"}],
    "alignatt": [{"chunk_ms": 230, "frames": 1}],
    "edatt": [{"chunk_ms": 230, "frames": 2, "alpha": 0.5}],
}
CASES = [(name, s) for name, settings in SETTINGS.items() for s in settings]


def test_every_policy_is_covered():
    # the cascade's policy streams a cascade: tests/test_cascade.py chunks it; a policy that
    # needs its own decoder (mma) streams its models: tests/test_mma_policy.py chunks it;
    # a policy on text (wait_k_text) gets words: tests/test_text.py pushes them in groups
    assert set(SETTINGS) == {n for n, c in registry().items()
                             if c.runs_on == "st" and not c.needs_decoder}


@pytest.fixture(scope="module")
def model(tiny_model_dir):
    return ESPnetST.from_dir(tiny_model_dir)


def counting_clock():
    """A clock that advances 1 ms per call: elapsed times depend only on the decisions."""
    ticks = itertools.count()
    return lambda: next(ticks) / 1000.0


def stream(model, policy, audio, chunk_ms, alignment=ALIGNMENT):
    """Feed ``audio`` in chunks of ``chunk_ms`` (the last one with the end); return the
    session and the updates."""
    session = Session(model, policy, alignment=alignment, clock=counting_clock())
    size = max(1, round(chunk_ms * 16))
    starts = list(range(0, audio.size, size))
    updates = [session.push(audio[a : a + size]) for a in starts[:-1]]
    updates.append(session.finish(audio[starts[-1] :]))
    return session, updates


@pytest.mark.parametrize(("name", "settings"), CASES,
                         ids=[f"{n}-{'-'.join(map(str, s.values()))}" for n, s in CASES])
# a setting known to run away (wait_k_words' avoid_eos_while_reading) is streamed on purpose
@pytest.mark.filterwarnings("ignore::simul.policies.word_detection.RunawaySettingWarning")
def test_chunking_changes_nothing(model, speech, name, settings):
    whole = simulate(model, make(name, settings), segment(speech, ALIGNMENT),
                     clock=counting_clock())
    assert whole.units, "a setting that writes nothing tests little"
    for chunk_ms in (10, 37, 1000):
        session, updates = stream(model, make(name, settings), speech, chunk_ms)
        rec = session.record(index=0, reference="x y", segment_id="t_0",
                             source=["t.wav", "t_0"], source_text="a b")
        assert rec == whole, f"{chunk_ms} ms chunks"
        # the updates add up to the record, each word written no later than it was heard
        assert [u for up in updates for u in up.units] == rec.units
        words = [w for up in updates for w in up.words]
        assert [w.text for w in words] == rec.prediction.split()
        assert [w.delay_ms for w in words] == rec.delays
        heard = 0.0
        for up, start in zip(updates, itertools.count(0, chunk_ms)):
            heard = min(start + chunk_ms, rec.source_length)
            assert all(w.delay_ms <= heard + 1e-9 for w in up.words)
        assert updates[-1].finished and not any(up.finished for up in updates[:-1])


def test_words_appear_once_complete(model, speech):
    # char units: a word is returned once the <space> after it is written, not before
    session, updates = stream(model, make("wait_k_frames", {"k": 30, "s": 7, "n": 2}),
                              speech, 10)
    for up in updates[:-1]:
        for w in up.words:
            assert w.text and " " not in w.text
    written = "".join(u.replace("<space>", " ") for up in updates[:-1] for u in up.units)
    returned = [w.text for up in updates[:-1] for w in up.words]
    assert returned == written.split()[: len(returned)]
    if written and not written.endswith(" "):
        assert len(returned) <= len(written.split()) - 1  # the open word waits


class Peeking(Policy):
    """Reads to the end, then checks what it was told."""

    name = ""

    def first_read_ms(self):
        return 100.0

    def decide(self, model, view):
        assert not hasattr(view, "source_ms")  # the total length is nobody's business
        if not view.source_finished:
            return Read(math.inf)
        return Write((), finished=True)


def test_policies_never_see_the_total_length(model, speech):
    session = Session(model, Peeking())
    up = session.push(speech[:8000])
    assert not up.finished and up.read_ms == 100.0  # waits: a read to ∞ needs the end
    up = session.finish(speech[8000:])
    assert up.finished and up.read_ms == pytest.approx(1200.0)
    assert session.record().source_length == pytest.approx(1200.0)


def test_bad_input_is_refused_and_changes_nothing(model, speech):
    session = Session(model, make("wait_k_frames", {"k": 30}))
    session.push(speech[:1600])
    before = (session.received_ms, session.read_ms, list(session.unit_ids))
    with pytest.raises(StreamError, match="8000 Hz.*16000"):
        session.push(speech[:800], sample_rate=8000)
    with pytest.raises(StreamError, match="mono"):
        session.push(np.stack([speech[:800], speech[:800]], axis=1))
    with pytest.raises(StreamError, match="integer"):
        session.push(np.zeros(160, np.int16))
    with pytest.raises(StreamError, match="not ended"):
        session.record()
    assert (session.received_ms, session.read_ms, list(session.unit_ids)) == before
    session.push(speech[:800, None])  # one channel as a column is mono
    session.finish(speech[2400:])
    with pytest.raises(StreamError, match="finished"):
        session.push(speech[:160])
    with pytest.raises(StreamError, match="empty stream"):
        Session(model, make("offline")).finish()


def test_protocol_errors_name_the_policy(model, speech):
    class Stuck(Policy):
        name = "stuck"

        def first_read_ms(self):
            return 0.0

        def decide(self, model, view):
            return Write(())

    with pytest.raises(PolicyError, match="stuck: no finished Write after 5 steps"):
        Session(model, Stuck(), max_steps=5).finish(speech)
