"""The simulator with the offline and wait-k-frames policies, on tiny random models."""

from pathlib import Path

import numpy as np
import pytest

from simul.corpus import Alignment, Segment
from simul.decoding.simulate import PolicyError, simulate
from simul.models.adapters.espnet_st import ESPnetST
from simul.policies.base import Policy, Read, Write
from simul.policies.offline import Offline
from simul.policies.wait_k_frames import WaitKFrames


def segment(audio: np.ndarray, alignment: Alignment | None = None) -> Segment:
    return Segment(index=0, id="t_0", talk="t", wav=Path("t.wav"), offset_ms=0.0,
                   duration_ms=1000 * audio.size / 16000, speaker_id="s", source="a b",
                   target="x y", audio=audio, alignment=alignment)


@pytest.fixture(scope="module")
def model(tiny_model_dir):
    return ESPnetST.from_dir(tiny_model_dir)


def test_offline_policy_equals_offline_greedy(model, speech):
    rec = simulate(model, Offline(), segment(speech))
    expected = model.greedy(model.encode(speech)).tokens
    assert rec.units == [model.token_list[t] for t in expected]
    assert rec.delays == [rec.source_length] * rec.prediction_length
    assert rec.unit_type == model.unit_type == "char"  # the tiny model writes characters


@pytest.mark.parametrize("reuse_state", [True, False])
def test_wait_k_reading_everything_first_equals_offline(model, speech, reuse_state):
    offline = simulate(model, Offline(), segment(speech))
    policy = WaitKFrames(k=10_000, s=10, n=2, maxlenratio=0.0, reuse_state=reuse_state)
    rec = simulate(model, policy, segment(speech))
    assert rec.units == offline.units


@pytest.mark.parametrize(("k", "s", "n"), [(20, 10, 1), (40, 20, 3), (5, 5, 2)])
def test_wait_k_properties(model, speech, k, s, n):
    rec = simulate(model, WaitKFrames(k=k, s=s, n=n, maxlenratio=1.0), segment(speech))
    reads = [ms for ms, _ in rec.trace]
    assert reads == sorted(reads) and reads[0] == min(k * 10, rec.source_length)
    assert all(b - a <= s * 10 + 1e-9 for a, b in zip(reads, reads[1:], strict=False))
    assert all(w <= n for ms, w in rec.trace if ms < rec.source_length)
    assert rec.delays == sorted(rec.delays) and all(d <= rec.source_length for d in rec.delays)
    assert all(e >= d for e, d in zip(rec.elapsed, rec.delays, strict=True))
    assert len(rec.delays) == len(rec.prediction.split()) == rec.prediction_length
    assert sum(w for _, w in rec.trace) == len(rec.units)


class Recording(Policy):
    """Wraps a policy and records the committed units it is shown at every decision."""

    name = "recording"

    def __init__(self, inner: Policy):
        self.inner = inner
        self.seen: list[list[int]] = []

    def first_read_ms(self):
        return self.inner.first_read_ms()

    def decide(self, model, view):
        self.seen.append(list(view.units))
        return self.inner.decide(model, view)


class Backwards(Policy):
    name = "backwards"

    def first_read_ms(self):
        return 500

    def decide(self, model, view):
        return Read(100) if view.step == 0 else Write((), finished=True)


def test_policy_that_reads_backwards_is_refused(model, speech):
    with pytest.raises(PolicyError, match="does not move forward"):
        simulate(model, Backwards(), segment(speech))


def test_score_cli_reads_simulated_records(model, speech, tmp_path, capsys):
    import json

    from simul import records
    from simul.commands.cli import main

    recs = [simulate(model, WaitKFrames(k=k, s=10, n=2), segment(speech)) for k in (20, 60)]
    path = records.write(recs, tmp_path / "r.jsonl")
    capsys.readouterr()
    assert main(["score", str(path), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    for key in ("BLEU", "AL", "LAAL", "DAL", "AP", "ATD", "LAAL_CA", "BLEU_signature"):
        assert key in scores
    assert scores["LAAL_CA"] >= scores["LAAL"]


@pytest.mark.parametrize(("name", "settings", "message"), [
    ("wait_k_frames", {"s": "0"}, "wait_k_frames: s=0 must be ≥ 1 frame"),
    ("wait_k_frames", {"n": "-1"}, "wait_k_frames: n=-1 must be ≥ 1 unit"),
    ("offline", {"beam": "0"}, "offline: beam=0 must be ≥ 1"),
    ("alignatt", {"chunk_ms": "0"}, "alignatt: chunk_ms=0.0 must be > 0"),
    ("edatt", {"frames": "-2"}, "edatt: frames=-2 must be ≥ 0"),
    ("onlinization", {"rule": "lcp"}, "onlinization: rule='lcp' must be one of"),
    ("predecision", {"k": "0"}, "predecision: k=0 must be ≥ 1"),
    ("wait_k_words", {"word_ms": "0"}, "wait_k_words: word_ms=0.0 must be > 0"),
])
def test_bad_settings_are_refused_by_name(name, settings, message):
    from simul.policies import make

    with pytest.raises(ValueError) as info:
        make(name, settings)
    assert message in str(info.value)


# One small setting of every policy family, for inputs with little or nothing to translate.
SHORT_INPUT_SETTINGS = [
    ("wait_k_frames", {"k": 10, "s": 10, "n": 1}),
    ("wait_k_words", {"k": 1, "detection": "fixed", "chunk_ms": 100}),
    ("wait_k_words", {"k": 1, "detection": "adaptive", "chunk_ms": 100}),
    ("predecision", {"trigger": "fixed", "step_ms": 120, "k": 1}),
    ("predecision", {"trigger": "word", "step_ms": 120, "k": 1}),
    ("predecision", {"trigger": "phoneme", "step_ms": 120, "k": 1}),
    ("onlinization", {"chunk_ms": 250, "rule": "la", "n": 2, "beam": 3}),
    ("wait_k_catchup", {"k": 1, "stride_ms": 100}),
    ("alignatt", {"chunk_ms": 200}),
    ("edatt", {"chunk_ms": 200}),
    ("offline", {}),
]


@pytest.mark.parametrize("audio", ["10ms", "silence_0.3s", "silence_1.2s", "speech_0.3s"])
@pytest.mark.parametrize(("name", "settings"), SHORT_INPUT_SETTINGS,
                         ids=[f"{n}-{'-'.join(map(str, s.values()))}"
                              for n, s in SHORT_INPUT_SETTINGS])
def test_short_and_silent_input_end_cleanly(model, speech, name, settings, audio):
    from simul.policies import make

    samples = {"10ms": np.zeros(160, np.float32),
               "silence_0.3s": np.zeros(4800, np.float32),
               "silence_1.2s": np.zeros(19200, np.float32), "speech_0.3s": speech[:4800]}[audio]
    no_words = Alignment(words=(), phonemes=())  # the oracle triggers see no boundary
    rec = simulate(model, make(name, settings), segment(samples, no_words))
    assert rec.prediction_length == len(rec.delays) == len(rec.prediction.split())
    assert rec.trace[-1][0] == rec.source_length
    assert all(d <= rec.source_length for d in rec.delays)


def test_empty_input_is_refused(model):
    from simul.decoding.session import StreamError

    with pytest.raises(StreamError, match="empty stream"):
        simulate(model, WaitKFrames(), segment(np.zeros(0, np.float32)))
