"""Lockstep decoding: the schedule, the single-stream charges, and records as decoded alone."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from simul import sweep
from simul.corpus import load_list
from simul.models.adapters.espnet_st import Encoded
from simul.sweep.lockstep import Lockstep
from tests.test_mustc import PAIR, SPLIT, make_corpus
from tests.test_sweep import GRID, settings, spec
from tests.test_sweep import FakeClock as Clock


class FakeModel:
    """Encoding n samples alone costs n / 100 ms on the clock; a batch costs half that per
    prefix. Every call is logged."""

    device = "cpu"

    def __init__(self, clock: Clock):
        self.clock = clock
        self.calls: list[tuple[str, list[int]]] = []

    def encode(self, audio):
        self.calls.append(("alone", [len(audio)]))
        self.clock.ms += len(audio) / 100
        return Encoded(torch.full((1, 1), float(audio[0])), len(audio))

    def encode_batch(self, audios):
        self.calls.append(("batch", [len(a) for a in audios]))
        self.clock.ms += sum(len(a) for a in audios) / 200
        return [Encoded(torch.full((1, 1), float(a[0])), len(a)) for a in audios]

    def step(self, enc, state=None, tokens=None):  # a decoder call of the job's own: costs
        self.clock.ms += enc  # ``enc`` ms
        return enc


def job(value: float, lengths: list[int], own_ms: float = 1.0, log: list | None = None):
    """Encode prefixes of these lengths of a signal of ``value``s, with own work between."""
    def run(model, clock):
        out = []
        for n in lengths:
            model.step(own_ms)
            t0 = clock()
            enc = model.encode(np.full(n, value, dtype=np.float32))
            out.append((float(enc.states[0, 0]), enc.n_samples, 1000 * (clock() - t0)))
            if log is not None:
                log.append((value, n))
        return out
    return run


def test_equal_lengths_are_batched_and_each_job_gets_its_own_answer():
    clock = Clock()
    model = FakeModel(clock)
    results = Lockstep(model, clock).run([job(1.0, [400, 800]), job(2.0, [400, 800]),
                                          job(3.0, [400, 600])])
    # first round: the three 400-sample prefixes (one alone, two batched); second: 800 for
    # jobs 0 and 1, 600 for job 2 alone
    assert model.calls == [("alone", [400]), ("batch", [400, 400]),
                           ("alone", [800]), ("batch", [800]), ("alone", [600])]
    assert [[v for v, _, _ in r] for r in results] == [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]
    assert [[n for _, n, _ in r] for r in results] == [[400, 800], [400, 800], [400, 600]]


def test_each_job_is_charged_encoding_its_prefix_alone():
    clock = Clock()
    results = Lockstep(FakeModel(clock), clock).run([job(1.0, [400, 800]),
                                                     job(2.0, [400, 800])])
    # alone: 400 samples → 4 ms, 800 → 8 ms, for the batched job too (its batch cost less)
    for r in results:
        assert [ms for _, _, ms in r] == pytest.approx([4.0, 8.0])


def test_a_jobs_clock_counts_its_own_work_not_the_others():
    clock = Clock()
    seen = {}

    def timed(value, own_ms):
        inner = job(value, [400], own_ms)

        def run(model, c):
            t0 = c()
            out = inner(model, c)
            seen[value] = 1000 * (c() - t0)
            return out
        return run

    Lockstep(FakeModel(clock), clock).run([timed(1.0, 5.0), timed(2.0, 50.0)])
    assert seen == pytest.approx({1.0: 5.0 + 4.0, 2.0: 50.0 + 4.0})


def test_the_schedule_is_the_jobs_order():
    log: list = []
    clock = Clock()
    Lockstep(FakeModel(clock), clock).run([job(v, [400, 800, 1200], log=log)
                                           for v in (1.0, 2.0, 3.0)])
    assert log == [(v, n) for n in (400, 800, 1200) for v in (1.0, 2.0, 3.0)]


def test_a_failing_job_fails_the_run_after_the_others_end():
    clock = Clock()
    done = []

    def bad(model, c):
        model.encode(np.zeros(400, dtype=np.float32))
        raise RuntimeError("policy broke")

    def good(model, c):
        out = job(1.0, [400, 800])(model, c)
        done.append(True)
        return out

    with pytest.raises(RuntimeError, match="policy broke"):
        Lockstep(FakeModel(clock), clock).run([bad, good])
    assert done == [True]


# --------------------------------------------------------------------------- real models
@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    make_corpus(root / PAIR)
    return root


def comparable(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in ("elapsed", "lockstep")}


def test_lockstep_records_equal_decoding_each_utterance_alone(tiny_model_dir, corpus):
    ref = sweep.resolve_model(str(tiny_model_dir))
    segments = load_list(corpus, PAIR, SPLIT)
    together = sweep.decode_lockstep(ref, settings(), segments)
    for seg, (records, seconds) in zip(segments, together, strict=True):
        alone = sweep.decode_utterance(ref, settings(), seg)
        assert [comparable(r) for r in records] == [comparable(r) for r in alone]
        assert {r["lockstep"] for r in records} == {len(segments)}
        assert len(seconds) == len(records) and all(s > 0 for s in seconds)
        for r in records:  # computation-aware: elapsed ≥ delays (checked by the reader)
            assert all(e >= d for e, d in zip(r["elapsed"], r["delays"], strict=True))


def test_sweep_with_lockstep_gives_the_records_of_a_sweep_without(tiny_model_dir, corpus,
                                                                  tmp_path):
    tables = {}
    for n in (1, 3):
        out = tmp_path / f"lockstep{n}"
        tables[n] = sweep.run(spec(tiny_model_dir, corpus, out, GRID[:2], lockstep=n,
                                   store=False), workers=1, progress=False)
    one, three = tables[1], tables[3]
    assert one.BLEU.tolist() == three.BLEU.tolist() and one.AL.tolist() == three.AL.tolist()
    for a, b in zip(one.records, three.records, strict=True):
        ra = [json.loads(line) for line in Path(a).read_text().splitlines()]
        rb = [json.loads(line) for line in Path(b).read_text().splitlines()]
        assert [comparable(r) for r in ra] == [comparable(r) for r in rb]
        assert {r["lockstep"] for r in ra} == {1}
        assert sorted({r["lockstep"] for r in rb}) != [1]
    journal = tmp_path / "lockstep3" / "journal" / Path(tiny_model_dir).name / f"{SPLIT}.jsonl"
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    assert sorted(line["position"] for line in lines) == list(range(len(lines)))


@pytest.mark.parametrize("value", [0, -2, True, "4"])
def test_bad_lockstep_is_refused(value):
    with pytest.raises(sweep.SweepError, match="field 'lockstep'"):
        sweep.Spec.from_dict({"models": ["m"], "pair": "en-es", "output": "o",
                              "policies": [{"policy": "offline"}], "lockstep": value})
