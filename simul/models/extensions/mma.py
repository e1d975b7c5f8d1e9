"""Monotonic multihead attention (MMA; Ma et al. 2020, ICLR), the learned policy of Ma et al.
2020b (M20): the expectations that train it.

Each head of each decoder layer scans the source blocks (M20: the encoder states at the
pre-decision triggers) left to right from where it stopped for the previous target step,
and at block j stops for target step i with the stepwise probability p_ij = σ(energy_ij).
Inference stops for real (p ≥ 0.5); training cannot sample the stops, so it attends with
their expectation (Raffel et al. 2017, "Online and linear-time attention by enforcing
monotonic alignments"):

- :func:`expected_alignment` — α_ij, the probability that the head stops at block j for
  step i, given every earlier step's stops. The recurrence q_ij = (1 − p_i,j−1) q_i,j−1 +
  α_i−1,j, α_ij = p_ij q_ij has the closed form α_i = p_i · cumprod′(1 − p_i) ·
  cumsum(α_i−1 / cumprod′(1 − p_i)) (cumprod′: exclusive), computed here in log space
  (``logcumsumexp``), so that a long run of p near 1 does not divide by zero. With mass
  preservation (as MMA trains), a head that does not stop before the last block stops
  there: each row of α sums to 1.
- :func:`infinite_lookback` — MMA-IL's attention: soft attention over every block up to
  the stop, β_ij = Σ_k≥j α_ik · exp(u_ij) / Σ_l≤k exp(u_il), with its own energies u.
  MMA-H (hard) attends to the stop itself: α.
- :func:`expected_delays` and :func:`average_lagging` — the expected ms read when each
  target step is written (a step waits for its slowest head) and M20's latency term
  C(D) = AL on them (eq. 1, 4), which the loss adds as λ · max(C(D), 0).

Indices are 0-based here; shapes are ``(..., I, J)``: any leading dimensions (batch, heads),
I target steps, J source blocks.
"""

from __future__ import annotations

import torch

_TINY = 1e-10


def _log(x: torch.Tensor) -> torch.Tensor:
    return torch.log(x.clamp(min=_TINY))


def expected_alignment(p: torch.Tensor, *, mass_preservation: bool = True,
                       source_mask: torch.Tensor | None = None) -> torch.Tensor:
    """α (..., I, J) from the stepwise stop probabilities ``p`` (..., I, J) in [0, 1]: the
    head starts at block 0 and never moves back. ``source_mask``, True on real blocks, of
    a shape that broadcasts to ``p.shape[:-2] + (J,)`` (e.g. (B, 1, J) for p of shape
    (B, H, I, J)): padding blocks get p = 0 (never stopped at) and, with mass preservation,
    the residual goes to each sequence's last real block."""
    if source_mask is not None:
        p = p * source_mask.unsqueeze(-2).to(p.dtype)
    n_steps, n_blocks = p.shape[-2], p.shape[-1]
    # L_j = Σ_l<j log(1 − p_il): exclusive cumulative sum of log(1 − p)
    log_stay = _log(1 - p)
    excl = torch.cumsum(log_stay, dim=-1) - log_stay
    previous = torch.full(p.shape[:-2] + (n_blocks,), float("-inf"), dtype=p.dtype,
                          device=p.device)
    previous[..., 0] = 0.0  # log α_0: the head starts at block 0
    rows = []
    for i in range(n_steps):
        log_q = excl[..., i, :] + torch.logcumsumexp(previous - excl[..., i, :], dim=-1)
        alpha = p[..., i, :] * torch.exp(log_q)
        if mass_preservation:
            residual = (1 - alpha.sum(dim=-1)).clamp(min=0)
            last = _last_block(source_mask, alpha)
            alpha = alpha + residual.unsqueeze(-1) * last
        rows.append(alpha)
        previous = _log(alpha)
    return torch.stack(rows, dim=-2)


def _last_block(source_mask: torch.Tensor | None, like: torch.Tensor) -> torch.Tensor:
    """One-hot (..., J) on each sequence's last real block."""
    one_hot = torch.zeros_like(like)
    if source_mask is None:
        one_hot[..., -1] = 1.0
        return one_hot
    last = (source_mask.long().sum(dim=-1).clamp(min=1) - 1).expand(like.shape[:-1])
    return one_hot.scatter(-1, last.unsqueeze(-1), 1.0)


def infinite_lookback(alpha: torch.Tensor, energy: torch.Tensor,
                      source_mask: torch.Tensor | None = None) -> torch.Tensor:
    """MMA-IL's expected attention β (..., I, J): softmax of ``energy`` (..., I, J) over the
    blocks up to the stop, in expectation over the stop α (:func:`expected_alignment`)."""
    if source_mask is not None:
        energy = energy.masked_fill(~source_mask.unsqueeze(-2), float("-inf"))
    shift = energy.max(dim=-1, keepdim=True).values.clamp(min=-1e30)
    weights = torch.exp(energy - shift)  # exp(u_ij), scaled per row
    prefix = torch.cumsum(weights, dim=-1)  # Σ_l≤k exp(u_il)
    ratio = alpha / prefix.clamp(min=_TINY)
    after = torch.flip(torch.cumsum(torch.flip(ratio, [-1]), dim=-1), [-1])  # Σ_k≥j
    return weights * after


def expected_delays(alpha: torch.Tensor, block_ms: torch.Tensor, *,
                    head_dim: int | None = None) -> torch.Tensor:
    """Expected source read (ms) when each target step is written: Σ_j α_ij · block_ms_j
    (``block_ms`` (..., J): when block j has been read, e.g. its trigger time). With
    ``head_dim``, the heads of that dimension are reduced as a step waits for its slowest
    head: the largest expected delay."""
    delays = (alpha * block_ms.unsqueeze(-2)).sum(dim=-1)
    return delays.amax(dim=head_dim) if head_dim is not None else delays


def average_lagging(delays: torch.Tensor, source_ms: torch.Tensor,
                    reference_length: torch.Tensor,
                    target_mask: torch.Tensor | None = None) -> torch.Tensor:
    """M20's AL (eq. 1) of ``delays`` (B, I), differentiable in them: the mean over the
    steps up to τ, the first step written with the whole source read (d ≥ |X|; every
    step when none is), of d_i − (i − 1) · |X| / |Y*| (i from 1). ``source_ms`` (B,) is
    |X| in ms, ``reference_length`` (B,) |Y*|; ``target_mask`` (B, I) marks real steps."""
    n = delays.shape[-1]
    if target_mask is None:
        target_mask = torch.ones_like(delays, dtype=torch.bool)
    steps = torch.arange(n, device=delays.device, dtype=delays.dtype)
    oracle = steps.unsqueeze(0) * (source_ms / reference_length).unsqueeze(-1)
    full = (delays.detach() >= source_ms.unsqueeze(-1)) & target_mask
    # τ: the first full step (0-based index + 1); the last real step when none is
    first = torch.where(full.any(dim=-1), full.float().argmax(dim=-1),
                        target_mask.long().sum(dim=-1) - 1)
    counted = (steps.unsqueeze(0) <= first.unsqueeze(-1)) & target_mask
    lag = ((delays - oracle) * counted).sum(dim=-1)
    return lag / counted.sum(dim=-1).clamp(min=1)


def latency_loss(delays: torch.Tensor, source_ms: torch.Tensor,
                 reference_length: torch.Tensor, weight: float,
                 target_mask: torch.Tensor | None = None) -> torch.Tensor:
    """M20 eq. 4's latency term λ · max(C(D), 0) with C = :func:`average_lagging`, summed
    over the batch (only utterances with AL > 0 are regularised)."""
    al = average_lagging(delays, source_ms, reference_length, target_mask)
    return weight * al.clamp(min=0).sum()
