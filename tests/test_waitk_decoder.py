"""The wait-k training decoder: target words, frame limits worked out by hand, the masked
cross-attention, equality with ESPnet's decoder when nothing is masked, ESPnet training."""

from __future__ import annotations

import pytest
import torch
import yaml

from simul.metrics.units import ctc_collapse, ctc_word_frames
from simul.models.espnet_env import import_espnet
from simul.models.extensions import unidirectional_encoder
from simul.models.extensions.waitk_decoder import (
    WaitKTransformerDecoder,
    adaptive_frame_limits,
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


# ------------------------------------------------------------------ adaptive detection (P22 Fig. 2)

SRC = ["<blank>", "<unk>", "▁the", "▁ca", "t", "▁", "s", "<sos/eos>"]
# per-frame best units of a made-up source CTC over 14 frames:
#   frame  0 1 2 3 4 5 6 7 8 9 10 11 12 13
#   unit   - ▁the ▁the - ▁ca t t - - ▁ ▁ s - ▁the
CTC_FRAMES = [0, 2, 2, 0, 3, 4, 4, 0, 0, 5, 5, 6, 0, 2]


def test_greedy_ctc_units_and_where_its_words_begin():
    # repeats merged, blanks dropped, each unit at the first frame of its run
    assert ctc_collapse(CTC_FRAMES) == [(2, 1), (3, 4), (4, 5), (5, 9), (6, 11), (2, 13)]
    # "▁the ▁ca t ▁ s ▁the": the | cat | s | the; "s" begins its word at frame 11, not the
    # bare "▁" at frame 9 (a word begins with its first text, as ctc_words counts them)
    assert ctc_word_frames(CTC_FRAMES, SRC, "bpe") == [1, 4, 11, 13]
    # a unit repeated across a blank is written twice: two words
    assert ctc_word_frames([2, 0, 2], SRC, "bpe") == [0, 2]
    chars = ["<blank>", "a", "b", "<space>"]
    assert ctc_word_frames([1, 1, 3, 0, 2, 3, 1], chars, "char") == [0, 4, 6]


def test_adaptive_frame_limits_by_hand():
    # utterance 0: words begin at frames 1, 4, 11, 13 of 20; utterance 1: one word at 2, 9
    # frames. k = 2: target word w sees the frames read when word 2 + w has begun:
    # w0 → word 2 at frame 4 → 5 frames; w1 → word 3 at 11 → 12; w2 → word 4 at 13 → 14;
    # w3 → no fifth word → all 20. Utterance 1 has fewer than 2 words: all 9 from w0.
    words = torch.tensor([[0, 1, 2, 3], [0, 1, 1, 1]])
    limits = adaptive_frame_limits(words, 2, [[1, 4, 11, 13], [2]], torch.tensor([20, 9]))
    assert limits.tolist() == [[5, 12, 14, 20], [9, 9, 9, 9]]
    # k = 1: word 0 waits for the first word (frame 1 → 2 frames)
    assert adaptive_frame_limits(words[:1], 1, [[1, 4, 11, 13]],
                                 torch.tensor([20])).tolist() == [[2, 5, 12, 14]]
    # no word detected at all: every frame
    assert adaptive_frame_limits(words[:1], 1, [[]], torch.tensor([7])).tolist() == [[7] * 4]


@pytest.fixture
def src_units_file(tmp_path):
    path = tmp_path / "src_tokens.txt"
    path.write_text("\n".join(SRC) + "\n")
    return path


def test_the_adaptive_mask_follows_the_ctc(units_file, src_units_file):
    d = decoder(units_file, k_train=2, detection="adaptive",
                src_units_file=str(src_units_file), src_unit_type="bpe")
    d.source_ctc_argmax = lambda hs: torch.tensor([CTC_FRAMES] * hs.shape[0])
    seen = {}

    def spy(module, inputs, output):  # the first layer's cross-attention mask
        seen["mask"] = inputs[3]

    hook = d.decoders[0].src_attn.register_forward_hook(spy)
    eos = len(BPE) - 1
    # <sos> ▁el ▁ga to ▁c → predicts ▁el ▁ga to ▁c </s>: target words el | gato | c
    ys_in = torch.tensor([[eos, 2, 3, 4, 6]])
    with torch.no_grad():
        d(torch.randn(1, 14, 8), torch.tensor([14]), ys_in, torch.tensor([5]))
    hook.remove()
    # worked out by hand from CTC_FRAMES (words begin at frames 1, 4, 11, 13), k = 2:
    # "el" waits for word 2 (frame 4: 5 frames), "ga" and "to" of "gato" for word 3 (frame
    # 11: 12 frames), "c" for word 4 (frame 13: 14 frames), </s> sees all 14
    expected = torch.zeros(5, 14, dtype=torch.bool)
    for row, n in enumerate([5, 12, 12, 14, 14]):
        expected[row, :n] = True
    assert torch.equal(seen["mask"][0], expected)
    assert d.last_word_frames == [[1, 4, 11, 13]]


def test_the_fixed_mask_is_unchanged_by_the_detection_setting(units_file):
    # the default and an explicit detection: fixed give the rows of test_memory_mask_rows
    for conf in ({}, {"detection": "fixed"}):
        d = decoder(units_file, k_train=1, word_ms=160.0, frame_ms=80.0, **conf)
        seen = {}

        def spy(module, inputs, output, seen=seen):
            seen["mask"] = inputs[3]

        hook = d.decoders[0].src_attn.register_forward_hook(spy)
        with torch.no_grad():
            d(torch.randn(1, 20, 8), torch.tensor([20]), torch.tensor([[7, 2, 3]]),
              torch.tensor([3]))
        hook.remove()
        assert seen["mask"][0].sum(-1).tolist() == [2, 4, 20]


@pytest.mark.parametrize("conf, field", [
    ({"detection": "ctc"}, "detection"),
    ({"detection": "adaptive"}, "src_units_file"),
    ({"detection": "adaptive", "step": "unit", "src_units_file": "x"}, "detection")])
def test_bad_detection_settings_are_refused(units_file, conf, field):
    with pytest.raises(ValueError, match=field):
        decoder(units_file, **conf)


def _adaptive_st(tmp_path, asr_weight: float):
    from tests.conftest import _conf

    register()
    st = import_espnet("espnet2.tasks.st").STTask
    conf = _conf("transformer")
    conf["token_list"] = conf["src_token_list"]
    (tmp_path / "chars.txt").write_text("\n".join(conf["token_list"]) + "\n")
    conf["decoder"] = "transformer_waitk"
    conf["decoder_conf"].update(k_train=1, detection="adaptive",
                                units_file=str(tmp_path / "chars.txt"), unit_type="char",
                                src_units_file=str(tmp_path / "chars.txt"),
                                src_unit_type="char")
    conf["model_conf"]["asr_weight"] = asr_weight
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(conf))
    args = st.get_parser().parse_args(["--config", str(tmp_path / "config.yaml")])
    torch.manual_seed(0)
    return st.build_model(args)


def test_espnet_trains_it_with_adaptive_detection_from_its_own_ctc(tmp_path):
    model = _adaptive_st(tmp_path, 0.3).train()
    speech = torch.randn(2, 16000)
    text = torch.tensor([[2, 3, 28, 4], [5, 6, -1, -1]])  # "ab c", "de"
    torch.manual_seed(1)  # the encoder's dropout, drawn again below
    loss = model(speech=speech, speech_lengths=torch.tensor([16000, 12000]), text=text,
                 text_lengths=torch.tensor([4, 2]), src_text=text.clamp(min=0),
                 src_text_lengths=torch.tensor([4, 2]))[0]
    assert torch.isfinite(loss)
    loss.backward()
    # the detections are those of the model's own CTC on this batch's encoder output
    torch.manual_seed(1)
    with torch.no_grad():
        enc, enc_lens = model.encode(speech, torch.tensor([16000, 12000]))
    best = model.ctc.argmax(enc)
    chars = model.decoder.src_units
    assert any(model.decoder.last_word_frames)  # the random CTC detects words
    for b, frames in enumerate(model.decoder.last_word_frames):
        n = int(enc_lens[b])
        assert len(frames) <= n
        assert frames == ctc_word_frames(best[b, :n].tolist(), chars, "char")
    # the decoder holds no copy of the CTC: its parameters are ESPnet's decoder's
    assert not any(k.startswith("ctc") for k in model.decoder.state_dict())


def test_adaptive_detection_without_a_source_ctc_is_refused(tmp_path):
    with pytest.raises(ValueError, match="model_conf.asr_weight"):
        _adaptive_st(tmp_path, 0.0)


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
