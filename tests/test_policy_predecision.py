"""Wait-k with a pre-decision module (Ma et al. 2020): trigger times and schedules worked by
hand on a scripted model, then the policy on tiny random models (Transformer and RNN)."""

import bisect

import pytest

from simul.corpus import Alignment, Word
from simul.decoding.simulate import simulate
from simul.models.adapters.espnet_st import ESPnetST
from simul.policies import make, registry
from simul.policies.base import View
from simul.policies.offline import Offline
from simul.policies.predecision import Predecision
from tests.test_policy_word_detection import Scripted, Spy, segment, writes

UNITS = ["\u2581a", "b", "\u2581c", "\u2581d", "e", "f", "\u2581g", "h"]

# hand-made oracle alignment of a 1.2 s segment: four words, eight phonemes (a pause
# between 150 and 200 ms has no phoneme; "b" and "c" share the boundary at 420 ms)
ALIGNMENT = Alignment(
    words=(Word("a", 50, 150), Word("b", 200, 420), Word("c", 420, 700),
           Word("d", 720, 990)),
    phonemes=(Word("ə", 50, 100), Word("b", 200, 260), Word("i", 260, 420),
              Word("s", 420, 560), Word("i", 560, 700), Word("d", 720, 800),
              Word("i", 800, 990), Word("x", 990, 1250)),  # past the end: clipped
)


def view_at(read_ms: float, alignment=ALIGNMENT) -> View:
    return View(read_ms, False, [], None, 0, {}, alignment)


# ------------------------------------------------------------------ triggers by hand
@pytest.mark.parametrize(("trigger", "step_ms", "source_ms", "expected"), [
    ("fixed", 200, 1200, [200, 400, 600, 800, 1000]),  # the end itself is no trigger
    ("fixed", 280, 1200, [280, 560, 840, 1120]),
    ("fixed", 440, 1000, [440, 880]),
    ("fixed", 120, 100, []),
    ("word", 200, 1200, [150, 420, 700, 990]),
    ("phoneme", 200, 1200, [100, 260, 420, 560, 700, 800, 990]),
    ("word", 200, 600, [150, 420]),
])
def test_trigger_times(trigger, step_ms, source_ms, expected):
    policy = Predecision(trigger=trigger, step_ms=step_ms)
    assert policy.trigger_times(view_at(0), before_ms=source_ms) == expected
    # what the policy itself sees: trigger i at trigger_time(i), passed once read
    assert [policy.trigger_time(view_at(0), i) for i in range(len(expected))] == expected
    for i, t in enumerate(expected):
        assert policy.triggers_passed(view_at(t)) == i + 1
        assert policy.triggers_passed(view_at(t - 1)) == i


def test_oracle_triggers_run_out():
    policy = Predecision(trigger="word")
    assert policy.trigger_time(view_at(0), 3) == 990
    assert policy.trigger_time(view_at(0), 4) == float("inf")  # then read to the end


@pytest.mark.parametrize("trigger", ["word", "phoneme"])
def test_flexible_triggers_need_an_alignment(trigger, speech):
    with pytest.raises(ValueError, match=f"trigger='{trigger}'.*alignment"):
        Predecision(trigger=trigger).trigger_times(view_at(0, alignment=None), 1200)
    with pytest.raises(ValueError, match="alignment"):
        simulate(Scripted(UNITS), Predecision(trigger=trigger), segment(speech))


@pytest.mark.parametrize(("settings", "expected"), [
    ({"trigger": "fixed", "step_ms": 280, "k": 3}, 840),
    ({"trigger": "fixed", "step_ms": 120, "k": 10}, 1200),
    ({"trigger": "fixed", "step_ms": 440, "k": 4}, 1760),  # past a short source: its end
    ({"trigger": "word", "k": 3}, 0),  # the alignment is read at the first decision
])
def test_first_read(settings, expected):
    assert Predecision(**settings).first_read_ms() == expected


# ------------------------------------------------------------------ schedules by hand
def test_fixed_triggers_schedule_by_hand():
    # Δt = 200 ms, wait-2: unit i at trigger i + 1 (400, 600, 800, 1000 ms), the rest at
    # the end of the 1.2 s input
    model = Scripted(UNITS)
    rec = simulate(model, Predecision(trigger="fixed", step_ms=200, k=2), segment(19200))
    assert [ms for ms, _ in rec.trace] == [400, 400, 600, 600, 800, 800, 1000, 1000,
                                           1200, 1200]
    assert writes(rec) == [(400, UNITS[:1]), (600, UNITS[1:2]), (800, UNITS[2:3]),
                           (1000, UNITS[3:4]), (1200, UNITS[4:])]


def test_word_triggers_schedule_by_hand():
    # word ends 150, 420, 700, 990 ms, wait-2: an empty first read, then reads at exactly
    # the word ends from the 2nd on
    model = Scripted(UNITS)
    rec = simulate(model, Predecision(trigger="word", k=2), segment(19200, ALIGNMENT))
    assert [ms for ms, _ in rec.trace] == [0, 420, 420, 700, 700, 990, 990, 1200, 1200]
    assert writes(rec) == [(420, UNITS[:1]), (700, UNITS[1:2]), (990, UNITS[2:3]),
                           (1200, UNITS[3:])]


def test_phoneme_triggers_schedule_by_hand():
    # phoneme ends 100, 260, 420, 560, 700, 800, 990 ms, wait-3: from 420 ms on
    model = Scripted(UNITS)
    rec = simulate(model, Predecision(trigger="phoneme", k=3), segment(19200, ALIGNMENT))
    assert [ms for ms, _ in rec.trace] == [0, 420, 420, 560, 560, 700, 700, 800, 800,
                                           990, 990, 1200, 1200]
    assert [ms for ms, _ in writes(rec)] == [420, 560, 700, 800, 990, 1200]
    assert all(len(units) == 1 for _, units in writes(rec)[:-1])


def test_fewer_triggers_than_k_decodes_offline():
    model = Scripted(UNITS)
    rec = simulate(model, Predecision(trigger="word", k=5), segment(19200, ALIGNMENT))
    assert writes(rec) == [(1200, UNITS)]


@pytest.mark.parametrize(("force_finish", "expected"), [
    (False, [(200, UNITS[:1]), (400, UNITS[1:2]), (600, [])]),  # </s> ends it at 600 ms
    (True, [(200, UNITS[:1]), (400, UNITS[1:2]), (1200, [])]),  # </s> dropped, read on
])
def test_eos_while_reading(force_finish, expected):
    model = Scripted(UNITS[:2])
    policy = Predecision(trigger="fixed", step_ms=200, k=1, force_finish=force_finish)
    rec = simulate(model, policy, segment(19200))
    assert writes(rec) == expected


@pytest.mark.parametrize("settings", [{"trigger": "frame"}, {"step_ms": 0}, {"k": 0}])
def test_bad_settings_are_refused(settings):
    with pytest.raises(ValueError, match="predecision"):
        Predecision(**settings)


def test_registered_and_made_from_strings():
    assert registry()["predecision"] is Predecision
    policy = make("predecision", {"trigger": "word", "step_ms": "360", "k": "4"})
    assert (policy.trigger, policy.step_ms, policy.k) == ("word", 360.0, 4)


# ------------------------------------------------------------------ tiny random models
@pytest.fixture(scope="module")
def model(tiny_model_dir):
    return ESPnetST.from_dir(tiny_model_dir)


@pytest.mark.parametrize("settings", [
    {"trigger": "fixed", "k": 10_000},  # the first read is the whole input
    {"trigger": "word", "k": 5},  # 4 word ends: never enough triggers
    {"trigger": "phoneme", "k": 9, "reuse_state": False},
])
def test_waiting_for_the_whole_input_equals_offline(model, speech, settings):
    offline = simulate(model, Offline(), segment(speech))
    rec = simulate(model, Predecision(**settings), segment(speech, ALIGNMENT))
    assert rec.units == offline.units


@pytest.mark.parametrize(("trigger", "step_ms", "k", "reuse_state"), [
    ("fixed", 200, 2, True),
    ("fixed", 120, 1, False),
    ("word", 280, 1, True),
    ("phoneme", 280, 2, False),
])
def test_properties_on_tiny_models(model, speech, trigger, step_ms, k, reuse_state):
    spy = Spy(model)
    policy = Predecision(trigger=trigger, step_ms=step_ms, k=k, reuse_state=reuse_state,
                         maxlenratio=2.0)
    rec = simulate(spy, policy, segment(speech, ALIGNMENT))
    times = policy.trigger_times(view_at(0), rec.source_length)
    reads = [ms for ms, _ in rec.trace]
    assert reads == sorted(reads)
    # reads happen only at triggers (or at the very start / the end of the input)
    assert set(reads) <= {*times, rec.source_length, policy.first_read_ms()}
    assert rec.delays == sorted(rec.delays) and all(d <= rec.source_length for d in rec.delays)
    assert sum(n for _, n in rec.trace) == len(rec.units)
    final = [model.token_list.index(p) for p in rec.units]
    assert all(final[: len(p)] == p for p in spy.prefixes)  # only ever extends what it wrote
    written = 0
    for ms, units in writes(rec):  # wait-k on triggers: at most m − k + 1 units at trigger m
        written += len(units)
        if ms < rec.source_length:
            assert written <= bisect.bisect_right(times, ms) - k + 1
