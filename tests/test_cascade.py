"""The cascade: its policy on a scripted ASR and MT (worked out by hand), and a tiny real
ASR + MT cascade through the session, the sweep and the record store's key."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from simul import sweep
from simul.decoding.simulate import simulate
from simul.models import loader
from simul.models.adapters.cascade import Cascade, SpeechASR, TextMT, is_cascade
from simul.models.adapters.espnet_st import Encoded, Hyp, ModelError
from simul.policies import make
from simul.policies.cascade import CascadeWaitK, common_prefix
from tests.conftest import CASCADE_CHARS as CHARS
from tests.test_simulate import segment

# ----------------------------------------------------------------- a scripted cascade
UNITS = ["<blank>", "<unk>", "▁a", "▁b", "▁c", "▁d", "▁x", "▁y", "<sos/eos>"]


class Scripted:
    """ASR: the transcript of each prefix is scripted by its length (ms). MT: source word w
    translates to the unit "▁w", word for word."""

    token_list = UNITS
    unit_type = "bpe"
    eos = len(UNITS) - 1
    device = "cpu"
    kind = "cascade"

    def __init__(self, transcripts: dict[float, list[str]]):
        self.transcripts = transcripts
        self.mt_inputs: list[list[str]] = []

    def encode(self, audio):
        return Encoded(torch.zeros(0, 1), len(audio))

    def asr_words(self, enc):
        return list(self.transcripts[enc.n_samples / 16])

    def mt_encode(self, words):
        self.mt_inputs.append(list(words))
        out = Encoded(torch.zeros(len(words), 1), len(words))
        out.derived["words"] = list(words)
        return out

    def greedy(self, enc, prefix=(), *, max_new=None, maxlenratio=0.0, avoid_eos=False,
               state=None):
        target = [UNITS.index("▁" + w) for w in enc.derived["words"]]
        new = target[len(prefix):]
        if max_new is not None and len(new) > max_new:
            return Hyp(new[:max_new], 0.0, ended=False)
        return Hyp(new, 0.0, ended=not avoid_eos)  # with avoid_eos: as if capped


AUDIO = np.zeros(16000, np.float32)  # 1 s: reads at 200, 400, 600, 800 and 1000 ms (end)
SCRIPT = {200: ["a"], 400: ["a", "b"], 600: ["a", "b", "c"], 800: ["a", "b", "x"],
          1000: ["a", "b", "c", "d"]}


def writes(record) -> list[tuple[float, int]]:
    return [(ms, n) for ms, n in record.trace if n]


def run(policy, script=SCRIPT):
    model = Scripted(script)
    return simulate(model, policy, segment(AUDIO, None)), model


def test_la2_k1_writes_each_word_once_two_transcripts_agree_on_its_source():
    # stable words (LA-2): 200 → [], 400 → [a], 600 → [a b], 800 → [a b] (x disputed),
    # end → [a b c d]; k = 1 allows as many target words as stable source words
    rec, model = run(CascadeWaitK(k=1, chunk_ms=200))
    assert rec.prediction == "a b c d"
    assert writes(rec) == [(400.0, 1), (600.0, 1), (1000.0, 2)]
    assert model.mt_inputs[-1] == ["a", "b", "c", "d"]


def test_k2_waits_one_more_stable_word():
    rec, _ = run(CascadeWaitK(k=2, chunk_ms=200))
    assert writes(rec) == [(600.0, 1), (1000.0, 3)]
    assert rec.prediction == "a b c d"


def test_stable_all_feeds_every_word_and_never_retracts():
    # 800 ms hears "a b x": "c" was fed at 600 ms and stays; the end agrees with it
    rec, model = run(CascadeWaitK(k=1, chunk_ms=200, stable="all"))
    assert writes(rec) == [(200.0, 1), (400.0, 1), (600.0, 1), (1000.0, 1)]
    assert ["a", "b", "x"] not in model.mt_inputs


def test_a_revised_transcript_at_the_end_keeps_the_fed_words():
    script = {**SCRIPT, 1000: ["a", "y", "c"]}  # the ASR changes its mind about "b"
    rec, model = run(CascadeWaitK(k=1, chunk_ms=200), script)
    assert model.mt_inputs[-1] == ["a", "b", "c"]
    assert rec.prediction == "a b c"


def test_nothing_heard_writes_nothing():
    rec, _ = run(CascadeWaitK(k=1, chunk_ms=200), {t: [] for t in SCRIPT})
    assert rec.prediction == "" and rec.units == []


def test_common_prefix():
    assert common_prefix(["a", "b", "c"], ["a", "b", "x", "y"]) == ["a", "b"]
    assert common_prefix([], ["a"]) == [] and common_prefix(["a"], ["a"]) == ["a"]


@pytest.mark.parametrize("settings, field", [({"k": 0}, "k"), ({"stable": "la3"}, "stable"),
                                             ({"chunk_ms": 0}, "chunk_ms")])
def test_bad_settings_are_refused(settings, field):
    with pytest.raises(ValueError, match=f"cascade: {field}="):
        make("cascade", settings)


def test_on_an_end_to_end_model_it_says_it_needs_a_cascade(tiny_model_dir, speech):
    from simul.models.adapters.espnet_st import ESPnetST

    with pytest.raises(ValueError, match="policy cascade runs on a cascade of an ASR and an "
                       "MT model .*; this model is an end-to-end speech-translation model"):
        simulate(ESPnetST.from_dir(tiny_model_dir), CascadeWaitK(), segment(speech, None))


@pytest.mark.parametrize("policy", ["onlinization", "wait_k_frames", "offline"])
def test_a_speech_translation_policy_refuses_a_cascade(cascade_dir, speech, policy):
    # it would run (the cascade answers the adapter's calls) and repeat words: refused
    cascade = loader.load(cascade_dir)
    with pytest.raises(ValueError, match=f"policy {policy} runs on an end-to-end "
                       "speech-translation model; this model is a cascade"):
        simulate(cascade, make(policy), segment(speech, None))


# ----------------------------------------------------------------- a tiny real cascade
def test_models_load_by_their_tasks(cascade_dir):
    asr = SpeechASR.from_dir(cascade_dir.parent / "asr")
    mt = TextMT.from_dir(cascade_dir.parent / "mt")
    assert asr.src_token_list == CHARS and asr.model.ctc is not None
    assert mt.source_ids(["ab", "c"]) == [2, 3, CHARS.index("<space>"), 4]
    enc = mt.encode_words(["ab", "c"])
    assert enc.frames == 5 and enc.n_samples == 2  # ESPnet puts <sos> before the source
    with pytest.raises(ModelError, match="not ASR"):
        SpeechASR.from_dir(cascade_dir.parent / "mt")
    with pytest.raises(ModelError, match="encodes words"):
        mt.encode(np.zeros(8000, np.float32))


def test_a_cascade_decodes_like_any_model(cascade_dir, speech):
    from simul.models import loader

    assert is_cascade(cascade_dir)
    model = loader.load(cascade_dir)
    assert isinstance(model, Cascade) and model.unit_type == "char"
    rec = simulate(model, CascadeWaitK(k=1, chunk_ms=200, stable="all"), segment(speech, None))
    assert rec.units, "a setting that writes nothing tests little"
    assert model.asr_words(model.encode(speech))  # the tiny ASR hears words
    assert all(e >= d for e, d in zip(rec.elapsed, rec.delays, strict=True))
    assert rec.delays[-1] <= rec.source_length


def test_sweep_of_a_cascade_keys_both_models(cascade_dir, tmp_path):
    import shutil

    from tests.test_mustc import PAIR, SPLIT, make_corpus

    shutil.copytree(cascade_dir.parent, tmp_path / "models")
    cascade_dir = tmp_path / "models" / cascade_dir.name
    make_corpus(tmp_path / "corpus" / PAIR)
    ref = sweep.resolve_model(str(cascade_dir))
    assert ref.label == "tiny_cascade"
    table = sweep.run({"models": [str(cascade_dir)], "pair": PAIR, "splits": [SPLIT],
                       "corpus": str(tmp_path / "corpus"), "output": str(tmp_path / "out"),
                       "policies": [{"policy": "cascade", "grid": {"k": [1, 2]},
                                     "fixed": {"chunk_ms": 200}}], "store": False},
                      workers=1, progress=False)
    assert table.utterances.tolist() == [table.utterances[0]] * 2
    # a changed MT changes the cascade's checksum (the record store's key)
    (cascade_dir.parent / "mt" / "model.pth").write_bytes(
        (cascade_dir.parent / "mt" / "model.pth").read_bytes() + b"\0")
    assert sweep.resolve_model(str(cascade_dir)).checksum != ref.checksum


@pytest.mark.parametrize("settings", [{"k": 1, "chunk_ms": 200, "stable": "all"},
                                      {"k": 2, "chunk_ms": 150}])
def test_chunking_changes_nothing(cascade_dir, speech, settings):
    from simul.models import loader
    from tests.test_stream import counting_clock, stream

    model = loader.load(cascade_dir)
    whole = simulate(model, make("cascade", settings), segment(speech, None),
                     clock=counting_clock())
    assert whole.units
    for chunk_ms in (10, 37, 1000):
        session, updates = stream(model, make("cascade", settings), speech, chunk_ms,
                                  alignment=None)
        rec = session.record(index=0, reference="x y", segment_id="t_0",
                             source=["t.wav", "t_0"], source_text="a b")
        assert rec == whole, f"{chunk_ms} ms chunks"
        assert [u for up in updates for u in up.units] == rec.units


def test_shared_calls_give_the_records_of_each_setting_alone(cascade_dir, tmp_path):
    from simul.corpus import load_list
    from tests.test_mustc import PAIR, SPLIT, make_corpus

    make_corpus(tmp_path / PAIR)
    ref = sweep.resolve_model(str(cascade_dir))
    settings = sweep.expand([{"policy": "cascade", "grid": {"k": [1, 2], "stable": ["la2", "all"]},
                              "fixed": {"chunk_ms": 200}}], "test")
    for seg in load_list(tmp_path, PAIR, SPLIT)[:2]:
        shared = sweep.decode_utterance(ref, settings, seg, share=True)
        alone = sweep.decode_utterance(ref, settings, seg, share=False)
        strip = [{k: v for k, v in r.items() if k != "elapsed"} for r in shared]
        assert strip == [{k: v for k, v in r.items() if k != "elapsed"} for r in alone]


def test_simul_models_names_a_shipped_cascade_by_its_parts(cascade_dir, monkeypatch, tmp_path):
    import shutil

    from simul.models import registry
    from simul.zoo.card import summary_line

    shutil.copytree(cascade_dir.parent, tmp_path / "models")
    monkeypatch.setattr(registry, "MODELS_DIR", tmp_path / "models")
    assert "tiny_cascade" in registry.shipped()
    assert summary_line("tiny_cascade") == "tiny_cascade  (cascade: ASR asr → MT mt)"


def test_a_cascade_is_stale_when_either_model_is(cascade_dir, monkeypatch, tmp_path):
    import shutil

    from simul.corpus.mini import build
    from simul.models import registry

    models = tmp_path / "models"
    shutil.copytree(cascade_dir.parent, models)
    monkeypatch.setattr(registry, "MODELS_DIR", models)
    monkeypatch.setitem(build.PAIR_VERSIONS, "en-es", 7)
    for part, version in (("asr", 7), ("mt", 7)):
        (models / part / "simul.json").write_text(
            json.dumps({"pair": "en-es", "corpus_builder_version": version}))
    assert registry.corpus_version("tiny_cascade") == 7 and not registry.stale("tiny_cascade")
    (models / "mt" / "simul.json").write_text(
        json.dumps({"pair": "en-es", "corpus_builder_version": 6}))
    assert registry.corpus_version("tiny_cascade") is None and registry.stale("tiny_cascade")


def test_a_revised_fed_word_does_not_stop_the_words_after_it():
    # "a b" are fed at 400 ms (200 and 400 agree on them); from 600 ms the ASR hears "y"
    # for "b", and 600 and 800 agree on "a y c": "b" stays as fed, and "c", past it,
    # extends the fed words at 800 ms instead of waiting for the end of the audio
    script = {200: ["a", "b"], 400: ["a", "b"], 600: ["a", "y", "c"],
              800: ["a", "y", "c", "d"], 1000: ["a", "y", "c", "d"]}
    rec, model = run(CascadeWaitK(k=1, chunk_ms=200), script)
    assert writes(rec) == [(400.0, 2), (800.0, 1), (1000.0, 1)]
    assert ["a", "b", "c"] in model.mt_inputs and ["a", "y", "c"] not in model.mt_inputs
    assert rec.prediction == "a b c d"
