"""Computations shared by every setting of a sweep that decodes the same utterance.

A grid of settings reads the same prefixes again and again (Nguyen et al. 2021's grid only
reads multiples of 100 ms) and often asks the decoder the same question from the same
state. :class:`SharedCalls` stands in for the model adapter while one utterance is decoded
under many settings: the first time a call (encode a prefix, greedy continuation, beam
search, CTC, attention) is made with given arguments it is computed and remembered, with
the time it took; later identical calls return the same result.

Computation-aware latency stays honest: a call answered from memory is charged the time it
took when it was first computed. The simulator collects that charge after every step
(:meth:`SharedCalls.settle`) and adds it to the step's compute time, so a setting's elapsed
times are what they would have been had it computed everything itself (up to timing
noise). Results are the adapter's own, unit for unit: the adapter's calls are functions of
their arguments (tested in ``tests/test_sweep.py``).

Decoder steps. Settings re-decode their committed units over the encoder outputs they
share, and their units often begin alike, while their calls differ (another prefix, another
budget). Each encoder output this memory computes gets the model's prefix memory
(:meth:`simul.models.adapter.Adapter.prefix_memory`; an ESPnet Transformer decoder's
:class:`~simul.models.adapters.espnet_st.PrefixMemory`): a decoder re-decoding from scratch
resumes from the longest prefix of its units some setting decoded over that output, and the
setting is charged what those steps cost when they were computed (the same results, bit for
bit; P22's grid on the en-de Conformer takes 40 % fewer decoder steps, ``python
benchmarks/sweep.py``'s part 4).

Arguments are compared by value (numbers, token lists, the audio prefix's length) or, for
encoder outputs and decoder states, by identity: those objects come out of this memory, so
the same object means the same computation history. A call is keyed with every argument
the seam (:class:`simul.models.adapter.Adapter`) names, so a default left out and the same
value given are one call. Each entry holds its arguments, so an object's id cannot be
reused while the memory lives. One instance serves one utterance.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from simul.models import device as devices
from simul.models.adapter import Adapter, DecoderState, Delegate, Encoded, Hyp


def _key(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return tuple(_key(v) for v in value)
    if isinstance(value, Encoded | DecoderState):
        return (type(value).__name__, id(value))
    raise TypeError(f"SharedCalls cannot key an argument of type {type(value).__name__}")


def _copy(value: Any) -> Any:
    """A copy the caller may modify without touching the memory (states stay shared)."""
    if isinstance(value, Hyp):
        return dataclasses.replace(value, tokens=list(value.tokens))
    if isinstance(value, list):
        return [_copy(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_copy(v) for v in value)
    if isinstance(value, torch.Tensor):
        return value.clone()
    return value  # Encoded, DecoderState, numbers: shared on purpose (identity is the key)


@dataclasses.dataclass
class _Entry:
    value: Any
    ms: float
    args: tuple  # held so that the ids in the key stay taken
    hits: int = 0  # times answered from memory


class SharedCalls(Delegate):
    """The adapter ``model`` with a memory of its calls for one utterance (see module doc):
    the calls below are remembered; every other member of the seam
    (:class:`simul.models.adapter.Delegate`) is the model's own."""

    def __init__(self, model: Adapter, clock: Callable[[], float] | None = None):
        super().__init__(model)
        # the model's device's clock (simul.models.device.timing_clock): on a GPU a call's
        # time includes the kernels it queued; time.perf_counter itself on the CPU
        self._clock = (devices.timing_clock(getattr(model, "device", devices.CPU))
                       if clock is None else clock)
        self._memory: dict[tuple, _Entry] = {}
        self._reused_ms = 0.0
        self._charge_ms = 0.0
        self.hits: Counter[str] = Counter()  # by call name
        self.misses: Counter[str] = Counter()

    def costs(self) -> dict[str, dict[str, float]]:
        """Per call name: calls ``made``, ``computed`` (the rest came from memory),
        ``computed_ms`` (time spent computing) and ``charged_ms`` (what the settings were
        charged: what they would have spent computing every call themselves)."""
        out: dict[str, dict[str, float]] = {}
        for (name, *_), entry in self._memory.items():
            c = out.setdefault(name, {"made": 0, "computed": 0, "computed_ms": 0.0,
                                      "charged_ms": 0.0})
            c["made"] += 1 + entry.hits
            c["computed"] += 1
            c["computed_ms"] += entry.ms
            c["charged_ms"] += (1 + entry.hits) * entry.ms
        return out

    def _reuse(self, ms: float) -> None:
        self._reused_ms += ms

    def settle(self) -> float:
        """Milliseconds charged for remembered results since the last call (decoder steps
        resumed outside a remembered call included)."""
        charge = self._charge_ms + self._reused_ms
        self._charge_ms = self._reused_ms = 0.0
        return charge

    def _call(self, name: str, key: tuple, args: tuple, compute: Callable[[], Any]) -> Any:
        entry = self._memory.get((name, *key))
        if entry is None:
            t0 = self._clock()
            value = compute()
            # decoder steps resumed from a prefix memory (computed by another setting over
            # the same encoder output) are charged what they cost then, now and at every hit
            reused, self._reused_ms = self._reused_ms, 0.0
            self._charge_ms += reused
            entry = _Entry(value, 1000.0 * (self._clock() - t0) + reused, args)
            if isinstance(value, Encoded):  # the decoder steps over it, shared (or None)
                memory = self.inner.prefix_memory(self._clock, self._reuse)
                if memory is not None:
                    value.derived["prefixes"] = memory
            self._memory[(name, *key)] = entry
            self.misses[name] += 1
        else:
            self._charge_ms += entry.ms
            entry.hits += 1
            self.hits[name] += 1
        return _copy(entry.value)

    def _method(self, name: str, *args, **kwargs) -> Any:
        key = (_key(args), _key(sorted(kwargs.items())))
        method = getattr(self.inner, name)
        return self._call(name, key, (args, kwargs), lambda: method(*args, **kwargs))

    # ------------------------------------------------------------------ remembered calls
    def encode(self, audio: np.ndarray) -> Encoded:
        """The encoder output of a prefix of this utterance's audio, by its length."""
        audio = np.asarray(audio)
        start = audio.__array_interface__["data"][0]
        return self._call("encode", (start, audio.shape[0]), (audio,),
                          lambda: self.inner.encode(audio))

    def step(self, enc: Encoded, state: DecoderState | None = None,
             tokens: list[int] | None = None) -> tuple[torch.Tensor, DecoderState]:
        return self._method("step", enc, state, tokens)

    def greedy(self, enc: Encoded, prefix: Sequence[int] = (), *, max_new: int | None = None,
               maxlenratio: float = 0.0, avoid_eos: bool = False,
               state: Any = None) -> Hyp:
        return self._method("greedy", enc, prefix, max_new=max_new, maxlenratio=maxlenratio,
                            avoid_eos=avoid_eos, state=state)

    def beam_search(self, enc: Encoded, prefix: Sequence[int] = (), *, beam: int = 5,
                    nbest: int | None = None, maxlenratio: float = 0.0) -> list[Hyp]:
        return self._method("beam_search", enc, prefix, beam=beam, nbest=nbest,
                            maxlenratio=maxlenratio)

    def ctc_greedy(self, enc: Encoded) -> list[int]:
        return self._method("ctc_greedy", enc)

    def ctc_words(self, enc: Encoded) -> list[str]:
        return self._method("ctc_words", enc)

    def cross_attention(self, enc: Encoded, tokens: list[int],
                        layer: int = -1) -> torch.Tensor:
        return self._method("cross_attention", enc, tokens, layer)

    def asr_words(self, enc: Encoded) -> list[str]:
        """A cascade's transcript of an encoded prefix (:mod:`simul.models.adapters.cascade`)."""
        return self._method("asr_words", enc)

    def encode_words(self, words: list[str]) -> Encoded:
        """A text MT's encoding of the source words read (:mod:`simul.decoding.text`), by the
        words."""
        return self._method("encode_words", list(words))

    def mt_encode(self, words: list[str]) -> Encoded:
        """A cascade's MT encoding of source words, by the words: settings that feed the MT
        the same words share it, and the decoder calls over it."""
        return self._method("mt_encode", list(words))
