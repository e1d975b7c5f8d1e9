"""Wait-k over detected source words (Papi et al. 2022): schedules worked by hand on a
scripted model, then the policy on tiny random models (Transformer and RNN decoders)."""

import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from simul.corpus import Alignment, Segment
from simul.decoding.simulate import simulate
from simul.models.adapters.espnet_st import Encoded, ESPnetST, Hyp, ModelError
from simul.policies import make, registry, word_detection
from simul.policies.base import View
from simul.policies.offline import Offline
from simul.policies.word_detection import (
    RunawaySettingWarning,
    WaitKWords,
    count_words,
    fixed_word_count,
)

SPACE = "<space>"
# settings below that avoid </s> while reading on purpose warn once per process
pytestmark = pytest.mark.filterwarnings("ignore::simul.policies.word_detection."
                                        "RunawaySettingWarning")


def segment(audio: np.ndarray | int, alignment: Alignment | None = None) -> Segment:
    """A segment of ``audio`` (or of that many samples of silence)."""
    if isinstance(audio, int):
        audio = np.zeros(audio, np.float32)
    return Segment(index=0, id="t_0", talk="t", wav=Path("t.wav"), offset_ms=0.0,
                   duration_ms=1000 * audio.size / 16000, speaker_id="s", source="a b",
                   target="x y", audio=audio, alignment=alignment)


class Scripted:
    """A model that proposes the units of ``pieces`` in order, whatever it hears; then </s>
    (or ``filler`` when </s> is avoided). Its source CTC hears one word per ``ctc_word_ms``."""

    def __init__(self, pieces: list[str], unit: str = "bpe", filler: str = "\u2581uh",
                 ctc_word_ms: float = 300.0):
        self.token_list = ["<blank>", "<unk>", *sorted({*pieces, filler}), "<sos/eos>"]
        index = {p: i for i, p in enumerate(self.token_list)}
        self.script = [index[p] for p in pieces]
        self.filler, self.eos, self.unit_type = index[filler], len(self.token_list) - 1, unit
        self.samples_per_word = int(ctc_word_ms * 16)
        self.prefixes: list[list[int]] = []

    def encode(self, audio) -> Encoded:
        return Encoded(torch.zeros(len(audio) // 640, 1), len(audio))

    def greedy(self, enc, prefix=(), *, max_new=None, maxlenratio=0.0, avoid_eos=False,
               state=None) -> Hyp:
        prefix = list(prefix)
        self.prefixes.append(prefix)
        assert not (avoid_eos and max_new is None), "would never end"
        new: list[int] = []
        while max_new is None or len(new) < max_new:
            i = len(prefix) + len(new)
            if i < len(self.script):
                new.append(self.script[i])
            elif avoid_eos:
                new.append(self.filler)
            else:
                return Hyp(new, 0.0, ended=True)
        return Hyp(new, 0.0, ended=False)

    def ctc_words(self, enc: Encoded) -> list[str]:
        return ["w"] * (enc.n_samples // self.samples_per_word)

    def pieces(self, units: list[int]) -> list[str]:
        return [self.token_list[u] for u in units]


SPM = ["\u2581a", "b", "\u2581c", "\u2581d", "e", "f", "\u2581g"]  # "ab c def g"
CHARS = ["a", "b", SPACE, "c", SPACE, "d", "e", "f", SPACE, "g"]  # the same in characters


# ------------------------------------------------------------------ word counts by hand
@pytest.mark.parametrize(("read_ms", "word_ms", "expected"), [
    (1000, 280, 3),  # 1000 / 280 = 3.57
    (840, 280, 3),  # exactly on a word end
    (839, 280, 2),
    (279, 280, 0),
    (0, 280, 0),
    (1200, 400, 3),
    (1200, 271, 4),
])
def test_fixed_word_detection_counts(read_ms, word_ms, expected):
    assert fixed_word_count(read_ms, word_ms) == expected
    policy = WaitKWords(k=1, detection="fixed", word_ms=word_ms)
    view = View(read_ms, False, [], None, 0)
    assert policy.source_words(None, view) == expected


@pytest.mark.parametrize(("settings", "expected"), [
    ({"k": 3, "detection": "fixed", "word_ms": 280, "chunk_ms": 280}, 840),
    ({"k": 3, "detection": "fixed", "word_ms": 280, "chunk_ms": 1000}, 1000),  # 3 words
    ({"k": 4, "detection": "fixed", "word_ms": 280, "chunk_ms": 1000}, 2000),  # 1000: only 3
    # past a short source: the session stops at its end
    ({"k": 5, "detection": "fixed", "word_ms": 280, "chunk_ms": 280}, 1400),
    ({"k": 3, "detection": "adaptive", "chunk_ms": 280}, 280),
])
def test_first_read(settings, expected):
    assert WaitKWords(**settings).first_read_ms() == pytest.approx(expected)


@pytest.mark.parametrize(("pieces", "unit", "expected"), [
    ([], "bpe", 0),
    (SPM, "bpe", 4),
    (["b", "\u2581c"], "bpe", 2),  # a first unit without "▁" still begins a word
    (CHARS, "char", 4),
    (["a", "b", SPACE], "char", 1),
    ([SPACE, "a", SPACE, SPACE, "b"], "char", 2),
])
def test_count_words(pieces, unit, expected):
    model = Scripted(pieces or ["x"], unit=unit)
    index = {p: i for i, p in enumerate(model.token_list)}
    assert count_words(model, [index[p] for p in pieces]) == expected


# ------------------------------------------------------------------ schedules by hand
def write_spans(rec) -> list[tuple[float, int, int]]:
    """(read ms, first unit, end unit) of every write, from the record's trace."""
    out, pos = [], 0
    for k, (ms, n) in enumerate(rec.trace):
        if k > 0 and rec.trace[k - 1][0] == ms:  # a write follows a read at the same time
            out.append((ms, pos, pos + n))
            pos += n
    return out


def writes(rec) -> list[tuple[float, list[str]]]:
    """(read ms, pieces written) of every write."""
    return [(ms, rec.units[a:b]) for ms, a, b in write_spans(rec)]


def test_fixed_detection_spm_schedule_by_hand():
    # wait-2, one word per 280 ms, chunks of 280 ms, 1.2 s: W = 2, 3, 4 at 560, 840, 1120.
    # Word i is written at W = i + 1; "▁c" closes "ab" but is look-ahead (not committed).
    model = Scripted(SPM)
    policy = WaitKWords(k=2, detection="fixed", word_ms=280, chunk_ms=280)
    rec = simulate(model, policy, segment(19200))
    assert writes(rec) == [(560, ["\u2581a", "b"]), (840, ["\u2581c"]),
                                  (1120, ["\u2581d", "e", "f"]), (1200, ["\u2581g"])]
    assert [ms for ms, _ in rec.trace] == [560, 560, 840, 840, 1120, 1120, 1200, 1200]
    assert rec.prediction == "ab c def g"
    assert rec.delays == [840, 1120, 1200, 1200]  # SentencePiece: charged at the next "▁"


def test_fixed_detection_char_schedule_by_hand():
    # the same in characters: <space> closes a word and is committed with it
    model = Scripted(CHARS, unit="char")
    policy = WaitKWords(k=2, detection="fixed", word_ms=280, chunk_ms=280)
    rec = simulate(model, policy, segment(19200))
    assert writes(rec) == [(560, ["a", "b", SPACE]), (840, ["c", SPACE]),
                                  (1120, ["d", "e", "f", SPACE]), (1200, ["g"])]
    assert rec.delays == [560, 840, 1120, 1200]


def test_fixed_detection_with_coarse_chunks():
    # 1000 ms chunks, 280 ms words, wait-1: W(1000) = 3 → three words at once
    model = Scripted(SPM)
    rec = simulate(model, WaitKWords(k=1, detection="fixed", word_ms=280, chunk_ms=1000),
                   segment(19200))
    assert writes(rec) == [(1000, ["\u2581a", "b", "\u2581c", "\u2581d", "e", "f"]),
                                  (1200, ["\u2581g"])]


def test_adaptive_detection_schedule_by_hand():
    # the scripted CTC hears one word per 300 ms: W = 0, 1, 2, 3 at 280, 560, 840, 1120
    model = Scripted(SPM, ctc_word_ms=300)
    policy = WaitKWords(k=2, detection="adaptive", chunk_ms=280)
    rec = simulate(model, policy, segment(19200))
    assert [ms for ms, _ in rec.trace] == [280, 560, 840, 840, 1120, 1120, 1200, 1200]
    assert writes(rec) == [(840, ["\u2581a", "b"]), (1120, ["\u2581c"]),
                                  (1200, ["\u2581d", "e", "f", "\u2581g"])]


# ------------------------------------------------------------------ </s> while reading
def test_eos_while_reading_ends_the_hypothesis_without_force_finish():
    model = Scripted(["\u2581a", "b"])
    policy = WaitKWords(k=1, detection="fixed", word_ms=280, chunk_ms=280, force_finish=False,
                        avoid_eos_while_reading=False)
    rec = simulate(model, policy, segment(19200))
    assert rec.trace == [(280, 0), (280, 2)]  # finished at 280 ms, the rest never read
    assert rec.prediction == "ab" and rec.delays == [280]


def test_force_finish_drops_eos_and_reads_on():
    model = Scripted(["\u2581a", "b"])
    policy = WaitKWords(k=1, detection="fixed", word_ms=280, chunk_ms=280, force_finish=True,
                        avoid_eos_while_reading=False)
    rec = simulate(model, policy, segment(19200))
    assert [ms for ms, _ in rec.trace] == [280, 280, 560, 840, 1120, 1200, 1200]
    assert writes(rec) == [(280, ["\u2581a", "b"]), (1200, [])]
    assert rec.delays == [1200]  # "ab" is complete only at the end


def test_avoid_eos_while_reading_takes_the_next_best_unit():
    model = Scripted(["\u2581a", "b"])  # </s> avoided → the scripted next-best "▁uh"
    policy = WaitKWords(k=1, detection="fixed", word_ms=280, chunk_ms=280, force_finish=True,
                        avoid_eos_while_reading=True)
    rec = simulate(model, policy, segment(19200))
    uh = "\u2581uh"
    assert writes(rec) == [(280, ["\u2581a", "b"]), (560, [uh]), (840, [uh]),
                                  (1120, [uh]), (1200, [])]  # no avoiding at the end


# ------------------------------------------------------------------ settings and errors
class NoSourceCTC:
    """A real model whose source CTC is missing (as the adapter reports it)."""

    def __init__(self, model):
        self._model = model

    def __getattr__(self, name):
        return getattr(self._model, name)

    def ctc_words(self, enc):
        raise ModelError(f"{self._model.config_path}: the model has no source-language CTC")


def test_adaptive_detection_without_source_ctc_is_refused(model, speech):
    policy = WaitKWords(k=3, detection="adaptive")
    with pytest.raises(ModelError, match="detection='adaptive'.*source-language CTC") as err:
        simulate(NoSourceCTC(model), policy, segment(speech))
    assert str(model.config_path) in str(err.value)
    # fixed detection needs no CTC
    simulate(NoSourceCTC(model), WaitKWords(k=3, detection="fixed"), segment(speech))


@pytest.mark.parametrize("settings", [{"k": 0}, {"detection": "ctc"}, {"word_ms": 0},
                                      {"chunk_ms": -1}])
def test_bad_settings_are_refused(settings):
    with pytest.raises(ValueError, match="wait_k_words"):
        WaitKWords(**settings)


def test_registered_and_made_from_strings():
    assert registry()["wait_k_words"] is WaitKWords
    policy = make("wait_k_words", {"k": "7", "detection": "adaptive", "word_ms": "271",
                                   "force_finish": "false"})
    assert (policy.k, policy.detection, policy.word_ms, policy.force_finish) == (
        7, "adaptive", 271.0, False)


def test_defaults_are_adaptive_detection_without_avoiding_eos():
    # the defaults give a usable translation on the shipped models (the module's table);
    # P22's A.2 setting (fixed, 280 ms, avoid_eos_while_reading) is there by setting it
    with warnings.catch_warnings():
        warnings.simplefilter("error", RunawaySettingWarning)  # the defaults do not warn
        policy = WaitKWords()
    assert (policy.k, policy.detection, policy.word_ms, policy.chunk_ms, policy.force_finish,
            policy.avoid_eos_while_reading) == (5, "adaptive", 360.0, 360.0, True, False)
    assert policy.first_read_ms() == 360.0


@pytest.fixture
def fresh_warnings(monkeypatch):
    """A process that has not warned yet."""
    monkeypatch.setattr(word_detection, "_WARNED", set())


@pytest.mark.parametrize(("settings", "match"), [
    ({"detection": "fixed", "word_ms": 280, "chunk_ms": 280, "avoid_eos_while_reading": True},
     "detection='fixed' with avoid_eos_while_reading=True .*runs away"),
    ({"detection": "adaptive", "k": 3, "avoid_eos_while_reading": True},
     "avoid_eos_while_reading=True can run away at small k"),
])
def test_a_runaway_setting_warns_once_per_process(fresh_warnings, settings, match):
    with pytest.warns(RunawaySettingWarning, match=match) as caught:
        WaitKWords(**settings)
    assert len(caught) == 1
    message = str(caught[0].message)
    # PYTHONWARNINGS=ignore:wait_k_words matches the start of the message
    assert message.startswith("wait_k_words:")
    assert "PYTHONWARNINGS=ignore:wait_k_words" in message
    assert caught[0].filename == __file__  # charged to whoever made the policy
    with warnings.catch_warnings():
        warnings.simplefilter("error", RunawaySettingWarning)
        for k in (3, 5, 7):  # a sweep makes it again and again: no more warnings
            WaitKWords(**{**settings, "k": k})
        make("wait_k_words", {key: str(v) for key, v in settings.items()})


@pytest.mark.parametrize("settings", [
    {"detection": "fixed", "avoid_eos_while_reading": False},
    {"detection": "adaptive", "avoid_eos_while_reading": False},
    {"detection": "fixed", "word_ms": 280, "chunk_ms": 280, "force_finish": True},
])
def test_settings_without_avoid_eos_do_not_warn(fresh_warnings, settings):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RunawaySettingWarning)
        WaitKWords(**settings)
    assert not word_detection._WARNED


def test_fixed_and_adaptive_warn_separately(fresh_warnings):
    with pytest.warns(RunawaySettingWarning, match="detection='fixed'"):
        WaitKWords(detection="fixed", avoid_eos_while_reading=True)
    with pytest.warns(RunawaySettingWarning, match="small k"):
        WaitKWords(detection="adaptive", avoid_eos_while_reading=True)
    assert word_detection._WARNED == {"fixed", "adaptive"}


# ------------------------------------------------------------------ tiny random models
@pytest.fixture(scope="module")
def model(tiny_model_dir):
    return ESPnetST.from_dir(tiny_model_dir)


class Spy:
    """Delegates to a model and records the prefixes the policy asks it to continue."""

    def __init__(self, model):
        self._model, self.prefixes = model, []

    def __getattr__(self, name):
        return getattr(self._model, name)

    def greedy(self, enc, prefix=(), **kw):
        self.prefixes.append(list(prefix))
        return self._model.greedy(enc, prefix, **kw)


@pytest.mark.parametrize("settings", [
    {"k": 10_000, "detection": "fixed"},  # the first read is the whole input
    {"k": 10_000, "detection": "adaptive"},  # reads everything, then decodes
    {"k": 3, "detection": "adaptive", "chunk_ms": 5000},
])
def test_waiting_for_the_whole_input_equals_offline(model, speech, settings):
    offline = simulate(model, Offline(), segment(speech))
    rec = simulate(model, WaitKWords(**settings), segment(speech))
    assert rec.units == offline.units


@pytest.mark.parametrize(("k", "detection", "chunk_ms", "force_finish", "avoid_eos"), [
    (1, "fixed", 280, True, True),
    (2, "fixed", 200, True, False),
    (1, "fixed", 280, False, False),
    (1, "adaptive", 280, True, True),
    (2, "adaptive", 120, False, False),
])
def test_properties_on_tiny_models(model, speech, k, detection, chunk_ms, force_finish,
                                   avoid_eos):
    spy = Spy(model)
    policy = WaitKWords(k=k, detection=detection, chunk_ms=chunk_ms, force_finish=force_finish,
                        avoid_eos_while_reading=avoid_eos, maxlenratio=2.0)
    rec = simulate(spy, policy, segment(speech))
    reads = [ms for ms, _ in rec.trace]
    assert reads == sorted(reads) and reads[-1] <= rec.source_length
    on_grid = [ms for ms in reads if ms < rec.source_length]
    assert all(ms / chunk_ms == pytest.approx(round(ms / chunk_ms)) for ms in on_grid)
    assert rec.delays == sorted(rec.delays) and all(d <= rec.source_length for d in rec.delays)
    assert sum(n for _, n in rec.trace) == len(rec.units)
    ids = model.token_list
    final = [ids.index(p) for p in rec.units]
    assert all(final[: len(p)] == p for p in spy.prefixes)  # only ever extends what it wrote
    if detection == "fixed":  # never more words than W(t) − k + 1 while reading
        for ms, _, end in write_spans(rec):
            if ms < rec.source_length:
                assert count_words(model, final[:end]) <= fixed_word_count(ms, 280) - k + 1
