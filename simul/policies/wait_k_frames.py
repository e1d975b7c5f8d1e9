"""Wait-k with stride and multi-unit writes over feature frames — Nguyen et al. 2021, §2.2.

Read k frames (10 ms each), then at decoding step t the encoder sees
g(t) = min(k + (t − 1)·s, |X|) frames and the decoder writes up to N units. A predicted
</s> before the whole input is read keeps the units before it and reads on. Once the input
is read, decoding continues to </s> or to the length cap
``maxlenratio`` × encoder frames (the paper's footnote 2: 1.0 for EN-DE, 1.6 for EN-PT);
while reading, the cap over the prefix's frames holds writing back until more is read.
The decoder state is reused across steps (eq. 2: z_j = decode(h_t, z_{j−1}, y_{j−1})),
unless ``reuse_state`` is off, which re-decodes the committed units over every new h_t.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from simul.policies.base import Policy, Read, View, Write

if TYPE_CHECKING:  # types only: a policy never loads a model adapter
    from simul.models.adapter import Adapter

FRAME_MS = 10.0


@dataclass
class WaitKFrames(Policy):
    name = "wait_k_frames"
    paper = "Nguyen et al. 2021, ICASSP — §2.2, eqs. (1)–(4)"
    k: int = 100  # frames (10 ms) read before the first write: N21's k
    s: int = 10  # frames read per step: N21's stride s
    n: int = 1  # units written per step at most, a count
    maxlenratio: float = 1.0  # length cap × encoder frames, as in the other policies
    # a flag: keep the decoder state across steps (eq. 2); off: re-decode
    reuse_state: bool = True

    def __post_init__(self) -> None:
        self.require(self.k >= 1, "k", "≥ 1 frame")
        self.require(self.s >= 1, "s", "≥ 1 frame")
        self.require(self.n >= 1, "n", "≥ 1 unit")
        self.require(self.maxlenratio >= 0, "maxlenratio", "≥ 0")

    def first_read_ms(self) -> float:
        return self.k * FRAME_MS

    def decide(self, model: Adapter, view: View) -> Read | Write:
        memo = view.memo
        if memo.get("wrote_at") == view.read_ms and not view.source_finished:
            return Read(view.read_ms + self.s * FRAME_MS)
        state = memo.get("state") if self.reuse_state else None
        if view.source_finished:
            return self.finish(model, view, maxlenratio=self.maxlenratio, state=state)
        hyp = model.greedy(view.encoded, view.units, max_new=self.n,
                           maxlenratio=self.maxlenratio, state=state)
        memo["state"] = hyp.resume
        memo["wrote_at"] = view.read_ms
        return Write(tuple(hyp.tokens))  # a cap reached on a prefix only waits for more input
