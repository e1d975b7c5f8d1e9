"""The wait-k training decoder: target words, frame limits worked out by hand, the masked
cross-attention, equality with ESPnet's decoder when nothing is masked, ESPnet training."""

from __future__ import annotations

import pytest
import torch
import yaml

from simul.models.espnet_env import import_espnet
from simul.models.extensions import unidirectional_encoder
from simul.models.extensions.waitk_decoder import (
    WaitKTransformerDecoder,
    frame_limits,
    register,
    source_word_limits,
    waitk_memory_mask,
    word_index,
)

BPE = ["<blank>", "<unk>", "▁el", "▁ga", "to", ",", "▁c", "<sos/eos>"]
CHAR = ["<blank>", "<unk>", "a", "b", "c", "d", "<space>", "<sos/eos>"]


def flags(units: list[str], unit_type: str) -> tuple[torch.Tensor, torch.Tensor]:
    begins = torch.tensor([unit_type == "bpe" and u.startswith("▁") for u in units])
    sep = torch.tensor([unit_type == "char" and u == "<space>" for u in units])
    return begins, sep


def ids(units: list[str], pieces: list[str]) -> torch.Tensor:
    return torch.tensor([[units.index(p) for p in pieces]])


def test_word_index_of_sentencepiece_units():
    # "▁el ▁ga to , ▁c": el | gato, | c
    y = ids(BPE, ["▁el", "▁ga", "to", ",", "▁c"])
    assert word_index(y, *flags(BPE, "bpe")).tolist() == [[0, 1, 1, 1, 2]]
    # a first unit that does not begin with ▁ still begins the first word
    y = ids(BPE, ["to", "▁ga", "to"])
    assert word_index(y, *flags(BPE, "bpe")).tolist() == [[0, 1, 1]]


def test_word_index_of_characters():
    # "ab cd d": the space goes with the word it closes
    y = ids(CHAR, ["a", "b", "<space>", "c", "d", "<space>", "d"])
    assert word_index(y, *flags(CHAR, "char")).tolist() == [[0, 0, 0, 1, 1, 1, 2]]


def test_frame_limits_by_hand():
    # k = 2, 280 ms words, 80 ms frames: word 0 sees 560 ms = 7 frames, word 1 840 ms =
    # 10.5 → 10 frames, word 2 1120 ms = 14 frames
    assert frame_limits(torch.tensor([0, 1, 2]), 2, 280.0, 80.0).tolist() == [7, 10, 14]
    assert frame_limits(torch.tensor([0]), 1, 40.0, 80.0).tolist() == [1]  # at least one


def test_memory_mask_rows():
    begins, sep = flags(BPE, "bpe")
    eos = len(BPE) - 1
    # two targets: "▁el ▁ga </s>" (3 positions) and "▁c </s>" padded
    ys_out = torch.tensor([[2, 3, eos], [6, eos, eos]])
    mask = waitk_memory_mask(ys_out, torch.tensor([3, 2]), torch.tensor([20, 9]), 20, k=1,
                             word_ms=160.0, frame_ms=80.0, begins=begins, separator=sep)
    allowed = mask.sum(-1).tolist()
    # k = 1, 160 ms words = 2 frames per word: word 0 → 2 frames, word 1 → 4; </s> → all
    assert allowed[0] == [2, 4, 20]
    assert allowed[1][:2] == [2, 9]  # the second utterance has 9 frames
    assert not mask[1, :, 9:].any()


def test_memory_mask_rows_per_unit():
    # H20's wait-k with stride: each unit is a step, "▁ga to ," are three of them
    begins, sep = flags(BPE, "bpe")
    eos = len(BPE) - 1
    ys_out = torch.tensor([[3, 4, 5, eos]])  # ▁ga to , </s>
    mask = waitk_memory_mask(ys_out, torch.tensor([4]), torch.tensor([30]), 30, k=3,
                             word_ms=300.0, frame_ms=80.0, begins=begins, separator=sep,
                             per_unit=True)
    # k = 3, s = 300 ms: unit t sees (3 + t) · 300 ms → 900, 1200, 1500 ms = 11, 15, 18
    # frames of 80 ms; </s> sees all 30 (per word, "▁ga to ," would all see 11)
    assert mask.sum(-1).tolist() == [[11, 15, 18, 30]]


@pytest.fixture
def units_file(tmp_path):
    path = tmp_path / "tokens.txt"
    path.write_text("\n".join(BPE) + "\n")
    return path


def decoder(units_file, **kw) -> WaitKTransformerDecoder:
    torch.manual_seed(0)
    d = WaitKTransformerDecoder(len(BPE), 8, attention_heads=2, linear_units=16, num_blocks=2,
                                units_file=str(units_file), unit_type="bpe", **kw)
    return d.eval()


def test_a_position_does_not_see_frames_past_its_limit(units_file):
    d = decoder(units_file, k_train=1, word_ms=160.0, frame_ms=80.0)
    hs = torch.randn(1, 20, 8)
    ys_in = torch.tensor([[len(BPE) - 1, 2, 3, 6]])  # <sos> ▁el ▁ga ▁c → predicts … </s>
    lens = torch.tensor([4])
    with torch.no_grad():
        out, _ = d(hs, torch.tensor([20]), ys_in, lens)
        later = hs.clone()
        later[:, 2:] += 1.0  # change everything after word 0's two frames
        out2, _ = d(later, torch.tensor([20]), ys_in, lens)
    assert torch.equal(out[0, 0], out2[0, 0])  # position 0 predicts ▁el (word 0)
    assert not torch.equal(out[0, 1], out2[0, 1])  # ▁ga (word 1) sees frames 0–3
    assert not torch.equal(out[0, 3], out2[0, 3])  # </s> sees all


def test_with_nothing_masked_it_is_espnets_decoder(units_file):
    d = decoder(units_file, k_train=100)  # 100 words: every frame of 20
    base = import_espnet("espnet2.asr.decoder.transformer_decoder").TransformerDecoder(
        len(BPE), 8, attention_heads=2, linear_units=16, num_blocks=2).eval()
    base.load_state_dict(d.state_dict())
    hs, hlens = torch.randn(2, 20, 8), torch.tensor([20, 13])
    ys_in, lens = torch.tensor([[7, 2, 3, 4], [7, 6, 7, 7]]), torch.tensor([4, 2])
    with torch.no_grad():
        ours, _ = d(hs, hlens, ys_in, lens)
        theirs, _ = base(hs, hlens, ys_in, lens)
    assert torch.allclose(ours[0], theirs[0], atol=1e-6)
    assert torch.allclose(ours[1, :2], theirs[1, :2], atol=1e-6)


def test_multipath_draws_k_per_batch_in_training_and_the_first_in_eval(units_file):
    import random

    d = decoder(units_file, k_train=[1, 3, 5]).train()
    random.seed(0)
    hs, ys = torch.randn(1, 10, 8), torch.tensor([[7, 2, 3]])
    seen = set()
    for _ in range(30):
        d(hs, torch.tensor([10]), ys, torch.tensor([3]))
        seen.add(d.last_k)
    assert seen == {1, 3, 5}
    d.eval()
    d(hs, torch.tensor([10]), ys, torch.tensor([3]))
    assert d.last_k == 1


@pytest.mark.parametrize("conf, field", [({"k_train": 0}, "k_train"),
                                         ({"k_train": []}, "k_train"),
                                         ({"word_ms": 0}, "word_ms"),
                                         ({"step": "frame"}, "step")])
def test_bad_settings_are_refused(units_file, conf, field):
    with pytest.raises(ValueError, match=field):
        decoder(units_file, **conf)


def test_espnet_builds_and_trains_it(units_file, tmp_path):
    from tests.conftest import _conf

    register()
    st = import_espnet("espnet2.tasks.st").STTask
    conf = _conf("transformer")
    conf["token_list"] = conf["src_token_list"]
    chars = conf["token_list"]
    (tmp_path / "chars.txt").write_text("\n".join(chars) + "\n")
    conf["decoder"] = "transformer_waitk"
    conf["decoder_conf"].update(k_train=[1, 2], word_ms=280.0, frame_ms=40.0,
                                units_file=str(tmp_path / "chars.txt"), unit_type="char")
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(conf))
    args = st.get_parser().parse_args(["--config", str(tmp_path / "config.yaml")])
    torch.manual_seed(0)
    model = st.build_model(args).train()
    assert isinstance(model.decoder, WaitKTransformerDecoder)
    speech = torch.randn(2, 16000)
    text = torch.tensor([[2, 3, 28, 4], [5, 6, 0, 0]])  # "ab c", "de" (padded with -1 below)
    text[1, 2:] = -1
    out = model(speech=speech, speech_lengths=torch.tensor([16000, 12000]), text=text,
                text_lengths=torch.tensor([4, 2]), src_text=text.clamp(min=0),
                src_text_lengths=torch.tensor([4, 2]))
    loss = out[0]
    assert torch.isfinite(loss)
    loss.backward()
    assert model.decoder.last_k in (1, 2)


# ------------------------------------------------------------------ text source (wait-k MT)


def test_source_word_limits_by_hand():
    # source "▁el ▁ga to ▁c" = words el | gato | c; ESPnet's MT encoder reads
    # <sos> ▁el ▁ga to ▁c (5 positions). k = 1: target word 0 sees <sos> + "el" = 2,
    # word 1 sees <sos> + "el gato" = 4, word 2 (k + 2 = 3 words = all) sees all 5;
    # a second source "▁c" (1 word, padded with -1) is read whole from word 0: 2 positions
    # <sos> ▁c, written as "every position" (5 here, cut by the encoder's lengths)
    begins, sep = flags(BPE, "bpe")
    src = torch.tensor([[2, 3, 4, 6], [6, -1, -1, -1]])
    words = torch.tensor([[0, 1, 2], [0, 1, 1]])
    limits = source_word_limits(src, torch.tensor([4, 1]), words, 1, begins, sep)
    assert limits.tolist() == [[2, 4, 5], [5, 5, 5]]
    # k = 2: word 0 sees "el gato" (4), then all
    assert source_word_limits(src[:1], torch.tensor([4]), words[:1], 2, begins,
                              sep).tolist() == [[4, 5, 5]]


def test_espnet_trains_a_wait_k_mt(tmp_path):
    from tests.conftest import CASCADE_CHARS, tiny_mt_config

    register()
    mt = import_espnet("espnet2.tasks.mt").MTTask
    (tmp_path / "chars.txt").write_text("\n".join(CASCADE_CHARS) + "\n")
    conf = tiny_mt_config(CASCADE_CHARS)
    conf["encoder"] = "transformer_unidirectional"  # as the wait-k MT recipes train it
    unidirectional_encoder.register()
    conf["decoder"] = "transformer_waitk"
    conf["decoder_conf"] = {**conf["decoder_conf"], "k_train": 1, "source": "text",
                            "units_file": str(tmp_path / "chars.txt"), "unit_type": "char",
                            "src_units_file": str(tmp_path / "chars.txt"),
                            "src_unit_type": "char"}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(conf))
    args = mt.get_parser().parse_args(["--config", str(tmp_path / "config.yaml")])
    torch.manual_seed(0)
    model = mt.build_model(args).train()
    assert isinstance(model.decoder, WaitKTransformerDecoder)
    assert isinstance(model.encoder, unidirectional_encoder.UnidirectionalTransformerEncoder)
    space = CASCADE_CHARS.index("<space>")
    a, b, c = (CASCADE_CHARS.index(x) for x in "abc")
    src = torch.tensor([[a, space, b, space, c]])  # three source words
    text = torch.tensor([[c, space, a]])  # two target words
    seen = {}

    def spy(module, inputs, output):  # the first layer's cross-attention mask
        seen["mask"] = inputs[3]

    hook = model.decoder.decoders[0].src_attn.register_forward_hook(spy)
    loss = model(text=text, text_lengths=torch.tensor([3]), src_text=src,
                 src_text_lengths=torch.tensor([5]))[0]
    hook.remove()
    assert torch.isfinite(loss)
    loss.backward()
    # <sos> c <space> a → c <space> a </s>: "c" and its <space> (target word 0) see
    # <sos> + "a _" (3 of the encoder's 6 positions <sos> a _ b _ c); "a" (word 1) sees
    # <sos> + "a _ b _" (5); </s> sees all 6
    assert seen["mask"][0].sum(-1).tolist() == [3, 3, 5, 6]
    assert model.decoder.src_batch is None  # handed for one forward only
