"""The ESPnet2 adapter against ESPnet's own Speech2Text, on tiny random models."""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from simul.models.adapters.espnet_st import ESPnetST, ModelError
from simul.models.espnet_env import import_espnet


def speech2text(model_dir, beam):
    s2t = import_espnet("espnet2.bin.st_inference").Speech2Text
    return s2t(st_train_config=str(model_dir / "config.yaml"),
               st_model_file=str(model_dir / "model.pth"), beam_size=beam, nbest=beam)


@pytest.mark.parametrize("beam", [1, 5])
def test_full_input_decoding_equals_speech2text(tiny_model_dir, speech, beam):
    ref = speech2text(tiny_model_dir, beam)(speech)  # [(text, tokens, ids, hyp), ...]
    adapter = ESPnetST.from_dir(tiny_model_dir)
    enc = adapter.encode(speech)
    ours = [adapter.greedy(enc)] if beam == 1 else adapter.beam_search(enc, beam=beam)
    # Speech2Text drops the blank id (0) from its output ids; so do we here
    assert [[t for t in h.tokens if t] for h in ours][: len(ref)] == [r[2] for r in ref]
    assert len(ref[0][2]) >= 3
    # the same words (detokenize separates words by single spaces, as records do)
    assert adapter.detokenize(ours[0].tokens) == " ".join(ref[0][0].split())


def test_step_with_state_equals_step_from_scratch(tiny_model_dir, speech):
    adapter = ESPnetST.from_dir(tiny_model_dir)
    enc = adapter.encode(speech)
    prefix = adapter.encode_text("ab c")
    full, _ = adapter.step(enc, None, prefix)
    logp, state = adapter.step(enc, None, prefix[:2])
    logp, state = adapter.step(enc, state, prefix)
    torch.testing.assert_close(logp, full)


def test_state_is_not_confused_by_decoding_another_prefix_in_between(tiny_model_dir, speech):
    # The RNN attention caches the projection of the encoder output it last saw; a state
    # resumed over its own encoder output after decoding another one must not reuse it.
    model = ESPnetST.from_dir(tiny_model_dir)
    enc_a, enc_b = model.encode(speech[:9600]), model.encode(speech)
    hyp_a = model.greedy(enc_a, max_new=3)
    model.greedy(enc_b, max_new=3)
    tokens = hyp_a.tokens
    logp_resumed, _ = model.step(enc_a, hyp_a.resume, tokens)
    logp_scratch, _ = model.step(enc_a, None, tokens)
    torch.testing.assert_close(logp_resumed, logp_scratch)


def test_forced_prefix_continues_the_greedy_path(tiny_model_dir, speech):
    adapter = ESPnetST.from_dir(tiny_model_dir)
    enc = adapter.encode(speech)
    free = adapter.greedy(enc)
    k = min(3, len(free.tokens))
    forced = adapter.greedy(enc, free.tokens[:k])
    assert free.tokens[:k] + forced.tokens == free.tokens
    best = adapter.beam_search(enc, free.tokens[:k], beam=1)[0]
    assert best.tokens == forced.tokens


def test_max_new_and_avoid_eos(tiny_model_dir, speech):
    adapter = ESPnetST.from_dir(tiny_model_dir)
    enc = adapter.encode(speech)
    two = adapter.greedy(enc, max_new=2)
    assert len(two.tokens) <= 2 and not two.capped
    no_eos = adapter.greedy(enc, max_new=5, avoid_eos=True)
    assert len(no_eos.tokens) == 5 and adapter.eos not in no_eos.tokens


def test_prefix_encoding_has_no_look_ahead(tiny_model_dir, speech):
    adapter = ESPnetST.from_dir(tiny_model_dir)
    half = adapter.encode(speech[:8000])
    again = adapter.encode(np.concatenate([speech[:8000]]))
    torch.testing.assert_close(half.states, again.states)
    assert half.frames < adapter.encode(speech).frames


@pytest.mark.parametrize("n", [0, 160])  # 10 ms: too short for one STFT window
def test_very_short_audio_gives_empty_output(tiny_model_dir, n):
    adapter = ESPnetST.from_dir(tiny_model_dir)
    enc = adapter.encode(np.zeros(n, np.float32))
    assert enc.frames == 0 and enc.n_samples == n
    assert adapter.greedy(enc).tokens == []
    assert adapter.beam_search(enc, beam=2)[0].tokens == []


@pytest.mark.parametrize("n", [400, 800, 4800])  # 25 ms, 50 ms, 0.3 s
def test_short_audio_output_respects_the_length_cap(tiny_model_dir, n):
    adapter = ESPnetST.from_dir(tiny_model_dir)
    enc = adapter.encode(np.full(n, 0.01, np.float32))
    assert len(adapter.greedy(enc).tokens) <= enc.frames
    assert all(len(h.tokens) <= enc.frames for h in adapter.beam_search(enc, beam=3))


def test_ctc_and_cross_attention_shapes(tiny_model_dir, speech):
    adapter = ESPnetST.from_dir(tiny_model_dir)
    enc = adapter.encode(speech)
    ids = adapter.ctc_greedy(enc)
    assert all(i != 0 for i in ids)
    assert all(a != b for a, b in zip(ids, ids[1:], strict=False))
    att = adapter.cross_attention(enc, adapter.encode_text("ab"))
    assert att.shape == (3, enc.frames)
    torch.testing.assert_close(att.sum(-1), torch.ones(3), atol=1e-4, rtol=0)


def test_non_st_config_is_refused(tmp_path):
    (tmp_path / "config.yaml").write_text("encoder: conformer\ndecoder: transformer\n"
                                          "token_list: [a]\nmodel_conf: {ctc_weight: 0.3}\n")
    (tmp_path / "model.pth").write_bytes(b"")
    with pytest.raises(ModelError, match="not an ESPnet2 speech-translation"):
        ESPnetST.from_dir(tmp_path)


def test_missing_model_file_is_refused(tmp_path):
    (tmp_path / "config.yaml").write_text("encoder: conformer\n")
    with pytest.raises(ModelError, match=r"no model file \(\*\.pth\)"):
        ESPnetST.from_dir(tmp_path)



@pytest.mark.parametrize("env, instrumented", [("", False), ("1", True)])
def test_espnet_imported_without_typeguard_instrumentation_unless_asked(env, instrumented):
    """ESPnet's @typechecked functions stay as written (fast imports, no per-call checks);
    SIMUL_ESPNET_TYPECHECK=1 keeps typeguard's instrumented versions. Each case runs in a
    fresh interpreter, since an imported module keeps what it was built with."""
    code = ("from simul.models.espnet_env import import_espnet\n"
            "m = import_espnet('espnet2.asr.decoder.rnn_decoder')\n"
            "print('typeguard' in m.RNNDecoder.__init__.__code__.co_names)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "SIMUL_ESPNET_TYPECHECK": env}, check=True)
    assert out.stdout.strip() == str(instrumented)


def test_rnn_attention_logs_no_tracing_warning_per_encoder_output(tiny_model_dir, speech, caplog):
    # ESPnet's AttAdd calls make_pad_mask with a list of lengths, which logs a warning on the
    # root logger for every new encoder output: one line per read of a BLSTM sweep.
    model = ESPnetST.from_dir(tiny_model_dir)
    with caplog.at_level("WARNING"):
        for n in (9600, 12800, len(speech)):
            model.greedy(model.encode(speech[:n]), max_new=2)
    assert not [r for r in caplog.records if "make_pad_mask" in r.getMessage()]
