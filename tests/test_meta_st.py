"""The speech-and-text model of H20's meta-learning: its speech loss is ESPnet's ST loss,
its text path shares the encoder blocks, and a meta step touches only what a task uses."""

import numpy as np
import pytest
import torch

from simul.models.adapters.meta_st import Batch, MultiModalST, build_st
from simul.models.training import meta

UNITS = ["<blank>", "<unk>", "▁a", "▁b", "c", "d", "<2en>", "<sos/eos>"]


def _model(seed=0):
    conf = {
        "token_type": "bpe", "token_list": UNITS, "src_token_type": "bpe",
        "src_token_list": UNITS, "frontend": "default",
        "frontend_conf": {"n_fft": 512, "win_length": 400, "hop_length": 160, "n_mels": 40},
        "normalize": "utterance_mvn",
        "encoder": "conformer",
        "encoder_conf": {"output_size": 32, "attention_heads": 2, "linear_units": 64,
                         "num_blocks": 2, "input_layer": "conv2d8", "macaron_style": True,
                         "rel_pos_type": "latest", "pos_enc_layer_type": "rel_pos",
                         "selfattention_layer_type": "rel_selfattn", "use_cnn_module": True,
                         "cnn_module_kernel": 7, "dropout_rate": 0.0,
                         "positional_dropout_rate": 0.0, "attention_dropout_rate": 0.0},
        "decoder": "transformer",
        "decoder_conf": {"attention_heads": 2, "linear_units": 64, "num_blocks": 2,
                         "dropout_rate": 0.0, "positional_dropout_rate": 0.0,
                         "self_attention_dropout_rate": 0.0, "src_attention_dropout_rate": 0.0},
        "model_conf": {"asr_weight": 0.0, "mtlalpha": 0.0, "mt_weight": 0.0,
                       "lsm_weight": 0.1},
        "init": None,
    }
    torch.manual_seed(seed)
    st, _ = build_st(conf)
    return MultiModalST(st, src_vocab_size=len(UNITS))


def _speech_batch(start):
    rng = np.random.default_rng(1)
    audio = torch.tensor(rng.standard_normal((2, 16000)).astype(np.float32)) * 0.1
    return Batch("speech", audio, torch.tensor([16000, 12000]),
                 torch.tensor([[2, 4, 3], [5, 2, 0]]), torch.tensor([3, 2]), start)


def _text_batch():
    return Batch("text", torch.tensor([[2, 3, 4], [4, 5, 0]]), torch.tensor([3, 2]),
                 torch.tensor([[3, 2], [4, 0]]), torch.tensor([2, 1]),
                 UNITS.index("<2en>"))


def test_speech_loss_is_espnets_st_loss():
    model = _model().eval()
    st = model.st
    batch = _speech_batch(st.sos)
    ours = model(batch)
    targets = batch.targets.clone()
    targets[1, 2] = -1  # ESPnet's padding
    loss, stats, _ = st(batch.inputs, batch.input_lengths, targets, batch.target_lengths)
    torch.testing.assert_close(ours, loss.squeeze(0))
    # another start unit is another conditioning
    assert not torch.allclose(model(_speech_batch(UNITS.index("<2en>"))), ours)


def test_text_path_is_espnets_encoder_on_embedded_units():
    # the reference: ESPnet's own ConformerEncoder.forward (masks, blocks, final norm) with
    # its input layer swapped for the text embedding and the shared positional encoding
    model = _model().eval()
    batch = _text_batch()
    enc, lens = model.encode_text(batch.inputs, batch.input_lengths)
    assert enc.shape == (2, 3, 32) and lens.tolist() == [3, 2]
    encoder = model.st.encoder
    speech_layer = encoder.embed
    encoder.embed = torch.nn.Sequential(model.text_embed, speech_layer.pos_enc)
    try:
        ref, ref_lens, _ = encoder(batch.inputs, batch.input_lengths)
    finally:
        encoder.embed = speech_layer
    torch.testing.assert_close(enc, ref)
    assert ref_lens.tolist() == [3, 2]


@pytest.mark.parametrize("modality", ["speech", "text"])
def test_a_meta_step_updates_only_what_the_task_uses(modality):
    model = _model()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    batch = _speech_batch(model.st.sos) if modality == "speech" else _text_batch()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    meta.meta_step(model, batch, batch, 0.1, opt)
    changed = {n for n, p in model.named_parameters() if not torch.equal(p, before[n])}
    assert any(n.startswith("st.encoder.encoders.") for n in changed)
    assert any(n.startswith("st.decoder.") for n in changed)
    speech_front = {n for n in changed if n.startswith("st.encoder.embed.")}
    if modality == "speech":
        assert speech_front and "text_embed.weight" not in changed
    else:
        assert not speech_front and "text_embed.weight" in changed
    assert set(model.st_state()) == set(model.st.state_dict())
    assert not any(k.startswith("text_embed") for k in model.st_state())
