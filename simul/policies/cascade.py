"""A cascade's policy: streaming ASR, stable source words, wait-k text MT — Nguyen et al.
2021, Figure 3's cascade (an ASR system feeding a wait-k Transformer MT).

Runs on a :class:`simul.models.adapters.cascade.Cascade` (an ASR and an MT model). The audio is read
in chunks of ``chunk_ms``. After every chunk:

1. **ASR.** The greedy transcript of the ASR's CTC over the encoder states of the prefix
   read (the prefix is re-encoded, as every offline model here is). CTC greedy needs no
   decoder search, so it costs one encoder pass per chunk.
2. **Stable words.** A transcript of a prefix is least reliable at its end, where a word
   may be cut off. ``stable="la2"`` (default) takes the words on which the transcripts of
   the last two chunks agree (their longest common prefix: local agreement, the rule
   Polák et al. 2022 found best for onlinization); ``"all"`` takes every word at once (no
   hold-back). Stable words are never retracted: once fed to the MT they stay, and the
   agreed words past them extend them by position, also where a later transcript revised
   a fed word (the ASR's "wh" fed at 2.5 s stays when 4.5 s hears "what"; the words after
   it still reach the MT, which would otherwise wait for the end of the audio).
3. **Wait-k MT.** With W stable source words, the MT may have written W − k + 1 target
   words (Ma et al. 2019's g(i) = k + i − 1 over words, as :mod:`simul.policies.word_detection`
   applies it to speech): the MT encodes the stable words and continues its committed
   target greedily until that many words are complete (for SentencePiece units the first
   unit of the next word is look-ahead and is not committed), avoiding </s> while the
   source is being read.

At the end of the audio the last transcript's remaining words are appended to the stable
ones and the MT decodes greedily to </s> (or its length cap, ``maxlenratio`` × source
units). The MT is offline-trained (k_train = ∞), N21's cascade "without re-training".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simul.models.adapter import CascadeAdapter, ModelError
from simul.policies.base import Policy, Read, View, Write
from simul.policies.word_detection import wait_k_over_words

STABLE = ("la2", "all")
_EPS = 1e-6


def common_prefix(a: list[str], b: list[str]) -> list[str]:
    out = []
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        out.append(x)
    return out


@dataclass
class CascadeWaitK(Policy):
    name = "cascade"
    paper = "Nguyen et al. 2021, ICASSP — Figure 3 (cascade: streaming ASR + wait-k MT)"
    runs_on = "cascade"
    k: int = 3  # stable source words before the first target word, a count
    chunk_ms: float = 250.0  # audio read between decisions, ms
    # one of "la2" (words two consecutive transcripts agree on) or "all" (every word)
    stable: str = "la2"
    maxlenratio: float = 2.0  # the MT's length cap × source units (0: one unit per source unit)

    def __post_init__(self) -> None:
        self.require(self.k >= 1, "k", "≥ 1")
        self.require(self.chunk_ms > 0, "chunk_ms", "> 0")
        self.require(self.stable in STABLE, "stable", f"one of {STABLE}")
        self.require(self.maxlenratio >= 0, "maxlenratio", "≥ 0")

    def first_read_ms(self) -> float:
        return self.chunk_ms

    def next_read_ms(self, read_ms: float) -> float:
        return (math.floor(read_ms / self.chunk_ms + _EPS) + 1) * self.chunk_ms

    def stable_words(self, model: CascadeAdapter, view: View) -> list[str]:
        """The source words fed to the MT so far, extended by this chunk's transcript."""
        memo = view.memo
        if memo.get("heard_at") == view.read_ms:
            return memo["stable"]
        try:
            words = model.asr_words(view.encoded)
        except AttributeError as e:
            raise ModelError("the cascade policy runs on a cascade (ASR + MT, "
                             "simul.models.adapters.cascade), not on "
                             f"{type(model).__name__}") from e
        stable = memo.get("stable", [])
        if view.source_finished or self.stable == "all":
            agreed = words
        else:
            previous = memo.get("transcript")
            agreed = common_prefix(previous, words) if previous is not None else []
        memo["transcript"] = words
        if len(agreed) > len(stable):  # fed words stay as fed, even where the ASR revised
            stable = stable + agreed[len(stable):]  # them; the agreed words after extend them
        memo["stable"], memo["heard_at"] = list(stable), view.read_ms
        return memo["stable"]

    def decide(self, model: CascadeAdapter, view: View) -> Read | Write:
        stable = self.stable_words(model, view)
        if view.source_finished:
            if not stable:
                return Write((), finished=True)
            hyp = model.greedy(model.mt_encode(stable), view.units,
                               maxlenratio=self.maxlenratio)
            return Write(tuple(hyp.tokens), finished=True)
        return wait_k_over_words(model, lambda: model.mt_encode(stable), view.units,
                                 len(stable), self.k, Read(self.next_read_ms(view.read_ms)),
                                 maxlenratio=self.maxlenratio, avoid_eos=True)
