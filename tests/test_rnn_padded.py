"""The padded BLSTM encoder computes ESPnet's RNN encoder's function, gradients included."""

import pytest
import torch

from simul.models.espnet_env import import_espnet
from simul.models.extensions.rnn_padded import PaddedRNNEncoder, reverse_within_length


def test_reverse_within_length_by_hand():
    x = torch.tensor([[1.0, 2, 3, 4], [5, 6, 7, 0]]).unsqueeze(-1)
    out = reverse_within_length(x, torch.tensor([4, 3]))
    assert out.squeeze(-1).tolist() == [[4, 3, 2, 1], [7, 6, 5, 0]]


@pytest.mark.parametrize("subsample", [[2, 2, 1], [1, 1, 1]])
def test_same_outputs_and_gradients_as_espnet(subsample):
    rnn_encoder = import_espnet("espnet2.asr.encoder.rnn_encoder").RNNEncoder
    kw = dict(input_size=6, rnn_type="lstm", bidirectional=True, use_projection=True,
              num_layers=3, hidden_size=8, output_size=5, dropout=0.0, subsample=subsample)
    torch.manual_seed(0)
    ref = rnn_encoder(**kw)
    fast = PaddedRNNEncoder(**kw)
    fast.load_state_dict(ref.state_dict())
    lens = torch.tensor([13, 9, 4])
    x = torch.randn(3, 13, 6)
    y_ref, l_ref, _ = ref(x, lens)
    y_fast, l_fast, _ = fast(x, lens)
    assert l_ref.tolist() == l_fast.tolist()
    torch.testing.assert_close(y_fast, y_ref)
    y_ref.pow(2).sum().backward()
    y_fast.pow(2).sum().backward()
    for (name, p), q in zip(ref.named_parameters(), fast.parameters(), strict=True):
        torch.testing.assert_close(q.grad, p.grad, msg=name)


def test_dropout_only_in_training():
    torch.manual_seed(0)
    enc = PaddedRNNEncoder(input_size=4, num_layers=2, hidden_size=8, output_size=8,
                           dropout=0.5, subsample=[1, 1])
    x, lens = torch.randn(2, 7, 4), torch.tensor([7, 5])
    enc.eval()
    torch.testing.assert_close(enc(x, lens)[0], enc(x, lens)[0])
    enc.train()
    assert not torch.allclose(enc(x, lens)[0], enc(x, lens)[0])
