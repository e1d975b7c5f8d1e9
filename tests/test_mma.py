"""simul.models.extensions.mma: the expectations of monotonic attention against brute force
over every monotonic stop path, and M20's AL against simul's own AL (itself checked against
SimulEval).

A path gives each target step i the block z_i where its head stops, z_1 ≤ z_2 ≤ … : step i
scans from z_(i−1) (z_0 = 0) and stops at z with probability p_iz · Π_(z_(i−1) ≤ l < z)
(1 − p_il); a head that passes the last block without stopping stops there (mass
preservation). Enumerating every path and summing its probability is the definition the
closed forms must equal."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from simul.metrics.latency import sentence_latency
from simul.models.extensions import mma


def stop_probability(p_row, start, stop):
    """P(step scanning from ``start`` stops at ``stop``), mass preservation on the last."""
    n = len(p_row)
    stay = math.prod(1 - p_row[k] for k in range(start, stop))
    if stop < n - 1:
        return p_row[stop] * stay
    return stay  # stopped at the last block, or passed it: both end there


def brute_force(p, lookback=None):
    """α (and with ``lookback`` energies, MMA-IL's β) by enumerating every path."""
    n_steps, n_blocks = len(p), len(p[0])
    alpha = [[0.0] * n_blocks for _ in range(n_steps)]
    beta = [[0.0] * n_blocks for _ in range(n_steps)]
    for path in itertools.product(range(n_blocks), repeat=n_steps):
        if any(b < a for a, b in itertools.pairwise((0, *path))):
            continue
        prob = math.prod(stop_probability(p[i], start, stop)
                         for i, (start, stop) in enumerate(itertools.pairwise((0, *path))))
        for i, z in enumerate(path):
            alpha[i][z] += prob
            if lookback is not None:  # soft attention over blocks 0..z
                weights = [math.exp(lookback[i][j]) for j in range(z + 1)]
                for j, w in enumerate(weights):
                    beta[i][j] += prob * w / sum(weights)
    return alpha, beta


@pytest.mark.parametrize("seed, steps, blocks", [(0, 1, 1), (1, 2, 3), (2, 3, 4), (3, 4, 5),
                                                 (4, 4, 2), (5, 2, 5)])
def test_expected_alignment_and_lookback_equal_the_sum_over_paths(seed, steps, blocks):
    g = torch.Generator().manual_seed(seed)
    p = torch.rand(steps, blocks, generator=g, dtype=torch.float64)
    u = torch.randn(steps, blocks, generator=g, dtype=torch.float64)
    want_alpha, want_beta = brute_force(p.tolist(), u.tolist())
    alpha = mma.expected_alignment(p)
    np.testing.assert_allclose(alpha.numpy(), want_alpha, atol=1e-9)
    np.testing.assert_allclose(alpha.sum(dim=-1).numpy(), [1.0] * steps)
    np.testing.assert_allclose(mma.infinite_lookback(alpha, u).numpy(), want_beta, atol=1e-9)


def test_without_mass_preservation_the_head_may_not_stop():
    # one step, p = (0.5, 0.5): stops at 0 with 1/2, at 1 with 1/4, nowhere with 1/4
    p = torch.tensor([[0.5, 0.5]], dtype=torch.float64)
    assert mma.expected_alignment(p, mass_preservation=False).tolist() == [[0.5, 0.25]]
    assert mma.expected_alignment(p).tolist() == [[0.5, 0.5]]


def test_stops_near_certain_stay_finite():
    # p = 1 − 1e−12 on a long row: the closed form's cumprod(1 − p) underflows to 0 in a
    # division; the log space does not
    p = torch.full((3, 40), 1 - 1e-12, dtype=torch.float64)
    alpha = mma.expected_alignment(p)
    assert torch.isfinite(alpha).all()
    assert alpha[:, 0].tolist() == pytest.approx([1.0, 1.0, 1.0])


def test_padding_blocks_are_never_stopped_at_and_heads_broadcast():
    # batch of 2 × 2 heads; the second sequence has 2 real blocks of 4: its α equals the
    # α of its first 2 blocks alone, and is 0 on the padding
    g = torch.Generator().manual_seed(7)
    p = torch.rand(2, 2, 3, 4, generator=g, dtype=torch.float64)
    mask = torch.tensor([[True] * 4, [True, True, False, False]]).unsqueeze(1)  # (B, 1, J)
    alpha = mma.expected_alignment(p, source_mask=mask)
    for h in range(2):
        np.testing.assert_allclose(alpha[0, h].numpy(), mma.expected_alignment(p[0, h]).numpy())
        short = mma.expected_alignment(p[1, h, :, :2])
        np.testing.assert_allclose(alpha[1, h, :, :2].numpy(), short.numpy())
        assert alpha[1, h, :, 2:].abs().max().item() == 0.0
        u = torch.randn(3, 4, generator=g, dtype=torch.float64)
        beta = mma.infinite_lookback(alpha[1, h], u, mask[1, 0])
        np.testing.assert_allclose(beta[:, :2].numpy(),
                                   mma.infinite_lookback(short, u[:, :2]).numpy())


def test_gradients_flow_to_the_energies():
    energy = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    alpha = mma.expected_alignment(torch.sigmoid(energy))
    (alpha * torch.arange(3.0, dtype=torch.float64)).sum().backward()
    assert torch.isfinite(energy.grad).all() and energy.grad.abs().sum() > 0


def test_expected_delays_take_the_slowest_head():
    # head 0 stops at block 0 then 1; head 1 at block 1 then 2; blocks read at 280, 560, 840
    alpha = torch.tensor([[[1.0, 0, 0], [0, 1.0, 0]], [[0, 1.0, 0], [0, 0, 1.0]]])
    delays = mma.expected_delays(alpha, torch.tensor([280.0, 560.0, 840.0]), head_dim=0)
    assert delays.tolist() == [560.0, 840.0]
    half = torch.tensor([[0.5, 0.5, 0.0]])
    assert mma.expected_delays(half, torch.tensor([280.0, 560.0, 840.0])).tolist() == [420.0]


@pytest.mark.parametrize("delays, source_ms, ref_len", [
    ([300.0, 900.0, 1500.0], 2000.0, 3),      # none reaches |X|: every step counts
    ([300.0, 2000.0, 2000.0], 2000.0, 4),     # τ = 2
    ([2500.0, 2500.0], 2000.0, 2),            # τ = 1
    ([100.0, 200.0, 400.0, 800.0, 1600.0], 1700.0, 3),
])
def test_average_lagging_is_simuls_al(delays, source_ms, ref_len):
    # simul's AL (checked against SimulEval's on random logs) with the reference's length;
    # M20 eq. 1 is that AL in time
    want = sentence_latency("AL", delays, source_ms, ref_len)
    got = mma.average_lagging(torch.tensor([delays]), torch.tensor([source_ms]),
                              torch.tensor([float(ref_len)]))
    assert got.item() == pytest.approx(want)


def test_latency_loss_by_hand_and_masked_steps():
    # AL of (300, 900, 1500), |X| 2000, |Y*| 3: (300 + (900 − 666.7) + (1500 − 1333.3)) / 3
    # = 233.33; of (1000, 1000) with |X| 1000, |Y*| 1: τ = 1, AL = 1000 − 0 = 1000. Padded
    # steps do not count; an utterance with AL ≤ 0 is not regularised
    delays = torch.tensor([[300.0, 900.0, 1500.0], [1000.0, 1000.0, 0.0]])
    mask = torch.tensor([[True, True, True], [True, True, False]])
    al = mma.average_lagging(delays, torch.tensor([2000.0, 1000.0]),
                             torch.tensor([3.0, 1.0]), mask)
    assert al.tolist() == pytest.approx([700 / 3, 1000.0])
    loss = mma.latency_loss(delays, torch.tensor([2000.0, 1000.0]), torch.tensor([3.0, 1.0]),
                            0.01, mask)
    assert loss.item() == pytest.approx(0.01 * (700 / 3 + 1000.0))
    early = mma.latency_loss(torch.tensor([[0.0, 0.0]]), torch.tensor([1000.0]),
                             torch.tensor([1.0]), 0.1)
    assert early.item() == 0.0  # AL = (0 + (0 − 1000)) / 2 < 0: max(C, 0) = 0
