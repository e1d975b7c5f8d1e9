"""Published models by their Hub repo id, offline: tiny ESPnet2 and transformers models in
their published layouts (tests/hub_models.py), placed in a temporary Hugging Face cache and
read with ``HF_HUB_OFFLINE=1`` by ``simul decode``, ``simul stream --wav``, a sweep and the
SimulEval agent, with the records that loading the same files by directory gives; a repo
that is not cached, or of a task simul cannot decode, refused in one line."""

from __future__ import annotations

import contextlib
import json
import shutil

import numpy as np
import pytest
import soundfile as sf
import yaml

pytest.importorskip("huggingface_hub", reason="huggingface_hub (requirements/constraints.txt)")
pytest.importorskip("transformers", reason="the hub extra: pip install 'simul[hub]'")

from simul import sweep
from simul.commands import cli  # noqa: E402
from simul.corpus import export_simuleval, load_list  # noqa: E402
from simul.decoding.simulate import simulate  # noqa: E402
from simul.models import hub, loader, registry  # noqa: E402
from simul.models.adapters.espnet_st import ESPnetST  # noqa: E402
from simul.models.adapters.hf_s2t import HFSpeech2Text  # noqa: E402
from simul.models.espnet_env import import_espnet  # noqa: E402
from simul.policies import make  # noqa: E402
from tests.hub_models import (  # noqa: E402
    ESPNET_RUN,
    make_espnet_repo,
    make_s2t_repo,
    place_in_cache,
)
from tests.test_live import printed_words  # noqa: E402
from tests.test_mustc import PAIR, SPLIT, make_corpus  # noqa: E402

ESPNET_ID = "espnet/tiny_must_c_v2_st_conformer"
S2T_ID = "facebook/s2t-tiny-mustc-en-de-st"
POLICY = ["--policy", "wait_k_frames", "--set", "k=40", "--set", "s=20", "--set", "n=2"]


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """{repo id: the repo's files as built (a directory)}, every repo in one Hub cache:
    the two models simul decodes and four of tasks it does not."""
    root = tmp_path_factory.mktemp("published")
    repos = {ESPNET_ID: make_espnet_repo(root / "espnet"),
             S2T_ID: make_s2t_repo(root / "s2t")}
    asr = shutil.copytree(repos[S2T_ID], root / "s2t_asr")  # librispeech's card: English only
    (asr / "README.md").write_text("---\nlanguage: en\ntags:\n- speech\n- audio\n"
                                   "- automatic-speech-recognition\n---\n")
    repos["facebook/s2t-tiny-librispeech-asr"] = asr
    espnet_asr = root / "espnet_asr"  # ESPnet's ASR pack: asr_train_config, asr_model_file
    (espnet_asr / "exp" / "asr_train").mkdir(parents=True)
    (espnet_asr / "exp" / "asr_train" / "config.yaml").write_text("token_list: [a]\n")
    (espnet_asr / "exp" / "asr_train" / "valid.acc.ave.pth").write_bytes(b"")
    (espnet_asr / "meta.yaml").write_text(yaml.safe_dump({
        "files": {"asr_model_file": "exp/asr_train/valid.acc.ave.pth"},
        "yaml_files": {"asr_train_config": "exp/asr_train/config.yaml"}}))
    repos["espnet/tiny_librispeech_asr"] = espnet_asr
    tts = shutil.copytree(espnet_asr, root / "espnet_tts")  # TTS packs use train_config
    (tts / "meta.yaml").write_text(yaml.safe_dump({
        "files": {"model_file": "exp/asr_train/valid.acc.ave.pth"},
        "yaml_files": {"train_config": "exp/asr_train/config.yaml"}}))
    (tts / "README.md").write_text("---\ntags:\n- espnet\n- audio\n- text-to-speech\n---\n")
    repos["espnet/tiny_ljspeech_vits"] = tts
    speecht5 = root / "speecht5"
    speecht5.mkdir()
    (speecht5 / "config.json").write_text(json.dumps(
        {"model_type": "speecht5", "architectures": ["SpeechT5ForTextToSpeech"]}))
    (speecht5 / "README.md").write_text("---\npipeline_tag: text-to-speech\n---\n")
    repos["microsoft/speecht5_tts"] = speecht5
    cache = root / "hub"
    for repo_id, directory in repos.items():
        place_in_cache(cache, repo_id, directory)
    return cache, repos


@pytest.fixture
def offline(published, monkeypatch):
    """The test's Hub cache, offline; the built repos."""
    cache, repos = published
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return cache, repos


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A tiny MuST-C style en-de split (tests/test_mustc.py)."""
    root = tmp_path_factory.mktemp("mustc")
    make_corpus(root / PAIR)
    return root


def snapshot(cache, repo_id):
    return cache / f"models--{repo_id.replace('/', '--')}" / "snapshots" / ("0" * 40)


@pytest.mark.parametrize(("repo_id", "family", "pair"),
                         [(ESPNET_ID, "espnet", None), (S2T_ID, "transformers", "en-de")])
def test_a_repo_id_is_its_snapshot_in_the_hub_cache(offline, repo_id, family, pair):
    cache, _ = offline
    directory = registry.resolve(repo_id)
    assert directory == snapshot(cache, repo_id)
    assert registry.family(directory) == family
    assert registry.task(repo_id) == "st"
    assert registry.pair(repo_id) == pair  # the card's two languages; ESPnet's says noinfo
    assert registry.label(repo_id) == repo_id.replace("/", "--")


def test_the_packed_layout_loads_as_espnet_decodes_it(offline, speech):
    cache, repos = offline
    model = loader.load(ESPNET_ID)
    assert type(model) is ESPnetST
    assert model.config_path == snapshot(cache, ESPNET_ID) / ESPNET_RUN / "config.yaml"
    assert model.model_file.name == "valid.acc.ave_10best.pth"
    assert registry.config(ESPNET_ID)["normalize"] == "global_mvn"
    # ESPnet's own inference, run from the repo's root as its recipes run it
    s2t = import_espnet("espnet2.bin.st_inference").Speech2Text
    with contextlib.chdir(snapshot(cache, ESPNET_ID)):
        reference = s2t(st_train_config=f"{ESPNET_RUN}/config.yaml", beam_size=1,
                        st_model_file=f"{ESPNET_RUN}/valid.acc.ave_10best.pth")(speech)
    ours = model.greedy(model.encode(speech))
    assert [t for t in ours.tokens if t] == reference[0][2] and len(ours.tokens) >= 3
    # the repo's BPE model: known words become pieces of the token list, not <unk> (1)
    assert model.unit_type == "bpe" and 1 not in model.encode_text("the cat sat on the mat")


def test_a_repo_not_in_the_cache_offline_is_one_line(offline, tmp_path, capsys):
    cache, _ = offline
    with pytest.raises(registry.UnknownModel) as info:
        registry.resolve("espnet/not_fetched")
    message = str(info.value)
    assert message == (f"espnet/not_fetched: not in the Hugging Face cache {cache}, and "
                       "HF_HUB_OFFLINE is set: fetch it once with a network (without "
                       "HF_HUB_OFFLINE), or set HF_HUB_CACHE to a cache that holds it")
    code = cli.main(["decode", "--model", "espnet/not_fetched", *POLICY, "--out",
                     str(tmp_path / "r.jsonl")])
    err = capsys.readouterr().err
    assert code == 2 and err == f"simul: error: {message}\n"
    assert not (tmp_path / "r.jsonl").exists()


def test_no_network_and_no_cache_names_the_repo_and_the_cache(offline, monkeypatch):
    import huggingface_hub
    from huggingface_hub import errors

    cache, _ = offline
    monkeypatch.delenv("HF_HUB_OFFLINE")
    calls = []

    def unreachable(repo_id, **kw):  # what snapshot_download raises without a network
        calls.append(kw.get("local_files_only", False))
        raise errors.LocalEntryNotFoundError("Got: ConnectError: [Errno -2] Name or service "
                                             "not known\nAn error happened …")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", unreachable)
    with pytest.raises(hub.HubError) as info:
        hub.fetch("facebook/s2t-small-mustc-en-de-st")
    assert str(info.value) == (
        f"facebook/s2t-small-mustc-en-de-st: not in the Hugging Face cache {cache}, and the "
        "Hub cannot be reached (Got: ConnectError: [Errno -2] Name or service not known); "
        "fetch it once with a network, then HF_HUB_OFFLINE=1 reads it from the cache")
    assert calls == [True, False]  # the cache first, then the Hub


def test_a_cached_repo_is_read_without_asking_the_hub(offline, monkeypatch):
    import huggingface_hub

    monkeypatch.delenv("HF_HUB_OFFLINE")  # online: still no request for a cached repo
    real = huggingface_hub.snapshot_download
    calls = []

    def counting(repo_id, **kw):
        calls.append(kw.get("local_files_only", False))
        return real(repo_id, **kw)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", counting)
    hub._fetched.clear()
    assert hub.fetch(S2T_ID) == snapshot(offline[0], S2T_ID)
    assert calls == [True]


@pytest.mark.parametrize(("repo_id", "what"), [
    ("facebook/s2t-tiny-librispeech-asr", "a Speech2Text model of speech recognition (ASR) "
     "(README.md tags)"),
    ("espnet/tiny_librispeech_asr", "an ESPnet2 model of speech recognition (ASR) "
     "(meta.yaml: asr_train_config)"),
    ("espnet/tiny_ljspeech_vits", "an ESPnet2 model of speech synthesis (TTS) "
     "(meta.yaml: train_config)"),
    ("microsoft/speecht5_tts", "a transformers speecht5 model (SpeechT5ForTextToSpeech; "
     "speech synthesis (TTS))"),
])
def test_a_repo_of_another_task_is_refused_naming_what_it_is(offline, tmp_path, capsys,
                                                            repo_id, what):
    code = cli.main(["decode", "--model", repo_id, *POLICY, "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2
    assert err == (f"simul: error: {repo_id}: {what}; simul decodes speech translation: "
                   "ESPnet2 ST models and transformers' Speech2Text (fairseq S2T)\n")


def without(record: dict, *keys) -> dict:
    return {k: v for k, v in record.items() if k not in keys}


@pytest.mark.parametrize("repo_id", [ESPNET_ID, S2T_ID])
def test_decode_by_repo_id_writes_the_records_of_its_files(offline, corpus, tmp_path,
                                                           repo_id):
    _, repos = offline
    records = {}
    for how, model in (("id", repo_id), ("dir", str(repos[repo_id]))):
        out = tmp_path / f"{how}.jsonl"
        assert cli.main(["decode", "--model", model, *POLICY, "--pair", PAIR, "--split",
                         SPLIT, "--corpus", str(corpus), "--out", str(out)]) == 0
        records[how] = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records["id"]) == 4 and any(r["prediction"] for r in records["id"])
    assert records["id"][0]["model"] == repo_id
    assert ([without(r, "model", "elapsed") for r in records["id"]]
            == [without(r, "model", "elapsed") for r in records["dir"]])


@pytest.mark.parametrize("repo_id", [ESPNET_ID, S2T_ID])
def test_stream_a_wav_by_repo_id(offline, capsys, tmp_path, speech, repo_id):
    wav = tmp_path / "talk.wav"
    sf.write(wav, np.concatenate([speech, speech]), 16000, subtype="FLOAT")
    words = {}
    for how, model in (("id", repo_id), ("dir", str(offline[1][repo_id]))):
        code = cli.main(["stream", "--model", model, *POLICY, "--wav", str(wav),
                         "--level", "off"])
        out, err = capsys.readouterr()
        assert code == 0, err
        words[how] = [(d, w) for d, w, _ in printed_words(out)]
    assert words["id"] and words["id"] == words["dir"]


def test_a_sweep_of_repo_ids(offline, corpus, tmp_path):
    out = tmp_path / "sweep"
    spec = {"models": [ESPNET_ID, S2T_ID], "pair": PAIR, "splits": [SPLIT],
            "corpus": str(corpus), "output": str(out),
            "policies": [{"policy": "wait_k_frames", "grid": {"k": [30, 60]},
                          "fixed": {"s": 20, "n": 2}},
                         {"policy": "onlinization", "settings": [{"chunk_ms": 400, "beam": 2}]},
                         {"policy": "alignatt", "settings": [{"chunk_ms": 300}]}]}
    table = sweep.run(spec, workers=1, progress=False)
    assert sorted(set(table.model)) == [ESPNET_ID.replace("/", "--"),
                                        S2T_ID.replace("/", "--")]
    assert len(table) == 8 and (table.utterances == 4).all()
    # each record is what deciding its setting alone on the loaded model gives
    model = loader.load(S2T_ID)
    row = table[(table.model == S2T_ID.replace("/", "--"))
                & (table.policy == "onlinization")].iloc[0]
    got = [json.loads(line) for line in open(row.records)]
    segments = load_list(corpus, PAIR, SPLIT)
    expected = [simulate(model, make("onlinization", {"chunk_ms": 400, "beam": 2}), s,
                         model_name=S2T_ID.replace("/", "--")) for s in segments]
    fields = ("prediction", "delays", "units", "trace", "source_length", "reference")
    assert ([[r[f] for f in fields] for r in got]
            == [[json.loads(json.dumps(getattr(e, f))) for f in fields] for e in expected])


@pytest.mark.parametrize("repo_id", [ESPNET_ID, S2T_ID])
def test_the_simuleval_agent_by_repo_id(offline, corpus, tmp_path, monkeypatch, capsys,
                                        repo_id):
    pytest.importorskip("simuleval", reason="simuleval 1.1.4 is not installed")
    from tests.test_simuleval_agent import AGENT, _run_simuleval

    data = tmp_path / "data"
    export_simuleval(corpus, PAIR, SPLIT, data)
    args = ["--agent-class", AGENT, "--model", repo_id, "--policy", "wait_k_frames",
            "--set", "k=40", "--source", str(data / "source.txt"), "--target",
            str(data / "target.txt"), "--source-segment-size", "10"]
    instances, scores, _ = _run_simuleval(args, tmp_path / "out", in_process=True,
                                          monkeypatch=monkeypatch, capsys=capsys)
    model = loader.load(repo_id)
    assert isinstance(model, HFSpeech2Text if repo_id == S2T_ID else ESPnetST)
    records = [simulate(model, make("wait_k_frames", {"k": 40}), s)
               for s in load_list(corpus, PAIR, SPLIT)]
    assert [i["prediction"] for i in instances] == [r.prediction for r in records]
    assert [i["delays"] for i in instances] == [r.delays for r in records]  # 10 ms steps
    assert "AL" in scores
