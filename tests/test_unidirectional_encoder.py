"""The unidirectional text encoder: ESPnet's Transformer encoder where no position sees a
later one — a prefix encodes as the prefix of the whole, and where the causal mask does not
bind its outputs are ESPnet's bidirectional encoder's."""

import pytest
import torch

from simul.models.espnet_env import import_espnet
from simul.models.extensions.unidirectional_encoder import UnidirectionalTransformerEncoder

KW = dict(input_size=8, output_size=16, attention_heads=2, linear_units=32,
          dropout_rate=0.0, positional_dropout_rate=0.0, attention_dropout_rate=0.0,
          input_layer="linear", normalize_before=True)


def _pair(num_blocks):
    torch.manual_seed(0)
    ref = import_espnet("espnet2.asr.encoder.transformer_encoder").TransformerEncoder(
        num_blocks=num_blocks, **KW)
    uni = UnidirectionalTransformerEncoder(num_blocks=num_blocks, **KW)
    uni.load_state_dict(ref.state_dict())  # same parameters, same keys
    return ref.eval(), uni.eval()


def test_prefix_encodes_as_prefix_of_whole():
    _, uni = _pair(3)
    x = torch.randn(1, 9, 8)
    whole, lens, _ = uni(x, torch.tensor([9]))
    assert lens.tolist() == [9]
    for p in (1, 4, 8):
        prefix, _, _ = uni(x[:, :p], torch.tensor([p]))
        torch.testing.assert_close(prefix[0], whole[0, :p])


def test_bidirectional_encoder_does_not_have_the_prefix_property():
    ref, _ = _pair(3)
    x = torch.randn(1, 9, 8)
    whole, _, _ = ref(x, torch.tensor([9]))
    prefix, _, _ = ref(x[:, :4], torch.tensor([4]))
    assert not torch.allclose(prefix[0], whole[0, :4], atol=1e-4)


def test_equals_espnet_where_the_mask_does_not_bind():
    # one layer: the last position attends to every position in both encoders
    ref, uni = _pair(1)
    x = torch.randn(2, 6, 8)
    lens = torch.tensor([6, 6])
    torch.testing.assert_close(uni(x, lens)[0][:, -1], ref(x, lens)[0][:, -1])
    # any depth: a one-unit source has no later position
    ref, uni = _pair(3)
    torch.testing.assert_close(uni(x[:, :1], torch.tensor([1, 1]))[0],
                               ref(x[:, :1], torch.tensor([1, 1]))[0])


def test_padding_changes_nothing():
    _, uni = _pair(2)
    a, b = torch.randn(1, 7, 8), torch.randn(1, 4, 8)
    batch = torch.cat([a, torch.cat([b, torch.randn(1, 3, 8)], dim=1)])
    out, lens, _ = uni(batch, torch.tensor([7, 4]))
    assert lens.tolist() == [7, 4]
    torch.testing.assert_close(out[0], uni(a, torch.tensor([7]))[0][0])
    torch.testing.assert_close(out[1, :4], uni(b, torch.tensor([4]))[0][0])


def test_refuses_what_it_does_not_implement():
    with pytest.raises(ValueError, match="subsampling"):
        UnidirectionalTransformerEncoder(input_size=80, output_size=16, attention_heads=2,
                                         num_blocks=1, input_layer="conv2d")


def test_a_text_mt_with_it_loads_and_reencodes_prefixes_as_the_whole(tmp_path):
    # a packed wait-k MT names the encoder in its config; TextMT registers it on load
    from simul.models.adapters.cascade import TextMT
    from simul.models.extensions import unidirectional_encoder
    from tests.conftest import CASCADE_CHARS, make_tiny_task_model, tiny_mt_config

    unidirectional_encoder.register()  # to build the file; loading registers it again
    conf = tiny_mt_config(CASCADE_CHARS)
    conf["encoder"] = "transformer_unidirectional"
    directory = make_tiny_task_model(tmp_path / "mt", "mt", conf, seed=3)
    mt = TextMT(directory / "config.yaml", directory / "model.pth")
    assert isinstance(mt.model.encoder, UnidirectionalTransformerEncoder)
    whole = mt.encode_words(["ab", "c", "ba"])
    prefix = mt.encode_words(["ab", "c"])  # "a b _ c": 4 units
    torch.testing.assert_close(prefix.states, whole.states[: prefix.states.shape[0]])
