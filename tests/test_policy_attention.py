"""AlignAtt and EDAtt on tiny random models (Transformer and RNN decoders)."""

import pytest
import torch

from simul.decoding.simulate import simulate
from simul.models.adapters.espnet_st import ESPnetST
from simul.policies.attention import AlignAtt, EDAtt
from simul.policies.offline import Offline
from tests.test_simulate import segment


@pytest.fixture(scope="module")
def model(tiny_model_dir):
    return ESPnetST.from_dir(tiny_model_dir)


@pytest.mark.parametrize("policy", [AlignAtt(chunk_ms=5000), EDAtt(chunk_ms=5000)])
def test_reading_everything_first_equals_offline(model, speech, policy):
    assert simulate(model, policy, segment(speech)).units == \
        simulate(model, Offline(), segment(speech)).units


@pytest.mark.parametrize("policy", [AlignAtt(chunk_ms=300, frames=1),
                                    EDAtt(chunk_ms=300, frames=2, alpha=0.3)])
def test_chunked_properties(model, speech, policy):
    rec = simulate(model, policy, segment(speech))
    reads = [ms for ms, _ in rec.trace]
    assert reads == sorted(reads)
    assert all(b - a <= 300 + 1e-9 for a, b in zip(reads, reads[1:], strict=False))
    assert all(d <= rec.source_length for d in rec.delays)
    assert len(rec.delays) == rec.prediction_length


@pytest.mark.parametrize(("argmax", "n_frames", "frames", "stable"),
                         [(3, 10, 2, True), (7, 10, 2, True), (8, 10, 2, False),
                          (9, 10, 0, True)])
def test_alignatt_rule_by_hand(argmax, n_frames, frames, stable):
    row = torch.zeros(n_frames)
    row[argmax] = 1.0
    assert AlignAtt(frames=frames)._stable(row, n_frames) is stable


@pytest.mark.parametrize(("row", "frames", "alpha", "stable"),
                         [([0.5, 0.3, 0.1, 0.1], 2, 0.25, True),   # 0.1 + 0.1 = 0.2 < 0.25
                          ([0.5, 0.2, 0.2, 0.1], 2, 0.25, False),  # 0.3 ≥ 0.25
                          ([0.9, 0.05, 0.05, 0.0], 1, 0.01, True)])  # 0.0 < 0.01
def test_edatt_rule_by_hand(row, frames, alpha, stable):
    assert EDAtt(frames=frames, alpha=alpha)._stable(torch.tensor(row), len(row)) is stable
