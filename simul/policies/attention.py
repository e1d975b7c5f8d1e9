"""Attention-guided policies on offline models — beyond the five papers (Papi et al. 2023).

Both read the source in fixed chunks. After each chunk, the model proposes a greedy
continuation of the committed units; the cross-attention of one decoder layer (averaged
over heads) then decides how much of it to commit:

- **AlignAtt** (Papi, Turchi, Negri, Interspeech 2023): commit proposed units one by one
  while the encoder frame each unit attends to most (the argmax of its attention row) lies
  *before* the last ``frames`` encoder frames; stop at the first unit aligned to the last
  ``frames`` frames (it may still change when more audio comes).
- **EDAtt** (Papi, Negri, Turchi, ICASSP 2023): commit while the attention mass a unit puts
  on the last ``frames`` encoder frames (λ) stays below ``alpha`` (α).

A proposed EOS before the end is not committed. When the input is read, the rest is
decoded greedily to EOS (or the cap) and committed. Encoder frames here are the model's
(e.g. 80 ms for a ``conv2d8`` Conformer, 40 ms for a ×4 BLSTM).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from simul.policies.base import Policy, Read, View, Write

if TYPE_CHECKING:  # types only: a policy never loads a model adapter
    from simul.models.adapter import Adapter


@dataclass
class _AttentionPolicy(Policy):
    chunk_ms: float = 1000.0  # audio read between decisions, ms
    # f (AlignAtt) or λ (EDAtt), a count of encoder frames: the last ones, considered unstable
    frames: int = 2
    layer: int = -1  # a layer index: the decoder layer whose source attention is used (−1: last)
    maxlenratio: float = 0.0  # length cap × encoder frames (0: ESPnet's default cap)

    def __post_init__(self) -> None:
        self.require(self.chunk_ms > 0, "chunk_ms", "> 0")
        self.require(self.frames >= 0, "frames", "≥ 0")

    def first_read_ms(self) -> float:
        return self.chunk_ms

    def _stable(self, row, n_frames: int) -> bool:
        raise NotImplementedError

    def decide(self, model: Adapter, view: View) -> Read | Write:
        if view.source_finished:
            return self.finish(model, view, maxlenratio=self.maxlenratio)
        if view.memo.get("decided_at") == view.read_ms:
            return Read(view.read_ms + self.chunk_ms)
        view.memo["decided_at"] = view.read_ms
        hyp = model.greedy(view.encoded, view.units, maxlenratio=self.maxlenratio)
        if not hyp.tokens:
            return Read(view.read_ms + self.chunk_ms)
        attn = model.cross_attention(view.encoded, view.units + hyp.tokens, self.layer)
        rows = attn[len(view.units) : len(view.units) + len(hyp.tokens)]  # (m, T_enc)
        keep = 0
        for row in rows:
            if not self._stable(row, view.encoded.frames):
                break
            keep += 1
        return Write(tuple(hyp.tokens[:keep]))  # finish only once the input is read


@dataclass
class AlignAtt(_AttentionPolicy):
    name = "alignatt"
    paper = "Papi et al. 2023 (Interspeech), beyond the five papers"

    def _stable(self, row, n_frames: int) -> bool:
        return int(row.argmax()) < n_frames - self.frames


@dataclass
class EDAtt(_AttentionPolicy):
    name = "edatt"
    paper = "Papi et al. 2023 (ICASSP), beyond the five papers"
    # α, unitless (a share of a unit's attention, 0–1): the mass on the last λ frames that
    # stops emission
    alpha: float = 0.2

    def _stable(self, row, n_frames: int) -> bool:
        return float(row[max(n_frames - self.frames, 0):].sum()) < self.alpha
