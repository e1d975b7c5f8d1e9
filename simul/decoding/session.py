"""Streaming sessions: one (model, policy) pair fed audio as it comes — simul's one decoding
path (:func:`simul.decoding.simulate.simulate` feeds a whole segment through a session).

A :class:`Session` takes chunks of 16 kHz mono audio of any size (:meth:`Session.push`) and
is closed by :meth:`Session.finish`. It keeps the policy's pending read: a decision is made
once the audio reaches the time the policy asked to read to, at exactly that time, however
the audio was chunked. When the source ends before that time (``finish``, or a chunk pushed
with ``last=True``), the read stops at the end and the policy is told the source has
finished (:attr:`simul.policies.base.View.source_finished`); a policy never learns the total
length in advance. Feeding a segment in 10 ms chunks, in 1 s chunks or whole gives the same
decisions, units, delays and words: ``tests/test_stream.py`` checks it for every policy.

So that a stream gives the same record as the whole segment, pass the last audio with the
end (``finish(chunk)`` or ``push(chunk, last=True)``): a policy that asked to read exactly
to where the audio stops decides there as if more were coming when the end is told later.

Each call returns an :class:`Update`: the units newly written, the words now known to be
complete (a word is complete when the next unit begins another word or the output ends,
:mod:`simul.metrics.units`) with the source time at which they were written, and whether
the translation has finished. :meth:`Session.record` gives the
:class:`~simul.records.Record` of the whole stream.

Timing. Every decision is timed with a monotonic clock (encoding the prefix, the policy
and the model calls it makes); a unit's elapsed time is its delay plus all computation
spent on the stream so far (SimulEval's computation-aware definition). With
:class:`~simul.sweep.calls.SharedCalls` as the model, results remembered from another setting
are charged what they cost when first computed. The clock is the model's device's
(:func:`simul.models.device.timing_clock`): ``time.perf_counter`` itself on the CPU; on a
GPU it first waits for the kernels the decision queued (``torch.cuda.synchronize``), which
CUDA runs asynchronously — that GPU path has not been run on a GPU.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simul.metrics.units import complete_words, word_delays
from simul.models import device as devices
from simul.models.adapter import SAMPLE_RATE, Adapter
from simul.policies.base import Policy, Read, View, Write
from simul.records import Record


class PolicyError(RuntimeError):
    """A policy broke the protocol (read backwards, read past the end, never finished)."""


class StreamError(ValueError):
    """Bad input to a session: a chunk of the wrong shape or rate, use after finish, an
    empty stream. The session is left as it was before the call."""


@dataclass(frozen=True)
class Word:
    """An output word, complete, with the source read (ms) when it was written and that
    plus the computation spent so far (``elapsed_ms``)."""

    text: str
    delay_ms: float
    elapsed_ms: float


@dataclass(frozen=True)
class Update:
    """What one call to a session has newly written."""

    units: tuple[str, ...]  # units (pieces) written by this call, in order
    words: tuple[Word, ...]  # words newly known to be complete
    finished: bool  # the translation is complete; the session takes no more audio
    read_ms: float  # source read by the policy after this call

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)


def _as_chunk(chunk, sample_rate: int | None) -> np.ndarray:
    """A float32 1-D array from ``chunk``, or a StreamError that says what is wrong."""
    if sample_rate is not None and sample_rate != SAMPLE_RATE:
        raise StreamError(f"chunk at {sample_rate} Hz; a session takes {SAMPLE_RATE} Hz audio "
                          f"(resample it first, e.g. soxr.resample(x, {sample_rate}, "
                          f"{SAMPLE_RATE}))")
    array = np.asarray(chunk)
    if array.ndim == 2 and 1 in array.shape:
        array = array.reshape(-1)  # (n, 1) or (1, n): one channel
    if array.ndim != 1:
        raise StreamError(f"chunk of shape {array.shape}; a session takes mono audio, a 1-D "
                          f"array of samples (mix the channels down first)")
    if array.size and not np.issubdtype(array.dtype, np.number):
        raise StreamError(f"chunk of dtype {array.dtype}; expected audio samples")
    if np.issubdtype(array.dtype, np.integer):
        raise StreamError(f"chunk of integer samples ({array.dtype}); give float samples in "
                          f"[-1, 1] (e.g. x / 32768 for int16)")
    return array.astype(np.float32, copy=False)


_KINDS = {"st": "an end-to-end speech-translation model",
          "cascade": "a cascade of an ASR and an MT model (simul.models.adapters.cascade)",
          "mt": "a text MT model (the second half of a cascade)"}
"""What each kind of model (``model.kind``) and of policy (``Policy.runs_on``) is, in words."""


def check_fit(model: Adapter, policy: Policy) -> list[str]:
    """Refuse, in one line (``ValueError``), a policy that cannot decode ``model`` as it was
    asked: another kind of model (:attr:`Policy.runs_on`), a decoder the policy needs and
    the model lacks (:attr:`Policy.needs_decoder`), a policy the model does not serve (an
    MMA model: ``model.serves``, and policies written for its decoder) or settings that do
    not apply to it (:meth:`Policy.check_model`). Returns the notes a user should read (a
    setting the model was not trained for, decoded on purpose): ``simul decode`` and
    ``simul stream`` print them."""
    kind = getattr(model, "kind", "st")  # test doubles without one stand for ST models
    if kind != policy.runs_on:
        raise ValueError(f"policy {policy.name} runs on {_KINDS.get(policy.runs_on)}; "
                         f"this model is {_KINDS.get(kind, kind)}")
    needs = policy.needs_decoder
    if needs and getattr(model, "decoder_name", "") != needs:
        raise ValueError(f"policy {policy.name} decodes models trained with a {needs} "
                         f"decoder; this model's decoder is "
                         f"{getattr(model, 'decoder_name', '') or 'another one'}")
    serves = getattr(model, "serves", None)  # {policy: what it does with the model}
    # a policy written for the model's decoder (needs_decoder: one's own) is served too
    if serves is not None and policy.name not in serves and not needs:
        name = Path(str(getattr(model, "config_path", "model"))).parent.name or "this model"
        ways = " or ".join(f"{p} ({what})" for p, what in serves.items())
        raise ValueError(f"policy {policy.name} does not decode {name}, a model with "
                         f"{getattr(model, 'decoder_name', 'its own')} decoder: {ways}")
    return list(policy.check_model(model))


class Session:
    """A simultaneous translation of one audio stream by ``model`` under ``policy``.

    ``alignment`` gives oracle word/phoneme times to the policies that use them (the mini
    corpus' segments carry one). ``max_steps`` bounds the decisions of one stream.
    ``clock`` times the decisions; by default the model's device's
    (:func:`simul.models.device.timing_clock`: ``time.perf_counter`` on the CPU).
    """

    def __init__(self, model: Adapter, policy: Policy, *, alignment=None, max_steps: int = 100_000,
                 clock: Callable[[], float] | None = None):
        self.model, self.policy, self.alignment = model, policy, alignment
        self.device = getattr(model, "device", devices.CPU)
        self.max_steps = max_steps
        self.clock = devices.timing_clock(self.device) if clock is None else clock
        self._audio = np.zeros(0, np.float32)  # the audio received; grows by doubling
        self._samples = 0
        self._ended = False
        self.finished = False
        check_fit(model, policy)
        target = float(policy.first_read_ms())
        if math.isnan(target):
            raise PolicyError(f"{policy.name}: first_read_ms() is NaN")
        self._target: float | None = max(0.0, target)  # the read the policy waits for
        self.read_ms = 0.0
        self.compute_ms = 0.0
        self.step = 0
        self._memo: dict = {}
        self._encoded, self._encoded_ms = None, None
        self.unit_ids: list[int] = []
        self.unit_delays: list[float] = []
        self.unit_elapsed: list[float] = []
        self.trace: list[tuple[float, int]] = []
        self._words_out = 0  # complete words already returned
        # results another setting computed (simul.sweep.calls) are charged what they cost then
        self._settle = getattr(model, "settle", None) or (lambda: 0.0)

    # ------------------------------------------------------------------ input
    @property
    def received_ms(self) -> float:
        """Audio received so far (ms)."""
        return 1000.0 * self._samples / SAMPLE_RATE

    @property
    def audio(self) -> np.ndarray:
        """The audio received so far (a view; do not modify)."""
        return self._audio[: self._samples]

    def push(self, chunk, *, sample_rate: int | None = None, last: bool = False) -> Update:
        """Add ``chunk`` (16 kHz mono float samples; any length, also empty) and decide as
        far as the audio allows. ``last``: the stream ends with this chunk. Chunks are
        copied, except a whole stream given at once (kept, do not modify it). Audio pushed
        after the translation has finished (a policy may stop before the end) is kept for
        the record but decides nothing."""
        if self._ended:
            raise StreamError("this session has finished; start a new Session for another "
                              "stream")
        array = _as_chunk(chunk, sample_rate)
        if last and self._samples + array.size == 0:
            raise StreamError("empty stream: no audio was pushed before the end")
        if self._samples == 0 and last:
            # a whole stream in one chunk is kept as given, not copied: a segment stays the
            # same array, by which SharedCalls recognises the prefixes other settings encoded
            self._audio = array
        elif array.size:
            if self._samples + array.size > self._audio.size:
                grown = np.zeros(max(2 * self._audio.size, self._samples + array.size),
                                 np.float32)
                grown[: self._samples] = self._audio[: self._samples]
                self._audio = grown
            self._audio[self._samples : self._samples + array.size] = array
        self._samples += array.size
        self._ended = last
        return self._advance()

    def finish(self, chunk=None, *, sample_rate: int | None = None) -> Update:
        """End the stream (with a last ``chunk``, if given) and decide to the end of the
        translation."""
        return self.push(np.zeros(0, np.float32) if chunk is None else chunk,
                         sample_rate=sample_rate, last=True)

    # ------------------------------------------------------------------ decisions
    def _advance(self) -> Update:
        written_before = len(self.unit_ids)
        while not self.finished and self._target is not None:
            received = self.received_ms
            if self._target > received and not self._ended:
                break  # wait for more audio
            self.read_ms = min(self._target, received)
            self._target = None
            self.trace.append((self.read_ms, 0))
            self._decide_here()
        return self._update(written_before)

    def _decide_here(self) -> None:
        """Decide at ``read_ms`` until the policy asks to read further (or finishes)."""
        finished_source = self._ended and self.read_ms >= self.received_ms
        while True:
            if self.step >= self.max_steps:
                raise PolicyError(f"{self.policy.name}: no finished Write after "
                                  f"{self.max_steps} steps")
            t0 = self.clock()
            if self._encoded_ms != self.read_ms:
                self._encoded = self._encode_read()
                self._encoded_ms = self.read_ms
            view = View(self.read_ms, finished_source, list(self.unit_ids), self._encoded,
                        self.step, self._memo, self.alignment)
            action = self.policy.decide(self.model, view)
            self.compute_ms += 1000.0 * (self.clock() - t0) + self._settle()
            self.step += 1
            if isinstance(action, Write):
                n_units = len(action.units)
                self.unit_ids += action.units
                self.unit_delays += [self.read_ms] * n_units
                self.unit_elapsed += [self.read_ms + self.compute_ms] * n_units
                self.trace.append((self.read_ms, n_units))
                if action.finished:
                    self.finished = True
                    return
            elif isinstance(action, Read):
                if finished_source:
                    raise PolicyError(f"{self.policy.name}: asked to read past the end "
                                      f"({self.received_ms} ms)")
                if not action.until_ms > self.read_ms:
                    raise PolicyError(f"{self.policy.name}: Read({action.until_ms}) does not "
                                      f"move forward from {self.read_ms} ms")
                self._target = float(action.until_ms)
                return
            else:
                raise PolicyError(f"{self.policy.name}: decide() returned {action!r}")

    def _encode_read(self):
        """The model's encoding of the source read (``read_ms``)."""
        n = int(round(self.read_ms * SAMPLE_RATE / 1000))
        return self.model.encode(self._audio[:n])

    # ------------------------------------------------------------------ output
    @property
    def pieces(self) -> list[str]:
        """The units written so far, as text pieces."""
        return [self.model.token_list[u] for u in self.unit_ids]

    def complete_words(self) -> list[Word]:
        """The words written so far that are known to be complete; once the translation
        has finished, all its words (the last one charged the source read at the end)."""
        pieces, unit_type = self.pieces, self.model.unit_type
        if self.finished:
            words, delays = word_delays(pieces, self.unit_delays, unit_type, self.read_ms)
            _, elapsed = word_delays(pieces, self.unit_elapsed, unit_type,
                                     self.read_ms + self.compute_ms)
        else:
            words, delays = complete_words(pieces, self.unit_delays, unit_type)
            _, elapsed = complete_words(pieces, self.unit_elapsed, unit_type)
        return [Word(w, d, e) for w, d, e in zip(words, delays, elapsed, strict=True)]

    def _update(self, written_before: int) -> Update:
        complete = self.complete_words()
        new = tuple(complete[self._words_out :])
        self._words_out = len(complete)
        return Update(tuple(self.pieces[written_before:]), new, self.finished, self.read_ms)

    def record(self, *, index: int = 0, reference: str = "", segment_id: str = "",
               source: list[str] | None = None, source_text: str = "",
               model_name: str = "") -> Record:
        """The :class:`~simul.records.Record` of the finished stream."""
        if not (self.finished and self._ended):
            raise StreamError("the stream has not ended; call finish() first")
        words = self.complete_words()
        pieces = self.pieces
        return Record(
            index=index, prediction=" ".join(w.text for w in words),
            delays=[w.delay_ms for w in words], elapsed=[w.elapsed_ms for w in words],
            prediction_length=len(words), reference=reference,
            source_length=self.received_ms, source=source or [], units=pieces,
            unit_type=self.model.unit_type, trace=list(self.trace), model=model_name,
            policy=self.policy.name, settings=self.policy.settings(), segment_id=segment_id,
            source_text=source_text, device=devices.label(self.device),
        )

