"""The simulator: one utterance, one policy → one :class:`~simul.records.Record`.

It feeds the source in the steps the policy asks for, with no look-ahead (the encoder sees
the features of the prefix read, computed on that prefix alone), collects the writes, and
times every step's computation — encoding, the policy's decision and the model calls it
makes, READ steps included — with a monotonic clock. A unit's delay is the source read
(ms) when it was written; its elapsed time adds all computation spent on the utterance so
far (SimulEval's computation-aware definition); with :class:`~simul.shared.SharedCalls` as
the model, results remembered from another setting are charged what they cost when first
computed. Word delays come from unit delays by
:func:`simul.metrics.units.word_delays` (a word is charged when it is complete); the record
keeps the model's unit type (``Record.unit_type``) so that readers split its units into
words the same way.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from simul.corpus import Segment
from simul.metrics.units import word_delays
from simul.models.espnet_st import SAMPLE_RATE, ESPnetST
from simul.policies.base import Policy, Read, View, Write
from simul.records import Record
from simul.shared import SharedCalls


class PolicyError(RuntimeError):
    """A policy broke the protocol (read backwards, read past the end, never finished)."""


def simulate(model: ESPnetST | SharedCalls, policy: Policy, segment: Segment, *,
             model_name: str = "", max_steps: int = 100_000,
             clock: Callable[[], float] = time.perf_counter) -> Record:
    source_ms = float(segment.duration_ms)
    audio = segment.audio
    read_ms = max(0.0, min(float(policy.first_read_ms(source_ms)), source_ms))
    compute_ms = 0.0
    units: list[int] = []
    unit_delays: list[float] = []
    unit_elapsed: list[float] = []
    trace: list[tuple[float, int]] = [(read_ms, 0)]
    memo: dict = {}
    # results another setting computed (simul.shared) are charged what they cost then
    settle = getattr(model, "settle", None) or (lambda: 0.0)
    encoded, encoded_ms = None, None
    for step in range(max_steps):
        t0 = clock()
        if encoded_ms != read_ms:
            encoded = model.encode(audio[: int(round(read_ms * SAMPLE_RATE / 1000))])
            encoded_ms = read_ms
        view = View(read_ms, source_ms, list(units), encoded, step, memo, segment.alignment)
        action = policy.decide(model, view)
        compute_ms += 1000.0 * (clock() - t0) + settle()
        if isinstance(action, Write):
            units += action.units
            unit_delays += [read_ms] * len(action.units)
            unit_elapsed += [read_ms + compute_ms] * len(action.units)
            trace.append((read_ms, len(action.units)))
            if action.finished:
                break
        elif isinstance(action, Read):
            if read_ms >= source_ms:
                raise PolicyError(f"{policy.name}: asked to read past the end ({source_ms} ms)")
            if action.until_ms <= read_ms:
                raise PolicyError(f"{policy.name}: Read({action.until_ms}) does not move "
                                  f"forward from {read_ms} ms")
            read_ms = min(float(action.until_ms), source_ms)
            trace.append((read_ms, 0))
        else:
            raise PolicyError(f"{policy.name}: decide() returned {action!r}")
    else:
        raise PolicyError(f"{policy.name}: no finished Write after {max_steps} steps")

    pieces = [model.token_list[u] for u in units]
    words, delays = word_delays(pieces, unit_delays, model.unit_type, end_delay=read_ms)
    _, elapsed = word_delays(pieces, unit_elapsed, model.unit_type, end_delay=read_ms + compute_ms)
    return Record(
        index=segment.index, prediction=" ".join(words), delays=delays, elapsed=elapsed,
        prediction_length=len(words), reference=segment.target, source_length=source_ms,
        source=[str(segment.wav), segment.id], units=pieces, unit_type=model.unit_type,
        trace=trace, model=model_name, policy=policy.name, settings=policy.settings(),
        segment_id=segment.id, source_text=segment.source,
    )
