"""``transformer_mma``: ESPnet's Transformer decoder with monotonic multihead attention.

M20 (Ma, Pino and Koehn 2020) pairs its pre-decision module with a flexible policy:
monotonic multihead attention (MMA; Ma et al. 2020, ICLR). Every head of every decoder
layer scans the pre-decision blocks left to right and stops, for each target step, where
its stepwise probability p_ij = σ(energy_ij) first reaches 0.5; a step is written once
every head has stopped. This decoder is ESPnet's Transformer decoder whose cross-attention
is :class:`MonotonicMultiheadAttention`, MMA-IL (infinite lookback: soft attention over
every encoder frame up to the end of the block where the head stops):

- The blocks are what M20's pre-decision groups: fixed, one block per Δt = ``step_ms`` of
  audio (eq. 2), block j ending at the encoder frame read at (j + 1) · Δt; or oracle
  (``pre_decision: word | phoneme``, eq. 3), a block per source word or phoneme ending at
  its end, the times coming with each batch (``simul train`` exports them as data
  ``block_ms``). The monotonic energy of a block reads the encoder state at its end (the
  state at the trigger).
- Training attends with the expectation over the stops (:mod:`simul.models.extensions.mma`); noise
  on the monotonic energies (``noise_std``) pushes p towards 0 or 1, as MMA trains.
- The latency term of M20 eq. 4 on the expected delays (:func:`latency_term`), weighted by
  ``latency_weight`` (λ), with the variance across heads of the MMA paper
  (``variance_weight``), is added to ESPnet's loss by the model wrapper :func:`register`
  installs; 0 for both trains MMA for quality alone (M20's first stage).
- Inference is step by step through :class:`simul.models.adapters.mma_st.ESPnetMMA`, which tells
  each head which blocks have been read and where it stopped for the previous step
  (:class:`StepContext`); the ``mma`` policy reads on while a head has not stopped.

The cross-attention keeps ESPnet's parameter names (``linear_q``, ``linear_k``,
``linear_v``, ``linear_out``), so an offline decoder's weights start the soft attention,
and adds ``linear_q_mono``, ``linear_k_mono`` and ``energy_bias`` for the stops.

Training registers the decoder with ESPnet's ST task as ``transformer_mma`` and wraps the
ST model's ``forward`` to add the latency term (:func:`register`); loading a packed MMA
model registers it too (its config names ``transformer_mma``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from simul.models.espnet_env import import_espnet
from simul.models.extensions import decoder_scorers, mma

_decoders = import_espnet("espnet2.asr.decoder.transformer_decoder")
_attention = import_espnet("espnet.nets.pytorch_backend.transformer.attention")
_nets = import_espnet("espnet.nets.pytorch_backend.nets_utils")


PRE_DECISIONS = ("fixed", "word", "phoneme")


@dataclass
class Blocks:
    """The pre-decision blocks of a batch: ``ends`` (B, J) the index of each block's last
    encoder frame, ``ms`` (B, J) the time (ms) at which the block has been read, ``valid``
    (B, J) True on real blocks (utterances have different numbers of blocks)."""

    ends: torch.Tensor
    ms: torch.Tensor
    valid: torch.Tensor


def fixed_blocks(hlens: torch.Tensor, step_ms: float, frame_ms: float) -> Blocks:
    """M20's fixed pre-decision on encoder outputs of ``hlens`` frames of ``frame_ms``:
    block j is read at min((j + 1) · Δt, |X|) and ends at the frame read by then
    (:func:`block_end`); the last block of an utterance ends with its source."""
    source_ms = hlens.double() * frame_ms
    counts = torch.ceil(source_ms / step_ms - 1e-9).long().clamp(min=1)  # blocks per utt
    n = int(counts.max())
    j = torch.arange(n, device=hlens.device)
    ms = torch.minimum((j.unsqueeze(0) + 1).double() * step_ms, source_ms.unsqueeze(1))
    ends = block_end(ms, frame_ms, hlens.unsqueeze(1))
    return Blocks(ends=ends, ms=ms.float(), valid=j.unsqueeze(0) < counts.unsqueeze(1))


def oracle_blocks(times: torch.Tensor, counts: torch.Tensor, hlens: torch.Tensor,
                  frame_ms: float) -> Blocks:
    """M20's oracle pre-decision (eq. 3): a block per oracle word or phoneme, read at its
    end (``times`` (B, N) ms, the first ``counts`` of each row real); ends at or past the
    source's end are dropped and the last block ends with the source, as the ``mma``
    policy's blocks do (:mod:`simul.policies.mma`)."""
    source_ms = hlens.double() * frame_ms
    rows = []
    for row, n, end in zip(times.double(), counts.tolist(), source_ms.tolist(), strict=True):
        inside = [float(t) for t in row[: int(n)] if float(t) < end - 1e-6]
        rows.append([*inside, end])
    width = max(len(r) for r in rows)
    ms = torch.tensor([r + [r[-1]] * (width - len(r)) for r in rows], dtype=torch.float64,
                      device=hlens.device)
    lengths = torch.tensor([len(r) for r in rows], device=hlens.device)
    valid = torch.arange(width, device=hlens.device).unsqueeze(0) < lengths.unsqueeze(1)
    return Blocks(ends=block_end(ms, frame_ms, hlens.unsqueeze(1)), ms=ms.float(), valid=valid)


def block_end(ms: torch.Tensor, frame_ms: float, n_frames: torch.Tensor | int) -> torch.Tensor:
    """Index of the last encoder frame read at ``ms``: ⌊ms / frame_ms⌋ frames, at most
    ``n_frames``, at least one (a block before the first frame attends to the first)."""
    read = torch.floor(ms.double() / frame_ms + 1e-9).long()
    return (torch.minimum(read, torch.as_tensor(n_frames, device=ms.device)) - 1).clamp(min=0)


@dataclass
class StepContext:
    """What one inference step tells a head: the last frame of each block read so far
    (``ends``, (J,) long), where each head stopped for the previous step (``start``, (H,)
    long: the head scans from there), whether the source has ended (then a head that
    finds no stop stops at the last block, as mass preservation trains it), and which
    target step it is."""

    ends: torch.Tensor
    start: torch.Tensor
    finished: bool
    step: int = 0  # the target step (0-based) being decided
    # the head's keys and values of the encoder output, (1, H, T, d_k) each, when made
    # already (memory_kv): what forward_qkv would project again, the same values
    memory_kv: tuple[torch.Tensor, torch.Tensor] | None = None


class MonotonicMultiheadAttention(_attention.MultiHeadedAttention):
    """MMA-IL cross-attention over pre-decision blocks (see the module doc).

    Training: ``blocks`` set by the decoder before each forward; ``alpha`` (B, H, L, J) is
    left for the latency term. Inference: ``context`` set by the adapter; ``stops`` (H,)
    and ``waiting`` (a head found no stop among the blocks read) are left for it."""

    def __init__(self, n_head: int, n_feat: int, dropout_rate: float, *,
                 energy_bias_init: float = -2.0, noise_std: float = 1.0):
        super().__init__(n_head, n_feat, dropout_rate)
        self.linear_q_mono = nn.Linear(n_feat, n_feat)
        self.linear_k_mono = nn.Linear(n_feat, n_feat)
        self.energy_bias = nn.Parameter(torch.full((1,), float(energy_bias_init)))
        self.noise_std = float(noise_std)
        self.blocks: Blocks | None = None
        self.alpha: torch.Tensor | None = None
        self.context: StepContext | None = None
        self.stops: torch.Tensor | None = None
        self.waiting = False

    def stop_probability(self, query: torch.Tensor, block_keys: torch.Tensor) -> torch.Tensor:
        """p (B, H, L, J) = σ(q_mono · k_mono / √d_k + bias) of queries (B, L, D) for blocks
        whose keys are the encoder states (B, J, D) at their ends; with noise in training."""
        b = query.size(0)
        q = self.linear_q_mono(query).view(b, -1, self.h, self.d_k).transpose(1, 2)
        k = self.linear_k_mono(block_keys).view(b, -1, self.h, self.d_k).transpose(1, 2)
        energy = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.d_k) + self.energy_bias
        if self.training and self.noise_std > 0:
            energy = energy + self.noise_std * torch.randn_like(energy)
        return torch.sigmoid(energy)

    def forward(self, query, key, value, mask, expand_kv=False):
        if self.context is not None:
            return self._step(query, key, value)
        if self.blocks is None:
            raise RuntimeError("transformer_mma: the cross-attention needs its pre-decision "
                               "blocks (set by MMATransformerDecoder.forward) or a step "
                               "context (simul.models.adapters.mma_st.ESPnetMMA); ESPnet's own "
                               "decoding cannot run an MMA decoder")
        blocks = self.blocks
        b, n_frames = key.size(0), key.size(1)
        q, k, v = self.forward_qkv(query, key, value)  # (B, H, L, d_k), (B, H, T, d_k) …
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.d_k)  # (B, H, L, T)
        gather = blocks.ends.unsqueeze(-1).expand(-1, -1, key.size(-1))
        p = self.stop_probability(query, torch.gather(key, 1, gather))  # (B, H, L, J)
        alpha = mma.expected_alignment(p, source_mask=blocks.valid.unsqueeze(1))
        self.alpha = alpha
        # the stop at block j, moved to the block's last frame: (B, H, L, T)
        at_frames = torch.zeros(b, self.h, q.size(2), n_frames, dtype=alpha.dtype,
                                device=alpha.device)
        index = blocks.ends.view(b, 1, 1, -1).expand_as(alpha)
        at_frames = at_frames.scatter_add(-1, index, alpha * blocks.valid.view(b, 1, 1, -1))
        frame_mask = mask.bool() if mask is not None else None  # (B, 1, T)
        beta = mma.infinite_lookback(at_frames, scores, source_mask=frame_mask)
        self.attn = beta
        x = torch.matmul(self.dropout(beta), v)  # (B, H, L, d_k)
        x = x.transpose(1, 2).contiguous().view(b, -1, self.h * self.d_k)
        return self.linear_out(x)

    def _step(self, query, key, value):
        """One target step (batch 1, the last query): each head stops at the first block,
        from where it stopped before, with p ≥ 0.5; the soft attention reads every frame up
        to that block's end."""
        ctx = self.context
        if ctx.memory_kv is None:
            q, k, v = self.forward_qkv(query, key, value)  # (1, H, 1, d_k), (1, H, T, d_k)
        else:  # forward_qkv's query part; its keys and values made once per encoder output
            k, v = ctx.memory_kv
            q = self.q_norm(decoder_scorers.heads(self, query, self.linear_q))
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.d_k)  # (1, H, 1, T)
        ends = ctx.ends.to(key.device)
        p = self.stop_probability(query, key[:, ends])[0, :, -1]  # (H, J)
        n_blocks = p.size(-1)
        blocks = torch.arange(n_blocks, device=p.device)
        allowed = (blocks.unsqueeze(0) >= ctx.start.unsqueeze(1)) & (p >= 0.5)  # (H, J)
        found = allowed.any(dim=-1)
        first = torch.where(found, allowed.float().argmax(dim=-1),
                            torch.full_like(ctx.start, n_blocks - 1))
        self.stops = torch.maximum(first, ctx.start)
        self.waiting = not ctx.finished and not bool(found.all())
        frames = torch.arange(key.size(1), device=key.device)
        seen = frames.view(1, -1) <= ends[self.stops].view(-1, 1)  # (H, T)
        scores = scores.masked_fill(~seen.view(1, self.h, 1, -1), float("-inf"))
        attn = torch.softmax(scores, dim=-1)
        self.attn = attn
        x = torch.matmul(attn, v).transpose(1, 2).contiguous().view(1, -1, self.h * self.d_k)
        return self.linear_out(x)


def latency_term(decoder: MMATransformerDecoder, blocks: Blocks, hlens: torch.Tensor,
                 ys_in_lens: torch.Tensor) -> tuple[torch.Tensor, dict]:
    """λ · max(C(D), 0) + λ_var · Var_heads(d), both averaged over the batch (ESPnet's loss
    is a per-utterance sum averaged over the batch).

    d^{l,h}_i: the expected time (in ``latency_unit_ms``) at which head h of layer l has
    read what step i attends to (:func:`simul.models.extensions.mma.expected_delays`); D_i: their
    softmax-weighted average across heads (the MMA paper's "weighted average", a smooth
    slowest head); C: M20's AL (eq. 1) of D against the source length and the reference's
    units (</s> included). The variance is across heads, averaged over the real steps."""
    unit = decoder.latency_unit_ms
    alphas = [layer.src_attn.alpha for layer in decoder.decoders]
    delays = torch.cat([mma.expected_delays(a, blocks.ms.unsqueeze(1) / unit)
                        for a in alphas], dim=1)  # (B, layers · H, L)
    steps = torch.arange(delays.size(-1), device=delays.device)
    target = steps.unsqueeze(0) < ys_in_lens.unsqueeze(1)  # (B, L)
    weights = torch.softmax(delays, dim=1)
    gathered = (weights * delays).sum(dim=1)  # (B, L)
    source = hlens.to(delays.dtype) * decoder.frame_ms / unit
    al = mma.average_lagging(gathered, source, ys_in_lens.to(delays.dtype), target)
    variance = (delays.var(dim=1, unbiased=False) * target).sum(dim=-1)
    variance = variance / target.sum(dim=-1).clamp(min=1)
    term = (decoder.latency_weight * al.clamp(min=0) + decoder.variance_weight * variance)
    stats = {"latency_al": al.detach().mean() * unit,  # ms
             "latency_var": variance.detach().mean()}
    return term.mean(), stats


class MMATransformerDecoder(_decoders.TransformerDecoder):
    """ESPnet's Transformer decoder whose cross-attention is MMA-IL over M20's fixed
    pre-decision blocks (see the module doc)."""

    def __init__(self, vocab_size: int, encoder_output_size: int, *, step_ms: float = 280.0,
                 pre_decision: str = "fixed", frame_ms: float = 80.0, latency_weight: float = 0.0,
                 variance_weight: float = 0.0, latency_unit_ms: float | None = None,
                 energy_bias_init: float = -2.0, noise_std: float = 1.0,
                 attention_heads: int = 4, src_attention_dropout_rate: float = 0.1, **kwargs):
        super().__init__(vocab_size, encoder_output_size, attention_heads=attention_heads,
                         src_attention_dropout_rate=src_attention_dropout_rate, **kwargs)
        for name, value in (("step_ms", step_ms), ("frame_ms", frame_ms)):
            if not value > 0:
                raise ValueError(f"decoder_conf.{name}: must be > 0, got {value!r}")
        for name, value in (("latency_weight", latency_weight),
                            ("variance_weight", variance_weight), ("noise_std", noise_std)):
            if not value >= 0:
                raise ValueError(f"decoder_conf.{name}: must be ≥ 0, got {value!r}")
        if pre_decision not in PRE_DECISIONS:
            raise ValueError(f"decoder_conf.pre_decision: one of {PRE_DECISIONS}, got "
                             f"{pre_decision!r}")
        self.pre_decision = pre_decision
        self.oracle: tuple[torch.Tensor, torch.Tensor] | None = None  # (times, counts)
        self.step_ms, self.frame_ms = float(step_ms), float(frame_ms)
        self.latency_weight, self.variance_weight = float(latency_weight), float(variance_weight)
        self.latency_unit_ms = float(latency_unit_ms or frame_ms)
        size = encoder_output_size
        for layer in self.decoders:
            layer.src_attn = MonotonicMultiheadAttention(
                attention_heads, size, src_attention_dropout_rate,
                energy_bias_init=energy_bias_init, noise_std=noise_std)
        self.latency: torch.Tensor | None = None  # the last training forward's term
        self.latency_stats: dict = {}

    def blocks(self, hlens: torch.Tensor) -> Blocks:
        """This batch's pre-decision blocks: fixed, or the oracle ends the model wrapper
        took from the batch (``block_ms``, :func:`register`)."""
        if self.pre_decision == "fixed":
            return fixed_blocks(hlens, self.step_ms, self.frame_ms)
        if self.oracle is None:
            raise RuntimeError(f"transformer_mma: pre_decision={self.pre_decision!r} needs the "
                               "batch's oracle ends (data 'block_ms', written by simul train)")
        times, counts = self.oracle
        self.oracle = None
        return oracle_blocks(times.to(hlens.device), counts, hlens, self.frame_ms)

    def attentions(self) -> list[MonotonicMultiheadAttention]:
        return [layer.src_attn for layer in self.decoders]

    def forward(self, hs_pad, hlens, ys_in_pad, ys_in_lens, return_hs=False,
                return_all_hs=False):
        blocks = self.blocks(hlens.to(hs_pad.device))
        for att in self.attentions():
            att.blocks, att.context = blocks, None
        try:
            out = super().forward(hs_pad, hlens, ys_in_pad, ys_in_lens, return_hs=return_hs,
                                  return_all_hs=return_all_hs)
            self.latency, self.latency_stats = latency_term(self, blocks, hlens.to(
                hs_pad.device), ys_in_lens.to(hs_pad.device))
        finally:
            for att in self.attentions():
                att.blocks = None
        return out


def _forward_with_latency(original):
    def forward(self, *args, **kwargs):
        decoder = self.decoder
        times, counts = kwargs.pop("block_ms", None), kwargs.pop("block_ms_lengths", None)
        if isinstance(decoder, MMATransformerDecoder) and times is not None:
            decoder.oracle = (times, counts)
        loss, stats, weight = original(self, *args, **kwargs)
        if isinstance(decoder, MMATransformerDecoder) and decoder.latency is not None:
            loss = loss + decoder.latency
            stats = {**stats, "loss": loss.detach(),
                     "loss_latency": decoder.latency.detach(), **decoder.latency_stats}
            decoder.latency = None
        return loss, stats, weight

    forward.simul_mma = True
    return forward


def register() -> None:
    """Make ``decoder: transformer_mma`` available to ESPnet's ST task, and have the ST
    model add the decoder's latency term to its loss (a no-op for other decoders)."""
    st = import_espnet("espnet2.tasks.st")
    st.decoder_choices.classes["transformer_mma"] = MMATransformerDecoder
    model = import_espnet("espnet2.st.espnet_model").ESPnetSTModel
    if not getattr(model.forward, "simul_mma", False):
        model.forward = _forward_with_latency(model.forward)
