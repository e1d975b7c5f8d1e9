"""The seam between policies and models: what a model adapter offers, in plain types.

Policies (:mod:`simul.policies`), the streaming session (:mod:`simul.decoding.session`) and
a sweep's wrappers (:class:`simul.sweep.calls.SharedCalls`, :mod:`simul.sweep.lockstep`)
talk to a model through the members declared here and nothing else; the adapters of
:mod:`simul.models.adapters` (ESPnet2's ST, ASR and MT models, the MMA model, the cascade,
transformers' Speech2Text) provide them. Policies and the decoding tier import this module,
never an adapter (an import contract of ``pyproject.toml``); a model is loaded by
:mod:`simul.models.loader`.

- :class:`Adapter`: what every model offers, in the terms of the design the papers share
  (encode an audio prefix, step the decoder with an explicit state, greedy or beam search
  from a forced prefix, the source CTC, cross-attention, units ↔ text). A call the model
  cannot make (no source CTC, an MMA model's offline steps) raises :class:`ModelError`
  naming the model: the policies that need it turn that into their own one-line refusal.
- What some kinds of model add, asked for by the policies written for them
  (``Policy.runs_on``, ``Policy.needs_decoder``): :class:`TextMTAdapter` (a text source),
  :class:`CascadeAdapter` (an ASR feeding an MT), :class:`MonotonicAdapter` (an MMA decoder
  whose heads decide when to write, Ma et al. 2020).
- Attributes a model may lack, read with a default: ``decoder_name`` (the decoder it was
  trained with, ``""``), ``serves`` (the only policies that decode it, ``{policy: why}``;
  none: all of its kind) and ``greedy_only`` (no beam search; ``False``).
- The plain types exchanged: :class:`Encoded`, :class:`DecoderState`, :class:`Hyp`,
  :class:`MonotonicState`, :class:`MonotonicStep`; :class:`ModelError`; :data:`SAMPLE_RATE`.
- :func:`greedy_continuation` and :func:`length_cap`: the greedy decoding and output-length
  cap that every offline decoder shares, written once over :meth:`Adapter.step`.
- :class:`Delegate`: an adapter that hands every member to another, for wrappers that
  change a few calls (:class:`simul.sweep.calls.SharedCalls` remembers them).

``tests/test_adapter_seam.py`` checks every adapter class against these Protocols, member by
member and signature by signature.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch

from simul.corpus import SAMPLE_RATE

__all__ = [
    "SAMPLE_RATE", "Adapter", "CascadeAdapter", "DecoderState", "Delegate", "Encoded", "Hyp",
    "ModelError", "MonotonicAdapter", "MonotonicState", "MonotonicStep", "TextMTAdapter",
    "greedy_continuation", "length_cap",
]

# SAMPLE_RATE (16 kHz) is the corpus's, the one rate in simul: the corpus serves its audio
# at it, and every adapter's encode() takes audio at it.


class ModelError(ValueError):
    """A model directory that cannot be loaded, or a call the model cannot make; the
    message names the file and field, or the model and what it lacks."""


@dataclass
class Encoded:
    """Encoder states of one audio prefix (or of a text MT's source words)."""

    states: torch.Tensor  # (T_enc, D)
    n_samples: int  # audio samples that produced them (a text MT: source words)
    # what the decoder derives from the states alone (the RNN attention's projection):
    # computed by encode(), once per encoder output however many decoding calls read it
    derived: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def frames(self) -> int:
        return int(self.states.shape[0])


@dataclass
class DecoderState:
    """Decoder state after consuming ``tokens`` (<sos> first); ``logp`` scores the next unit.
    ``state`` is the adapter's own (ESPnet's cache, transformers' keys and values)."""

    tokens: list[int]
    state: Any = None
    logp: torch.Tensor | None = field(default=None, repr=False)


@dataclass
class Hyp:
    tokens: list[int]  # new tokens after the forced prefix, EOS excluded
    score: float  # sum of the log-probabilities of the new tokens (ESPnet's score)
    ended: bool  # the model predicted EOS
    capped: bool = False  # stopped by the output-length cap
    resume: DecoderState | None = field(default=None, repr=False)  # state before the last unit


@dataclass
class MonotonicState:
    """After committing ``tokens`` (<sos> first) with an MMA decoder: ESPnet's per-layer
    cache of every position but the last, and where each head stopped for the last committed
    unit (``stops``, (layers, heads) block indices; zeros before the first)."""

    tokens: list[int]
    cache: list[torch.Tensor] | None
    stops: torch.Tensor


@dataclass
class MonotonicStep:
    """One MMA step's outcome: ``waiting`` when a head found no stop among the blocks read
    (the step cannot be taken yet); otherwise ``logp`` of the next unit, and the stops and
    cache :meth:`MonotonicAdapter.advance` commits with it."""

    waiting: bool
    logp: torch.Tensor | None
    stops: torch.Tensor
    cache: list[torch.Tensor]


@runtime_checkable
class Adapter(Protocol):
    """What every model offers the policies (see the module doc). Audio is float samples at
    :data:`SAMPLE_RATE`; units are target unit ids (indices of :attr:`token_list`); a forced
    ``prefix`` (the units committed) never includes <sos>."""

    kind: str  # "st" (speech in), "cascade" (ASR + MT) or "mt" (text in)
    device: str  # torch's name of the device it runs on
    config_path: Path  # the file that describes it (errors and notes name its directory)
    token_list: list[str]  # the target units
    unit_type: str  # "char" or "bpe": where words begin (simul.metrics.units)
    sos: int
    eos: int

    def encode(self, audio: np.ndarray) -> Encoded:
        """The encoder states of an audio prefix, computed on that prefix alone."""
        ...

    def encode_batch(self, audios: list[np.ndarray]) -> list[Encoded]:
        """:meth:`encode` of several prefixes of one length in one call."""
        ...

    def step(self, enc: Encoded, state: DecoderState | None = None,
             tokens: list[int] | None = None) -> tuple[torch.Tensor, DecoderState]:
        """Log-probabilities of the next unit after ``tokens`` and the state after them;
        ``state`` (from an earlier call, perhaps over another encoder output) is extended."""
        ...

    def greedy(self, enc: Encoded, prefix: Sequence[int] = (), *, max_new: int | None = None,
               maxlenratio: float = 0.0, avoid_eos: bool = False,
               state: Any = None) -> Hyp:
        """Greedy continuation of ``prefix``: to EOS, ``max_new`` units or the cap."""
        ...

    def beam_search(self, enc: Encoded, prefix: Sequence[int] = (), *, beam: int = 5,
                    nbest: int | None = None, maxlenratio: float = 0.0) -> list[Hyp]:
        """Beam search continued from ``prefix``: the n-best, best first."""
        ...

    def max_length(self, enc: Encoded, maxlenratio: float = 0.0) -> int:
        """The output-length cap over ``enc`` (:func:`length_cap`)."""
        ...

    def ctc_greedy(self, enc: Encoded) -> list[int]:
        """The source-language CTC's greedy units (:class:`ModelError` without one)."""
        ...

    def ctc_words(self, enc: Encoded) -> list[str]:
        """The words of the source CTC's greedy transcript (:class:`ModelError` without)."""
        ...

    def cross_attention(self, enc: Encoded, tokens: list[int],
                        layer: int = -1) -> torch.Tensor:
        """The source attention of decoder ``layer`` for predicting each unit after
        <sos> + ``tokens``: (len(tokens) + 1, T_enc), averaged over heads."""
        ...

    def detokenize(self, ids: list[int]) -> str:
        """Target units → text, words separated by single spaces."""
        ...

    def encode_text(self, text: str) -> list[int]:
        """Target text → units (forced prefixes in tests and tools)."""
        ...

    def prefix_memory(self, clock: Callable[[], float],
                      charge: Callable[[float], None]) -> Any:
        """A memory of decoder steps over one encoder output that callers sharing it resume
        from (put in ``Encoded.derived["prefixes"]``; ``clock`` times a step, ``charge`` is
        told what resumed steps cost), or None where the decoder does not resume from one."""
        ...


@runtime_checkable
class TextMTAdapter(Adapter, Protocol):
    """A text MT model (``kind`` "mt"): source words in, in place of audio."""

    def encode_words(self, words: list[str]) -> Encoded:
        """Encoder states of the source words (``n_samples``: how many)."""
        ...

    def translate(self, words: list[str], *, beam: int = 1,
                  maxlenratio: float = 2.0) -> list[int]:
        """Target units of the offline translation of ``words``."""
        ...


@runtime_checkable
class CascadeAdapter(Adapter, Protocol):
    """An ASR model feeding a text MT model (``kind`` "cascade"): :meth:`Adapter.encode` is the
    ASR's, the decoder calls are the MT's over :meth:`mt_encode`'s output."""

    def asr_words(self, enc: Encoded) -> list[str]:
        """The words of the ASR's greedy CTC transcript of an encoded prefix."""
        ...

    def mt_encode(self, words: list[str]) -> Encoded:
        """The MT's encoding of source words."""
        ...


@runtime_checkable
class MonotonicAdapter(Adapter, Protocol):
    """A model whose monotonic multihead attention decides when to write (``decoder_name``
    "transformer_mma"; Ma et al. 2020, §3): one step at a time over the blocks read."""

    pre_decision: str  # what it was trained with: "fixed", "word" or "phoneme"
    pre_decision_ms: float  # the fixed pre-decision's Δt (ms)

    def monotonic_start(self) -> MonotonicState:
        """The state before the first unit."""
        ...

    def monotonic_step(self, enc: Encoded, state: MonotonicState, block_ms: list[float], *,
                       finished: bool) -> MonotonicStep:
        """Try the step after ``state.tokens`` with the blocks read at ``block_ms`` (ms);
        ``finished``: the source has ended (no head waits)."""
        ...

    def advance(self, state: MonotonicState, token: int,
                step: MonotonicStep) -> MonotonicState:
        """``state`` with ``token`` committed after ``step`` (which was not waiting)."""
        ...


def length_cap(frames: int, maxlenratio: float = 0.0) -> int:
    """ESPnet's output-length cap over ``frames`` encoder frames: ``frames`` when
    ``maxlenratio`` is 0, ``-maxlenratio`` units when it is negative, else ``maxlenratio``
    × ``frames`` (at least 1)."""
    if maxlenratio == 0:
        return frames
    if maxlenratio < 0:
        return int(-maxlenratio)
    return max(1, int(maxlenratio * frames))


def greedy_continuation(model: Adapter, enc: Encoded, prefix: Sequence[int] = (), *,
                        max_new: int | None = None, maxlenratio: float = 0.0,
                        avoid_eos: bool = False,
                        state: DecoderState | None = None) -> Hyp:
    """Greedy continuation of ``prefix`` by ``model``'s :meth:`~Adapter.step`: argmax until
    EOS, ``max_new`` units, or the cap (:meth:`~Adapter.max_length`).

    ``avoid_eos`` takes the best unit but EOS (Papi et al. 2022, App. A). ``state`` (a
    previous :attr:`Hyp.resume` for a prefix of ``prefix``) reuses the decoder state computed
    over an earlier encoder output (Nguyen et al. 2021, eq. 2): only the units it has not
    consumed are decoded, over ``enc``. The :attr:`Hyp.resume` returned is the state before
    the last unit committed, for the next call to re-consume that unit over a newer encoder
    output. Call it under ``torch.inference_mode``."""
    prefix = list(prefix)
    cap = model.max_length(enc, maxlenratio)
    budget = cap - len(prefix) if max_new is None else min(max_new, cap - len(prefix))
    if enc.frames == 0 or budget <= 0:
        return Hyp([], 0.0, ended=False, capped=budget <= 0, resume=state)
    # the state before the last committed unit: re-consuming that unit over a newer
    # encoder output is how a later step predicts the next one (eq. 2)
    resume = state
    if prefix:
        _, resume = model.step(enc, state, prefix[:-1])
    logp, cur = model.step(enc, resume, prefix)
    new, score = [], 0.0
    for _ in range(budget):
        if avoid_eos:
            logp = logp.clone()
            logp[model.eos] = -float("inf")
        tok = int(torch.argmax(logp))
        if tok == model.eos:
            return Hyp(new, score + float(logp[tok]), ended=True, resume=resume)
        score += float(logp[tok])
        new.append(tok)
        resume = cur
        if len(new) == budget:  # the next unit's scores would go unused
            break
        logp, cur = model.step(enc, cur, prefix + new)
    return Hyp(new, score, ended=False, capped=len(prefix) + len(new) >= cap, resume=resume)


class Delegate:
    """An adapter that hands every member of the seam to ``inner``, one by one: a wrapper
    that changes a few calls (:class:`simul.sweep.calls.SharedCalls`, a lockstep lane, a
    cascade over its MT model) subclasses it and overrides them. A member ``inner`` lacks raises
    ``AttributeError`` when used, as on ``inner`` itself (the optional attributes of the
    module doc keep their defaults where they are read with ``getattr``)."""

    def __init__(self, inner: Adapter):
        self.inner = inner

    # ------------------------------------------------------------------ what it is
    @property
    def kind(self) -> str:
        return self.inner.kind

    @property
    def device(self) -> str:
        return self.inner.device

    @property
    def config_path(self) -> Path:
        return self.inner.config_path

    @property
    def token_list(self) -> list[str]:
        return self.inner.token_list

    @property
    def unit_type(self) -> str:
        return self.inner.unit_type

    @property
    def sos(self) -> int:
        return self.inner.sos

    @property
    def eos(self) -> int:
        return self.inner.eos

    @property
    def decoder_name(self) -> str:
        return self.inner.decoder_name

    @property
    def serves(self) -> dict[str, str]:
        return self.inner.serves

    @property
    def greedy_only(self) -> bool:
        return self.inner.greedy_only

    # ------------------------------------------------------------------ Adapter
    def encode(self, audio: np.ndarray) -> Encoded:
        return self.inner.encode(audio)

    def encode_batch(self, audios: list[np.ndarray]) -> list[Encoded]:
        return self.inner.encode_batch(audios)

    def step(self, enc: Encoded, state: DecoderState | None = None,
             tokens: list[int] | None = None) -> tuple[torch.Tensor, DecoderState]:
        return self.inner.step(enc, state, tokens)

    def greedy(self, enc: Encoded, prefix: Sequence[int] = (), *, max_new: int | None = None,
               maxlenratio: float = 0.0, avoid_eos: bool = False,
               state: Any = None) -> Hyp:
        return self.inner.greedy(enc, prefix, max_new=max_new, maxlenratio=maxlenratio,
                                 avoid_eos=avoid_eos, state=state)

    def beam_search(self, enc: Encoded, prefix: Sequence[int] = (), *, beam: int = 5,
                    nbest: int | None = None, maxlenratio: float = 0.0) -> list[Hyp]:
        return self.inner.beam_search(enc, prefix, beam=beam, nbest=nbest,
                                      maxlenratio=maxlenratio)

    def max_length(self, enc: Encoded, maxlenratio: float = 0.0) -> int:
        return self.inner.max_length(enc, maxlenratio)

    def ctc_greedy(self, enc: Encoded) -> list[int]:
        return self.inner.ctc_greedy(enc)

    def ctc_words(self, enc: Encoded) -> list[str]:
        return self.inner.ctc_words(enc)

    def cross_attention(self, enc: Encoded, tokens: list[int],
                        layer: int = -1) -> torch.Tensor:
        return self.inner.cross_attention(enc, tokens, layer)

    def detokenize(self, ids: list[int]) -> str:
        return self.inner.detokenize(ids)

    def encode_text(self, text: str) -> list[int]:
        return self.inner.encode_text(text)

    def prefix_memory(self, clock: Callable[[], float],
                      charge: Callable[[float], None]) -> Any:
        return self.inner.prefix_memory(clock, charge)

    # ------------------------------------------------------------------ TextMTAdapter
    def encode_words(self, words: list[str]) -> Encoded:
        return self.inner.encode_words(words)

    def translate(self, words: list[str], *, beam: int = 1,
                  maxlenratio: float = 2.0) -> list[int]:
        return self.inner.translate(words, beam=beam, maxlenratio=maxlenratio)

    # ------------------------------------------------------------------ CascadeAdapter
    def asr_words(self, enc: Encoded) -> list[str]:
        return self.inner.asr_words(enc)

    def mt_encode(self, words: list[str]) -> Encoded:
        return self.inner.mt_encode(words)

    # ------------------------------------------------------------------ MonotonicAdapter
    @property
    def pre_decision(self) -> str:
        return self.inner.pre_decision

    @property
    def pre_decision_ms(self) -> float:
        return self.inner.pre_decision_ms

    def monotonic_start(self) -> MonotonicState:
        return self.inner.monotonic_start()

    def monotonic_step(self, enc: Encoded, state: MonotonicState, block_ms: list[float], *,
                       finished: bool) -> MonotonicStep:
        return self.inner.monotonic_step(enc, state, block_ms, finished=finished)

    def advance(self, state: MonotonicState, token: int,
                step: MonotonicStep) -> MonotonicState:
        return self.inner.advance(state, token, step)
