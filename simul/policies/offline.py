"""Offline decoding as a policy: read everything, then decode (the reference point)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from simul.policies.base import Policy, Read, View, Write

if TYPE_CHECKING:  # types only: a policy never loads a model adapter
    from simul.models.adapter import Adapter


@dataclass
class Offline(Policy):
    """Read the whole source, then greedy (``beam`` = 1) or ESPnet beam search."""

    name = "offline"
    paper = "reference point of every paper"
    beam: int = 1  # beam size, a count (1: greedy)

    def __post_init__(self) -> None:
        self.require(self.beam >= 1, "beam", "≥ 1")

    def check_model(self, model: Adapter) -> list[str]:
        if self.beam > 1 and getattr(model, "greedy_only", False):
            raise ValueError(f"{self.name}: beam={self.beam}: this model decodes greedily only "
                             "(an MMA model: its heads decide when each step is taken); "
                             "use beam 1")
        return []

    def first_read_ms(self) -> float:
        return math.inf

    def decide(self, model: Adapter, view: View) -> Read | Write:
        if not view.source_finished:
            return Read(math.inf)
        if self.beam == 1:
            hyp = model.greedy(view.encoded, view.units)
        else:
            hyp = model.beam_search(view.encoded, view.units, beam=self.beam, nbest=1)[0]
        return Write(tuple(hyp.tokens), finished=True)
