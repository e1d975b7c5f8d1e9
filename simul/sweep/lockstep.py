"""Several utterances decoded in lockstep, their equal-length prefixes encoded in one batch.

An offline model re-encodes the whole prefix read at every read, and on a CPU a small
encoder spends much of a call in per-operation overhead and in matrix products of a few
rows: one call on the same-length prefixes of eight utterances costs far less than eight
calls (``benchmarks/lockstep.py`` measures it). :class:`Lockstep` runs one decoding job
per utterance, each in its own thread, but one at a time: a job runs until it asks the
model to encode a prefix (or ends), then the next job runs. When every job waits, the
requests are grouped by prefix length, each group is encoded in one call
(:meth:`simul.models.adapter.Adapter.encode_batch`) and the jobs go on, in the same
order. The schedule depends only on what the jobs ask, so results are deterministic.
Everything else (decoder calls, policies) runs unbatched, inside each job.

**Units.** A batched product may round differently from one utterance's (≈ 1e-6 on the
encoder states), which can flip a rare near-tie between two units. The first request of
each group is encoded alone, so its output is exactly :meth:`encode`'s; the others come
from the batch. ``benchmarks/lockstep.py`` counts the records that differ from decoding
each utterance alone over whole splits.

**Computation-aware latency.** Each job keeps its own clock: the time it ran (its own
policy and decoder work, timed by the device's clock as :class:`simul.decoding.session.Session`
times it) plus, for each of its encodes, the time of encoding that prefix *alone*: the
first request of the group, encoded alone, is timed and that time is charged to every job
of the group. A job is therefore charged what one stream would spend, not its share of a
batch; the batch's saving shows only in the sweep's wall time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from simul.models import device as devices
from simul.models.adapter import Adapter, Delegate, Encoded


@dataclass
class _Lane:
    index: int
    job: Callable[[Any, Callable[[], float]], Any]
    state: str = "ready"  # ready → running → waiting | done
    request: np.ndarray | None = None
    answer: Encoded | None = None
    result: Any = None
    error: BaseException | None = None
    ran_s: float = 0.0  # time this job ran
    charged_s: float = 0.0  # single-stream time of its encodes
    resumed: float = 0.0
    wake: threading.Event = field(default_factory=threading.Event)


class _LaneModel(Delegate):
    """The model as one job sees it: :meth:`encode` waits for the lockstep's batch;
    every other member of the seam (:class:`simul.models.adapter.Delegate`) is the
    model's own."""

    def __init__(self, lockstep: Lockstep, lane: _Lane):
        super().__init__(lockstep.model)
        self._lockstep = lockstep
        self._lane = lane

    def encode(self, audio: np.ndarray) -> Encoded:
        return self._lockstep._wait_for_encode(self._lane, np.asarray(audio))


class Lockstep:
    """Run decoding jobs in lockstep over ``model`` (see the module doc).

    A job is ``job(model, clock)``: it decodes with ``model`` (the adapter, whose
    ``encode`` is batched across jobs) and times its decisions with ``clock`` (pass it to
    :class:`~simul.sweep.calls.SharedCalls` and :func:`~simul.decoding.simulate.simulate`).
    :meth:`run` returns the jobs' results in order, or raises the first job's error once
    every job has ended."""

    def __init__(self, model: Adapter, clock: Callable[[], float] | None = None):
        self.model = model
        self._clock = (devices.timing_clock(getattr(model, "device", devices.CPU))
                       if clock is None else clock)
        self._cond = threading.Condition()
        self.batches: list[int] = []  # size of each encode call made

    def run(self, jobs: Sequence[Callable[[Any, Callable[[], float]], Any]]) -> list[Any]:
        lanes = [_Lane(i, job) for i, job in enumerate(jobs)]
        threads = [threading.Thread(target=self._lane_main, args=(lane,), daemon=True,
                                    name=f"lockstep-{lane.index}") for lane in lanes]
        for t in threads:
            t.start()
        while True:
            for lane in lanes:  # every job that can run, one at a time, in order
                if lane.state == "ready":
                    self._hand_over(lane)
            waiting = [lane for lane in lanes if lane.state == "waiting"]
            if not waiting:
                break
            self._encode(waiting)
        for t in threads:
            t.join()
        for lane in lanes:
            if lane.error is not None:
                raise lane.error
        return [lane.result for lane in lanes]

    # ------------------------------------------------------------------ the scheduler
    def _hand_over(self, lane: _Lane) -> None:
        """Let ``lane`` run until it waits for an encode or ends."""
        with self._cond:
            lane.state = "running"
            lane.wake.set()
            while lane.state == "running":
                self._cond.wait()

    def _encode(self, waiting: list[_Lane]) -> None:
        groups: dict[int, list[_Lane]] = {}
        for lane in waiting:
            groups.setdefault(len(lane.request), []).append(lane)
        for group in groups.values():
            first, rest = group[0], group[1:]
            t0 = self._clock()
            first.answer = self.model.encode(first.request)
            alone_s = self._clock() - t0
            answers = self.model.encode_batch([lane.request for lane in rest]) if rest else []
            self.batches += [1] + ([len(rest)] if rest else [])
            for lane, answer in zip(rest, answers, strict=True):
                lane.answer = answer
            for lane in group:
                lane.charged_s += alone_s
                lane.request = None
                lane.state = "ready"

    # ------------------------------------------------------------------ inside a job
    def _lane_main(self, lane: _Lane) -> None:
        lane.wake.wait()
        lane.wake.clear()
        lane.resumed = self._clock()

        def clock() -> float:
            return lane.ran_s + (self._clock() - lane.resumed) + lane.charged_s

        try:
            lane.result = lane.job(_LaneModel(self, lane), clock)
        except BaseException as e:  # raised by run() once every job has ended
            lane.error = e
        with self._cond:
            lane.ran_s += self._clock() - lane.resumed
            lane.state = "done"
            self._cond.notify_all()

    def _wait_for_encode(self, lane: _Lane, audio: np.ndarray) -> Encoded:
        with self._cond:
            lane.ran_s += self._clock() - lane.resumed
            lane.request = audio
            lane.state = "waiting"
            self._cond.notify_all()
        lane.wake.wait()  # set by _hand_over once the batch is encoded
        lane.wake.clear()
        lane.resumed = self._clock()
        answer, lane.answer = lane.answer, None
        return answer
