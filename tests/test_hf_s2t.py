"""The transformers Speech2Text adapter (simul.models.adapters.hf_s2t) against the library's own
``generate``, and every policy it serves, on a tiny random model in the published layout
(tests/hub_models.py): decoded streamed in chunks of any size as whole, never hearing the
audio it has not read; what it cannot serve refused in one line."""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("transformers", reason="the hub extra: pip install 'simul[hub]'")

from simul.corpus import Alignment  # noqa: E402
from simul.decoding.session import Session  # noqa: E402
from simul.decoding.simulate import simulate  # noqa: E402
from simul.models import loader, registry  # noqa: E402
from simul.models.adapters.espnet_st import ModelError  # noqa: E402
from simul.models.adapters.hf_s2t import HFSpeech2Text  # noqa: E402
from simul.policies import make  # noqa: E402
from simul.policies import registry as policies  # noqa: E402
from tests.hub_models import make_s2t_repo  # noqa: E402
from tests.test_policy_predecision import ALIGNMENT  # noqa: E402
from tests.test_simulate import segment  # noqa: E402
from tests.test_stream import SETTINGS, counting_clock, stream  # noqa: E402

# every setting of the streaming tests that the model can serve: all but adaptive word
# detection (a source CTC); mma needs an MMA decoder
SERVED = {name: [s for s in settings if s.get("detection") != "adaptive"]
          for name, settings in SETTINGS.items()}
CASES = [(name, s) for name, settings in SERVED.items() for s in settings]
IDS = [f"{n}-{'-'.join(map(str, s.values()))}" for n, s in CASES]


@pytest.fixture(scope="module")
def s2t_dir(tmp_path_factory):
    return make_s2t_repo(tmp_path_factory.mktemp("hf") / "s2t-tiny-mustc-en-de-st")


@pytest.fixture(scope="module")
def model(s2t_dir):
    return HFSpeech2Text(s2t_dir)


def features(model, audio):
    return model.features(audio, sampling_rate=16000, return_tensors="pt")["input_features"]


def test_the_registry_sees_a_transformers_model(s2t_dir, model):
    assert registry.family(s2t_dir) == "transformers"
    assert registry.task(s2t_dir) == "st"
    assert registry.pair(s2t_dir) == "en-de"  # the model card's two languages
    assert isinstance(loader.load(s2t_dir), HFSpeech2Text)
    assert model.token_list[:4] == ["<s>", "<pad>", "</s>", "<unk>"]  # fairseq's dictionary
    assert (model.sos, model.eos, model.unit_type) == (2, 2, "bpe")


@pytest.mark.parametrize("n", [9600, 19200])
def test_greedy_is_generates_greedy_search(model, speech, n):
    enc = model.encode(speech[:n])
    ours = model.greedy(enc)
    ref = model.model.generate(features(model, speech[:n]), num_beams=1, do_sample=False,
                               max_new_tokens=enc.frames)[0].tolist()
    assert ref[0] == model.sos
    expected = ref[1:]
    if model.eos in expected:  # generate pads after </s>; ours stops there
        expected = expected[: expected.index(model.eos)]
    assert ours.tokens == expected and len(ours.tokens) >= 5
    assert ours.ended == (model.eos in ref[1:])


@pytest.mark.parametrize("beam", [2, 4])
def test_beam_search_is_generates_beam_search(model, speech, beam):
    enc = model.encode(speech)
    ours = model.beam_search(enc, beam=beam)
    out = model.model.generate(features(model, speech), num_beams=beam,
                               num_return_sequences=beam, max_new_tokens=enc.frames,
                               output_scores=True, return_dict_in_generate=True)
    expected = []
    for seq in out.sequences.tolist():
        seq = seq[1:]
        expected.append(seq[: seq.index(model.eos)] if model.eos in seq else
                        [t for t in seq if t != model.pad])
    assert [h.tokens for h in ours] == expected
    assert [h.score for h in ours] == pytest.approx(out.sequences_scores.tolist())


def test_a_forced_prefix_continues_the_greedy_path(model, speech):
    enc = model.encode(speech)
    free = model.greedy(enc)
    forced = model.greedy(enc, free.tokens[:3])
    assert free.tokens[:3] + forced.tokens == free.tokens
    best = model.beam_search(enc, free.tokens[:3], beam=1)[0]
    assert best.tokens == forced.tokens


def test_a_state_resumes_where_decoding_from_scratch_would_be(model, speech):
    enc = model.encode(speech)
    prefix = model.greedy(enc, max_new=5).tokens
    full, _ = model.step(enc, None, prefix)
    _, state = model.step(enc, None, prefix[:2])
    resumed, _ = model.step(enc, state, prefix)
    torch.testing.assert_close(resumed, full)
    # a state made over a shorter prefix keeps its positions (Nguyen et al. 2021, eq. 2):
    # resumed over the whole input it differs from re-decoding, and changes nothing in it
    early = model.encode(speech[:6400])
    _, old = model.step(early, None, prefix[:2])
    kept = [k.clone() for k, _ in old.state]
    reused, _ = model.step(enc, old, prefix)
    assert not torch.allclose(reused, full)
    assert all(torch.equal(k, c) for (k, _), c in zip(old.state, kept, strict=True))


def test_max_new_and_avoid_eos(model, speech):
    enc = model.encode(speech)
    assert len(model.greedy(enc, max_new=2).tokens) == 2
    no_eos = model.greedy(enc, max_new=enc.frames, avoid_eos=True)
    assert len(no_eos.tokens) == enc.frames and not no_eos.ended
    assert model.eos not in no_eos.tokens


def test_a_prefix_is_encoded_on_its_own(model, speech):
    # the features' normalisation statistics are the prefix's: no look-ahead
    half = model.encode(speech[:8000])
    alone = model.encode(speech[:8000].copy())
    torch.testing.assert_close(half.states, alone.states)
    whole = model.encode(speech)
    # Kaldi frames: 1 + ⌊(n − 400) / 160⌋ = 48 and 118; each of the two convolutions
    # (kernel 5, stride 2, padding 2) keeps ⌊(T − 1) / 2⌋ + 1: 48 → 24 → 12, 118 → 59 → 30
    assert half.frames == 12 and whole.frames == 30
    assert not torch.allclose(half.states[:5], whole.states[:5])  # CMVN and attention


@pytest.mark.parametrize("n", [0, 160, 399])  # not one 25 ms window
def test_audio_too_short_for_a_frame_gives_empty_output(model, n):
    enc = model.encode(np.zeros(n, np.float32))
    assert enc.frames == 0 and enc.n_samples == n
    assert model.greedy(enc).tokens == [] and model.beam_search(enc, beam=2)[0].tokens == []


def test_silence_is_encoded_without_nans(model):
    enc = model.encode(np.zeros(4800, np.float32))
    assert enc.frames > 0 and torch.isfinite(enc.states).all()


def test_cross_attention_rows_are_distributions(model, speech):
    enc = model.encode(speech)
    att = model.cross_attention(enc, [6, 46])
    assert att.shape == (3, enc.frames)
    torch.testing.assert_close(att.sum(-1), torch.ones(3), atol=1e-5, rtol=0)
    first = model.cross_attention(enc, [6, 46], layer=0)
    assert not torch.allclose(first, att)


def test_units_and_text(model):
    ids = model.encode_text("the cat sat on the mat")
    assert model.detokenize(ids) == "the cat sat on the mat"
    assert model.detokenize([model.sos, *ids, model.eos, model.pad]) == "the cat sat on the mat"


@pytest.mark.parametrize(("name", "settings"), CASES, ids=IDS)
@pytest.mark.filterwarnings("ignore::simul.policies.word_detection.RunawaySettingWarning")
def test_every_policy_streams_as_it_decodes_whole(model, speech, name, settings):
    whole = simulate(model, make(name, settings), segment(speech, ALIGNMENT),
                     clock=counting_clock())
    assert whole.units, "a setting that writes nothing tests little"
    assert whole.trace[-1][0] == whole.source_length
    for chunk_ms in (10, 37, 1000):
        session, updates = stream(model, make(name, settings), speech, chunk_ms)
        rec = session.record(index=0, reference="x y", segment_id="t_0",
                             source=["t.wav", "t_0"], source_text="a b")
        assert rec == whole, f"{chunk_ms} ms chunks"
        assert [u for up in updates for u in up.units] == rec.units


def test_every_st_policy_is_covered():
    assert set(SERVED) | {"mma"} == {n for n, c in policies().items() if c.runs_on == "st"}


@pytest.mark.parametrize(("name", "settings"), CASES, ids=IDS)
@pytest.mark.filterwarnings("ignore::simul.policies.word_detection.RunawaySettingWarning")
def test_no_decision_hears_the_audio_after_it(model, speech, name, settings):
    # the second half replaced by other sound: every unit written before 600 ms is the same
    other = speech.copy()
    other[9600:] = np.random.default_rng(1).normal(0, 0.2, 9600).astype(np.float32)
    runs = [simulate(model, make(name, settings), segment(a, ALIGNMENT),
                     clock=counting_clock()) for a in (speech, other)]

    def before(rec):
        units, out = iter(rec.units), []
        for read_ms, n in rec.trace:
            taken = [next(units) for _ in range(n)]
            if read_ms <= 600.0:
                out += [(read_ms, u) for u in taken]
        return out

    assert before(runs[0]) == before(runs[1])
    if name in ("wait_k_frames", "predecision"):  # they write before 600 ms here
        assert before(runs[0])


def test_what_the_model_cannot_serve_is_refused_in_one_line(model, speech):
    with pytest.raises(ModelError, match="no source-language CTC") as info:
        simulate(model, make("wait_k_words", {"detection": "adaptive"}), segment(speech))
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match="transformer_mma decoder; this model's decoder is "
                                         "speech_to_text"):
        Session(model, make("mma"))


def test_short_and_silent_input_end_cleanly(model, speech):
    no_words = Alignment(words=(), phonemes=())
    for audio in (np.zeros(160, np.float32), np.zeros(4800, np.float32), speech[:4800]):
        for name, settings in [("wait_k_frames", {"k": 10, "s": 10}), ("offline", {}),
                               ("onlinization", {"chunk_ms": 250, "beam": 2}),
                               ("alignatt", {"chunk_ms": 200})]:
            rec = simulate(model, make(name, settings), segment(audio, no_words))
            assert rec.trace[-1][0] == rec.source_length
            assert rec.prediction_length == len(rec.delays)


def test_a_directory_missing_files_is_refused_by_name(s2t_dir, tmp_path):
    import shutil

    broken = shutil.copytree(s2t_dir, tmp_path / "broken")
    (broken / "vocab.json").unlink()
    with pytest.raises(ModelError, match=r"broken: a transformers Speech2Text model without "
                                         r"vocab.json"):
        loader.load(broken)
