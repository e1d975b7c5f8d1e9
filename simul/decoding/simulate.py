"""The simulator: one utterance, one policy → one :class:`~simul.records.Record`.

It feeds the segment's audio to a streaming session (:class:`simul.decoding.session.Session`,
simul's
one decoding path) and ends the stream: the policy reads the source in the steps it asks
for, with no look-ahead (the encoder sees the features of the prefix read, computed on that
prefix alone) and without knowing where the source ends. A unit's delay is the source read
(ms) when it was written; its elapsed time adds all computation spent on the utterance so
far (SimulEval's computation-aware definition). Word delays come from unit delays by
:func:`simul.metrics.units.word_delays` (a word is charged when it is complete); the record
keeps the model's unit type (``Record.unit_type``) so that readers split its units into
words the same way. The record's ``source_length`` is the audio's (samples / 16 kHz). A
policy that runs on text (``runs_on = "mt"``) gets the segment's transcript a word at a time
instead (:func:`simul.decoding.text.simulate_text`: delays in source words).
Decisions are timed by ``clock``, by default the model's device's
(:func:`simul.models.device.timing_clock`: ``time.perf_counter`` on the CPU).
"""

from __future__ import annotations

from collections.abc import Callable

from simul.corpus import Segment
from simul.decoding.session import PolicyError, Session
from simul.decoding.text import simulate_text
from simul.models.adapter import Adapter
from simul.policies.base import Policy
from simul.records import Record

__all__ = ["PolicyError", "simulate"]


def simulate(model: Adapter, policy: Policy, segment: Segment, *,
             model_name: str = "", max_steps: int = 100_000,
             clock: Callable[[], float] | None = None) -> Record:
    """Decode ``segment`` with ``policy`` on ``model`` and return its record.

    ``model`` is the model adapter, or anything with its calls: a sweep passes a
    :class:`simul.sweep.calls.SharedCalls` standing in for it, which shares computations
    between the settings of one utterance (this module does not import the sweep, a layer
    above it). ``clock`` times the decisions (default: the model's device's clock)."""
    if policy.runs_on == "mt":  # a text source: the transcript, a word at a time
        return simulate_text(model, policy, segment, model_name=model_name,
                             max_steps=max_steps, clock=clock)
    session = Session(model, policy, alignment=segment.alignment, max_steps=max_steps,
                      clock=clock)
    session.finish(segment.audio)
    return session.record(index=segment.index, reference=segment.target,
                          segment_id=segment.id, source=[str(segment.wav), segment.id],
                          source_text=segment.source, model_name=model_name)
