"""The adapter of an ESPnet2 ST model whose decoder is monotonic multihead attention
(``transformer_mma``, :mod:`simul.models.extensions.mma_decoder`).

An MMA model decides when to write by itself: every head of every decoder layer stops, for
the next target step, at the first pre-decision block (from where it stopped for the step
before) whose stepwise probability reaches 0.5, and the step can be taken once every head
has stopped among the blocks read so far (Ma et al. 2020, ICLR; M20 §3). The adapter runs
one step at a time (:meth:`ESPnetMMA.monotonic_step`) and says whether a head is still
waiting; the ``mma`` policy (:mod:`simul.policies.mma`) reads on when one is.

Decoder state: the positions already consumed keep what they computed over the encoder
output of their time (ESPnet's per-layer cache), as fairseq's simultaneous agent keeps its
incremental state while the encoder is recomputed over the longer prefix; the last
committed unit is consumed over the newest encoder output when the next step is tried.

Offline decoding (``greedy``: ``simul models eval``, the ``offline`` policy, a policy's
finish) is the same monotonic decoding with the whole input read: the blocks of the fixed
pre-decision the model was trained with over the whole source (a model trained on oracle
word or phoneme ends: a block per encoder frame), no head waiting (a head that finds no
stop stops at the last block). Beam search and the policies that read other
models' attention or step their decoders are refused with a message.
"""

from __future__ import annotations

import math

import torch

from simul.models.adapter import (
    SAMPLE_RATE,
    Encoded,
    Hyp,
    ModelError,
    MonotonicState,
    MonotonicStep,
)
from simul.models.adapters.espnet_st import ESPnetST

# the seam's names (simul.models.adapter) stay importable from here, where they were defined
__all__ = ["ESPnetMMA", "MonotonicState", "MonotonicStep"]


class ESPnetMMA(ESPnetST):
    """An ESPnet2 ST model with a ``transformer_mma`` decoder behind simul's adapter."""

    greedy_only = True  # no beam search: the heads decide when each step is taken
    decoder_name = "transformer_mma"  # what the mma policy needs (Policy.needs_decoder)
    serves = {"mma": "its heads decide when to write",
              "offline": "greedy monotonic decoding of the whole source, beam 1"}
    """The policies that decode an MMA model (:func:`simul.decoding.session.check_fit` refuses the
    others): the other policies step or search an offline decoder over each prefix read; an
    MMA decoder over a prefix taken as the whole source lets every head stop at its last
    block, so the policy, not the model, would decide when to write (no paper's setting)."""

    def __init__(self, config, model_file, device: str = "cpu"):
        from simul.models import extensions
        from simul.models.extensions import mma_decoder

        extensions.register()
        super().__init__(config, model_file, device)
        dec = self.model.decoder
        if not isinstance(dec, mma_decoder.MMATransformerDecoder):
            raise ModelError(f"{self.config_path}: decoder {type(dec).__name__} is not "
                             "transformer_mma")
        self.use_decoder_scorers = False
        self.pre_decision = dec.pre_decision  # what it was trained with: fixed, word, phoneme
        self.pre_decision_ms = dec.step_ms  # the fixed pre-decision's Δt
        self.heads = dec.decoders[0].src_attn.h

    @property
    def frame_ms(self) -> float:
        return self.subsampling * self.hop_ms

    def _derive(self, enc: Encoded) -> Encoded:
        """The heads' keys and values of ``enc``, made as part of encoding (see
        :meth:`ESPnetST._derive`): a step projects only its query."""
        if enc.frames:
            self._memory_kv(enc)
        return enc

    # ------------------------------------------------------------------ monotonic steps
    def monotonic_start(self) -> MonotonicState:
        layers = len(self.model.decoder.decoders)
        return MonotonicState([self.sos], None,
                              torch.zeros(layers, self.heads, dtype=torch.long))

    def block_ends(self, enc: Encoded, block_ms: list[float]) -> torch.Tensor:
        """The last encoder frame of each block read at ``block_ms`` (ms)."""
        from simul.models.extensions.mma_decoder import block_end

        return block_end(torch.tensor(block_ms, dtype=torch.float64), self.frame_ms,
                         enc.frames)

    @torch.inference_mode()
    def monotonic_step(self, enc: Encoded, state: MonotonicState, block_ms: list[float], *,
                       finished: bool) -> MonotonicStep:
        """Try the step after ``state.tokens`` with the blocks read at ``block_ms`` (ms,
        increasing; at least one). ``finished``: the source has ended (no head waits)."""
        from simul.models.extensions.mma_decoder import StepContext

        if enc.frames == 0 or not block_ms:
            raise ValueError("monotonic_step: needs encoder frames and at least one block")
        dec = self.model.decoder
        ends = self.block_ends(enc, block_ms)
        ys = torch.tensor([state.tokens], device=self.device)
        mask = _subsequent_mask(len(state.tokens), self.device)
        memory_kv = self._memory_kv(enc)
        for layer, att in enumerate(dec.attentions()):
            att.context = StepContext(ends, state.stops[layer].clone(), finished,
                                      step=len(state.tokens) - 1, memory_kv=memory_kv[layer])
        try:
            logp, cache = dec.forward_one_step(ys, mask, enc.states.unsqueeze(0),
                                               cache=state.cache)
        finally:
            for att in dec.attentions():
                att.context = None
        stops = torch.stack([att.stops for att in dec.attentions()])
        waiting = any(att.waiting for att in dec.attentions())
        return MonotonicStep(waiting, None if waiting else logp[0], stops, cache)

    @staticmethod
    def advance(state: MonotonicState, token: int, step: MonotonicStep) -> MonotonicState:
        """``state`` with ``token`` committed after ``step`` (which was not waiting)."""
        if step.waiting:
            raise ValueError("advance: a waiting step writes nothing")
        return MonotonicState([*state.tokens, token], step.cache, step.stops)

    def whole_source_blocks(self, enc: Encoded) -> list[float]:
        """Block times (ms) over a whole source: the trained fixed pre-decision's (every Δt,
        then the source's end); for a model trained on oracle boundaries, which a bare
        source does not have, every encoder frame (wherever a word could end)."""
        source_ms = 1000.0 * enc.n_samples / SAMPLE_RATE
        step = self.pre_decision_ms if self.pre_decision == "fixed" else self.frame_ms
        n = max(1, math.ceil(source_ms / step - 1e-9))
        return [min((j + 1) * step, source_ms) for j in range(n)]

    def consume(self, enc: Encoded, state: MonotonicState, tokens: list[int],
                block_ms: list[float], *, finished: bool) -> MonotonicState:
        """``state`` after forcing ``tokens`` (each step taken whether or not a head waits)."""
        for tok in tokens:
            step = self.monotonic_step(enc, state, block_ms, finished=finished)
            state = MonotonicState([*state.tokens, tok], step.cache, step.stops)
        return state

    # ------------------------------------------------------------------ offline decoding
    @torch.inference_mode()
    def greedy(self, enc: Encoded, prefix: list[int] = (), *, max_new: int | None = None,
               maxlenratio: float = 0.0, avoid_eos: bool = False,
               state: MonotonicState | None = None) -> Hyp:
        """Monotonic greedy decoding with the whole input read (see the module doc);
        ``state``: a :class:`MonotonicState` for ``prefix`` (or a prefix of it)."""
        prefix = list(prefix)
        cap = self.max_length(enc, maxlenratio)
        budget = cap - len(prefix) if max_new is None else min(max_new, cap - len(prefix))
        if enc.frames == 0 or budget <= 0:
            return Hyp([], 0.0, ended=False, capped=budget <= 0, resume=state)
        blocks = self.whole_source_blocks(enc)
        if not isinstance(state, MonotonicState):
            state = self.monotonic_start()
        if state.tokens[1:] != prefix[: len(state.tokens) - 1]:
            raise ValueError("greedy: the state's tokens must begin the prefix")
        state = self.consume(enc, state, prefix[len(state.tokens) - 1:], blocks,
                             finished=True)
        new, score = [], 0.0
        for _ in range(budget):
            step = self.monotonic_step(enc, state, blocks, finished=True)
            logp = step.logp
            if avoid_eos:
                logp = logp.clone()
                logp[self.eos] = -float("inf")
            tok = int(torch.argmax(logp))
            score += float(logp[tok])
            if tok == self.eos:
                return Hyp(new, score, ended=True, resume=state)
            new.append(tok)
            state = self.advance(state, tok, step)
        return Hyp(new, score, ended=False, capped=len(prefix) + len(new) >= cap,
                   resume=state)

    def beam_search(self, *args, **kwargs):
        raise ModelError(f"{self.config_path}: an MMA model decodes greedily (its heads "
                         "decide when to stop); use beam 1")

    def step(self, *args, **kwargs):
        raise ModelError(f"{self.config_path}: an MMA model is decoded by the mma policy "
                         "(or offline); the other policies step an offline decoder")

    def cross_attention(self, *args, **kwargs):
        raise ModelError(f"{self.config_path}: an MMA model's attention is read through its "
                         "monotonic steps; the attention policies need an offline decoder")


def _subsequent_mask(n: int, device) -> torch.Tensor:
    return torch.tril(torch.ones(n, n, dtype=torch.bool, device=device)).unsqueeze(0)
