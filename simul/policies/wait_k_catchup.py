"""Wait-k with stride and catch-up on speech — Han et al. 2020, IWSLT (Samsung), §2.1.

Target unit t (counted from 1) is written once g(t) ms of source have been read,

    g(t) = min{(k + t − 1 − ⌊c·t⌋) · s, |x|},

with k the lagging (strides read before the first unit), s the stride (``stride_ms``) and
c the catch-up frequency (``catchup``; the paper sets c = r − 1 with r = |y|/|x| the
target/source length ratio, r = 1.0 for English–German, so c = 0 there). A positive c makes
the policy write faster than it reads (⌊c·t⌋ steps are skipped), a negative c slower.

Each decision writes one unit, the greedy continuation of the committed units over the
prefix read. The paper is silent on an EOS predicted before the whole input is read;
``on_eos`` chooses: ``"read"`` (default) writes nothing and reads one more stride, so EOS
never ends the hypothesis early; ``"stop"`` ends the hypothesis there, as SimulEval's agents
usually do. The output-length cap of the prefix read always reads one more stride. Once
the input is read, decoding continues greedily to EOS or ESPnet's length cap (``maxlenratio``
× encoder frames; 0: as many units as encoder frames), and that finishes. A policy whose
first read covers the whole input (k·s ≥ |x| with c = 0) gives the offline greedy output.

**Departures from the paper.**

- Units: the paper writes one "target text token" (word piece) per step; we write one model
  unit, which is a SentencePiece piece for BPE models (as in the paper) but one character
  for character models.
- Source measure: the paper counts s in source "frames" and sets |x| to the length of the
  transcript; its strides (300–800) read as ms of audio, as in the IWSLT 2020 SimulEval
  setup, so here s is in ms and |x| is the source duration in ms.
- The paper's wait-k models are trained with a unidirectional encoder, so the states of
  units already written never change. Our offline models re-encode the whole prefix at every
  read; ``reuse_state`` (default) keeps each decoder state as it was computed when its unit
  was written (as in wait-k training), off re-decodes the committed units over the newest
  encoder states.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from simul.policies.base import Policy, Read, View, Write

if TYPE_CHECKING:  # types only: a policy never loads a model adapter
    from simul.models.adapter import Adapter


def g_ms(t: int, *, k: int, stride_ms: float, catchup: float,
         source_ms: float = math.inf) -> float:
    """g(t) of Han et al. 2020 §2.1: ms of source read before writing target unit t ≥ 1
    (``source_ms``: |x|, unknown to a policy while it reads, so infinite by default)."""
    if t < 1:
        raise ValueError(f"g_ms: t={t}; target units are counted from 1")
    # ⌊c·t⌋ on the decimal value of c: 0.29 · 100 is 28.999… in binary floating point
    skipped = math.floor(Fraction(repr(float(catchup))) * t)
    return min((k + t - 1 - skipped) * stride_ms, source_ms)


@dataclass
class WaitKCatchup(Policy):
    name = "wait_k_catchup"
    paper = "Han et al. 2020, IWSLT (Samsung) — §2.1, g_wait-k,c,s(t)"
    # strides read before the first unit, a count (the paper's speech systems: k = 3, 3, 4
    # for low, medium, high latency)
    k: int = 3
    stride_ms: float = 300.0  # s, ms (the paper's speech systems: 300, 400, 800)
    # c, unitless: strides skipped per target unit; c = r − 1, r = 1.0 for English–German in
    # the paper
    catchup: float = 0.0
    # length cap × encoder frames (0: ESPnet's cap, as many units as encoder frames)
    maxlenratio: float = 0.0
    # a flag: keep each decoder state as it was when its unit was written (wait-k training);
    # off: re-decode the committed units over the newest encoder states
    reuse_state: bool = True
    # one of "read" (EOS while reading: read one more stride) or "stop" (end the output there)
    on_eos: str = "read"

    def __post_init__(self):
        self.require(self.k >= 1, "k", "≥ 1")
        self.require(self.stride_ms > 0, "stride_ms", "> 0")
        self.require(self.on_eos in ("read", "stop"), "on_eos", "'read' or 'stop'")

    def g_ms(self, t: int) -> float:
        """g(t) without the cap at |x|: a read past the end stops at the end."""
        return g_ms(t, k=self.k, stride_ms=self.stride_ms, catchup=self.catchup)

    def first_read_ms(self) -> float:
        return self.g_ms(1)

    def decide(self, model: Adapter, view: View) -> Read | Write:
        memo = view.memo
        state = memo.get("state") if self.reuse_state else None
        if view.source_finished:
            return self.finish(model, view, maxlenratio=self.maxlenratio, state=state)
        need_ms = self.g_ms(len(view.units) + 1)
        if view.read_ms < need_ms:
            return Read(need_ms)
        hyp = model.greedy(view.encoded, view.units, max_new=1, maxlenratio=self.maxlenratio,
                           state=state)
        memo["state"] = hyp.resume
        if not hyp.tokens:  # EOS (or the cap of this prefix) before the end of the input
            if hyp.ended and self.on_eos == "stop":
                return Write((), finished=True)
            return Read(view.read_ms + self.stride_ms)
        return Write(tuple(hyp.tokens))
