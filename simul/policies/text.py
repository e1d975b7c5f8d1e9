"""Wait-k on a text source — Ma et al. 2019's prefix-to-prefix schedule, as Han et al. 2020
(§2.1, Tables 1–5) evaluate their text-to-text systems and Nguyen et al. 2021's cascade
(Figure 3) drives its MT.

Runs on a text MT model (:class:`simul.models.adapters.cascade.TextMT`) in a
:class:`simul.decoding.text.TextSession`: reads count source words. With W source words read, the
MT may have written W − k + 1 target words (g(i) = k + i − 1): after every source word it
encodes the words read and continues its committed target greedily until that many words are
complete (:func:`simul.policies.word_detection.wait_k_over_words`, which the cascade's MT
half also decides with; ``wait_k_words`` decides alike over detected words). Once the
source has ended it decodes greedily to </s> (or the length cap, ``maxlenratio`` × source
units). ``k`` at least the source's words is the offline greedy translation.

**Departures.** Words, not subword tokens, are the steps on both sides (SimulEval's
text-to-text latency counts words); H20 writes one target token per step. The MT re-encodes
the prefix read at every step: the same states as encoding once and extending, for the wait-k
MT models (their encoder is unidirectional, as Ma et al. 2019's); an offline MT's
bidirectional encoder re-reads the prefix as a whole.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from simul.policies.base import Policy, Read, View, Write
from simul.policies.word_detection import wait_k_over_words

if TYPE_CHECKING:  # types only: a policy never loads a model adapter
    from simul.models.adapter import TextMTAdapter


@dataclass
class WaitKText(Policy):
    name = "wait_k_text"
    paper = "Ma et al. 2019 wait-k on text, as Han et al. 2020 (IWSLT) Tables 1–5 decode it"
    runs_on = "mt"
    k: int = 3  # source words read before the first target word, a count
    # a flag: the next best unit instead of </s> while reading
    avoid_eos_while_reading: bool = True
    maxlenratio: float = 2.0  # length cap × source units (0: one unit per source unit)

    def __post_init__(self) -> None:
        self.require(self.k >= 1, "k", "≥ 1")
        self.require(self.maxlenratio >= 0, "maxlenratio", "≥ 0")

    def first_read_ms(self) -> float:
        return float(self.k)  # source words

    def decide(self, model: TextMTAdapter, view: View) -> Read | Write:
        if view.source_finished:
            return self.finish(model, view, maxlenratio=self.maxlenratio)
        # </s> before the end of the source (avoid_eos_while_reading off) is not committed:
        # the units before it are, and the policy reads on
        return wait_k_over_words(model, lambda: view.encoded, view.units, int(view.read_ms),
                                 self.k, Read(math.floor(view.read_ms) + 1),
                                 maxlenratio=self.maxlenratio,
                                 avoid_eos=self.avoid_eos_while_reading)
