"""H20's meta-learning tasks on the embedded corpus: the scarce target's size, talks kept
apart, examples read as the corpus reader reads them, batches drawn from (seed, step)."""

import numpy as np
import pytest
import torch

from simul.corpus import DEFAULT_ROOT, load_list, mustc
from simul.models.training import meta_tasks as mt

pytestmark = pytest.mark.corpus


def test_target_size_by_hand():
    # 4 · (12000 − t) / t = 12.7  →  t = 48000 / 16.7 = 2874.25
    assert mt.target_size(12000) == 2874
    assert mt.target_size(167, n_sources=4, ratio=12.7) == 40


@pytest.fixture(scope="module")
def segments():
    """en-de dev (what `make test` builds: train is spoken when training needs it)."""
    if not (DEFAULT_ROOT / "manifest.json").is_file():
        pytest.fail(f"no corpus at {DEFAULT_ROOT}: run `make corpus` (make test does)")
    return load_list(DEFAULT_ROOT, "en-de", "dev", with_audio=False)


def test_split_keeps_talks_apart(segments):
    # 4 · (500 − t) / t = 12.7  →  t = 2000 / 16.7 = 119.8
    assert len(segments) == 500 and mt.target_size(500) == 120
    target, rest = mt.split_talks(segments, 120, seed=0)
    assert len(target) + len(rest) == len(segments)
    assert 120 <= len(target) < 120 + 40  # whole talks (40 segments at most) until 120
    assert not {s.talk for s in target} & {s.talk for s in rest}
    again, _ = mt.split_talks(segments, 120, seed=0)
    other, _ = mt.split_talks(segments, 120, seed=1)
    assert [s.id for s in again] == [s.id for s in target]
    assert [s.id for s in other] != [s.id for s in target]


def _encode(text):
    return [ord(c) % 50 + 3 for c in text]


def test_examples_hold_what_the_corpus_reader_reads(segments):
    with_audio = list(mustc.load(DEFAULT_ROOT, "en-de", "dev", limit=3))  # checked above
    segs = list(mustc.load(DEFAULT_ROOT, "en-de", "dev", limit=3, with_audio=False))
    st = mt.make_task("st_en-de", segs, _encode)
    batch = mt.make_batch(st, [2, 0], start_unit=7)
    assert batch.modality == "speech" and batch.start == 7
    for row, seg in zip((0, 1), (with_audio[2], with_audio[0]), strict=True):
        n = int(batch.input_lengths[row])
        np.testing.assert_array_equal(batch.inputs[row, :n].numpy(), seg.audio)
        got = batch.targets[row, : int(batch.target_lengths[row])].tolist()
        assert got == _encode(seg.target)
    asr = mt.make_task("asr_en", segs, _encode)
    assert list(asr.examples[0].target) == _encode(segs[0].source)
    text = mt.make_batch(mt.make_task("mt_en-de", segs, _encode), [1], start_unit=0)
    assert text.modality == "text"
    assert text.inputs[0].tolist() == _encode(segs[1].source)
    with pytest.raises(ValueError, match="task"):
        mt.make_task("tts_en", segs, _encode)


def test_sampler_draws_from_seed_and_step_alone(segments):
    tasks = [mt.make_task(name, segments[:40], _encode)
             for name in ("asr_en", "mt_en-de", "st_en-es")]
    starts = {"en": 1, "de": 2, "es": 3}
    sampler = mt.Sampler(tasks, starts, pairs=True, batch={"speech": 3, "text": 5})
    a, b = sampler(0, 17), sampler(0, 17)
    assert a.task == b.task
    assert torch.equal(a.train.targets, b.train.targets)
    assert torch.equal(a.test.inputs, b.test.inputs)
    first = {tuple(r) for r in a.train.targets.tolist()}
    second = {tuple(r) for r in a.test.targets.tolist()}
    assert not first & second  # D and D′ are disjoint (distinct texts here)
    counts = {t.name: 0 for t in tasks}
    for n in range(150):
        counts[sampler(0, n).task] += 1
    # uniform over 3 tasks: 50 each; 4 standard deviations (√(150·1/3·2/3) ≈ 5.8)
    assert all(abs(c - 50) < 23 for c in counts.values())
    one = mt.Sampler(tasks, starts, pairs=False)(0, 5)
    assert one.test is None


def test_hearing_leaves_which_examples_a_step_reads_as_they_were(segments):
    tasks = [mt.make_task(name, segments[:40], _encode) for name in ("asr_en", "mt_en-de")]
    starts = {"en": 1, "de": 2}
    heard = []

    def hear(audio, key, seed):
        heard.append((key, seed))
        return np.full_like(audio, 0.5)

    plain = mt.Sampler(tasks, starts, pairs=True, batch={"speech": 3, "text": 5})
    loud = mt.Sampler(tasks, starts, pairs=True, batch={"speech": 3, "text": 5}, hear=hear)
    speech_steps = 0
    for n in range(8):
        a, b = plain(0, n), loud(0, n)
        assert a.task == b.task
        assert torch.equal(a.train.targets, b.train.targets)
        assert torch.equal(a.test.targets, b.test.targets)
        if a.task == "asr_en":
            speech_steps += 1
            for batch in (b.train, b.test):
                for row, n_samples in enumerate(batch.input_lengths.tolist()):
                    assert torch.all(batch.inputs[row, :n_samples] == 0.5)
        else:
            assert torch.equal(a.train.inputs, b.train.inputs)
    assert speech_steps and len(heard) == 6 * speech_steps  # D and D′: 3 examples each
    assert all(key.endswith(".wav@" + key.rsplit("@", 1)[1]) for key, _ in heard)
    first = list(heard)
    heard.clear()
    for n in range(8):
        loud(0, n)
    assert heard == first  # the same seeds on every read of a step (a resumed run's too)
