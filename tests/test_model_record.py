"""simul.models.registry.Model: a model name resolved once into one record (directory,
family, task, pair, config, parent, training schedule, checksum) that commands, sweeps,
papers and cards pass on; its checksum the one sweeps have keyed records by."""

from __future__ import annotations

import hashlib
import json
import pickle
import sys

import pytest
import yaml

from simul import sweep
from simul.models import registry

# The checksums the sweep's ModelRef gave these directories before the record replaced it
# (simul.sweep.resolve_model at commit 084be6c): stored records are keyed by them.
OLD_CHECKSUMS = {
    "mine": "453ffd0c0b3c7d6141047aabf33f6497b6c192e73cae4bd9cc97d376d5b1c41b",
    "duo": "096205d99d51870ae4b226b6e1fd9a52bd9b27c0b00e6cf1f5dda018cfcb54fd",
    "packed": "b1aa1d241965de1da8613a7377b5579a704dd4b85e4d3aa696d8a41572be6d45",
}


@pytest.fixture
def models(tmp_path):
    """Tiny model directories (their files' bytes fixed, nothing a model loads): an ESPnet
    model (``mine``), a cascade of an ASR and an MT model beside its cascade.json
    (``duo``), and ESPnet's packed layout of a published repo (``packed``)."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "config.yaml").write_text(
        "src_token_list: [a]\ntoken_list: [b]\nencoder: conformer\n")
    (mine / "model.pth").write_bytes(b"weights of mine")
    (mine / "simul.json").write_text(json.dumps({"pair": "en-de", "task": "st"}))
    duo = tmp_path / "duo"
    (duo / "asr").mkdir(parents=True)
    (duo / "asr" / "config.yaml").write_text("token_list: [a]\n")
    (duo / "asr" / "model.pth").write_bytes(b"asr weights")
    (duo / "mt").mkdir()
    (duo / "mt" / "config.yaml").write_text(
        "src_token_list: [a]\ntoken_list: [b]\nfrontend: embed\n")
    (duo / "mt" / "model.pth").write_bytes(b"mt weights")
    (duo / "mt" / "simul.json").write_text(json.dumps({"pair": "en-es", "task": "mt"}))
    (duo / "cascade.json").write_text(json.dumps({"asr": "asr", "mt": "mt"}))
    packed = tmp_path / "packed"
    run = packed / "exp" / "st_train"
    run.mkdir(parents=True)
    (run / "config.yaml").write_text("src_token_list: [a]\ntoken_list: [b]\n")
    (run / "valid.acc.ave.pth").write_bytes(b"packed weights")
    (packed / "meta.yaml").write_text(yaml.safe_dump({
        "files": {"st_model_file": "exp/st_train/valid.acc.ave.pth"},
        "yaml_files": {"st_train_config": "exp/st_train/config.yaml"}}))
    (packed / "README.md").write_text("---\nlanguage:\n- en\n- de\ntags:\n- espnet\n---\n")
    return tmp_path


def sha256_of_sha256s(*paths) -> str:
    """The checksum's definition, written out: SHA-256 of the files' hex SHA-256s."""
    outer = hashlib.sha256()
    for p in paths:
        outer.update(hashlib.sha256(p.read_bytes()).hexdigest().encode())
    return outer.hexdigest()


def test_a_shipped_name_is_its_record():
    model = registry.model("conformer_bpe_en-es")
    assert model.name == model.label == "conformer_bpe_en-es"
    assert model.directory == registry.MODELS_DIR / "conformer_bpe_en-es"
    assert (model.family, model.task, model.pair) == ("espnet", "st", "en-es")
    assert model.parent is None and dict(model.training_schedule) == {}
    assert model.config["encoder"] == "conformer"
    assert str(model) == "conformer_bpe_en-es"  # records of simul decode quote the name
    assert registry.model(model) is model  # a record is passed on, not resolved again


def test_a_child_trained_in_simultaneous_mode_names_its_parent_and_schedule():
    model = registry.model("conformer_bpe_en-de_waitk3")
    info = json.loads((model.directory / "simul.json").read_text())
    assert model.parent == info["parent"]["model"] == "conformer_bpe_en-de"
    assert dict(model.training_schedule) == info["simultaneous_training"]
    assert model.training_schedule["k_train"] == 3
    assert model.pair == "en-de"


def test_a_directory_is_its_record_read_lazily(models):
    model = registry.model(models / "mine")
    assert model.label == "mine" and model.directory == models / "mine"
    assert "_config" not in vars(model)  # nothing parsed until asked
    assert (model.family, model.task, model.pair) == ("espnet", "st", "en-de")
    assert model.config == {"src_token_list": ["a"], "token_list": ["b"],
                            "encoder": "conformer"}
    with pytest.raises(TypeError):
        model.config["encoder"] = "rnn"  # read-only: the record is shared
    assert model.files() == [models / "mine" / "config.yaml", models / "mine" / "model.pth"]
    assert model.checksum == sha256_of_sha256s(*model.files()) == OLD_CHECKSUMS["mine"]


def test_a_cascade_is_its_record(models):
    model = registry.model(models / "duo")
    assert model.family == "cascade" and model.task == "st"  # it translates speech
    assert [part.label for part in model.parts] == ["asr", "mt"]
    assert model.parts[1].task == "mt" and model.parts[0].task == "asr"  # from the configs
    assert model.pair == "en-es"  # its MT model's
    duo = models / "duo"
    assert model.files() == [duo / "cascade.json", duo / "asr" / "config.yaml",
                             duo / "asr" / "model.pth", duo / "mt" / "config.yaml",
                             duo / "mt" / "model.pth"]
    assert model.checksum == OLD_CHECKSUMS["duo"]


def test_the_packed_layout_is_its_record(models):
    model = registry.model(models / "packed")
    assert (model.family, model.task, model.pair) == ("espnet", "st", "en-de")  # the card's
    run = models / "packed" / "exp" / "st_train"
    assert model.files() == [run / "config.yaml", run / "valid.acc.ave.pth"]
    assert model.checksum == OLD_CHECKSUMS["packed"]


def test_a_hub_repo_id_is_labelled_as_the_hub_cache_spells_it(models, tmp_path, monkeypatch):
    pytest.importorskip("huggingface_hub", reason="huggingface_hub")
    from tests.hub_models import place_in_cache

    place_in_cache(tmp_path / "hub", "espnet/tiny_packed", models / "packed")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = registry.model("espnet/tiny_packed")
    assert model.name == "espnet/tiny_packed" and model.label == "espnet--tiny_packed"
    assert model.checksum == OLD_CHECKSUMS["packed"]  # the same files, the same checksum


def test_a_transformers_model_checksums_its_files_and_weights(tmp_path):
    s2t = tmp_path / "s2t"
    s2t.mkdir()
    (s2t / "config.json").write_text(json.dumps({"model_type": "speech_to_text"}))
    for name in ("preprocessor_config.json", "sentencepiece.bpe.model", "vocab.json"):
        (s2t / name).write_text(name)
    (s2t / "pytorch_model.bin").write_bytes(b"bin")
    model = registry.model(s2t)
    assert model.family == "transformers"
    files = [s2t / n for n in ("config.json", "preprocessor_config.json",
                               "sentencepiece.bpe.model", "vocab.json", "pytorch_model.bin")]
    assert model.files() == files
    assert model.checksum == sha256_of_sha256s(*files)
    (s2t / "vocab.json").unlink()
    with pytest.raises(ValueError, match=r"s2t: a transformers Speech2Text model without "
                                         r"vocab.json$"):
        registry.model(s2t).files()


def test_a_child_model_is_checksummed_by_its_assembled_file(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    from simul.models import loader, parent

    monkeypatch.setenv("SIMUL_ASSEMBLED", str(tmp_path / "assembled"))
    root = tmp_path / "family"
    for name in ("base", "child"):
        (root / name).mkdir(parents=True)
        (root / name / "config.yaml").write_text("src_token_list: [a]\ntoken_list: [b]\n")
    torch.save({"encoder.w": torch.ones(2), "decoder.w": torch.zeros(2)},
               root / "base" / "model.pth")
    torch.save({"decoder.w": torch.full((2,), 3.0)}, root / "child" / "model.pth")
    (root / "child" / "simul.json").write_text(json.dumps({"parent": {
        "model": "base", "sha256": parent.sha256(root / "base" / "model.pth"),
        "modules": ["encoder"]}}))
    model = registry.model(root / "child")
    assert model.parent == "base"
    with pytest.raises(registry.NotAssembled, match=r"child: its complete model file"):
        model.checksum  # noqa: B018 (the loader writes the file it is made of)
    assert loader.assemble(model) is model
    whole = parent.assembled(root / "child", root / "child" / "model.pth")
    assert torch.load(whole)["encoder.w"].tolist() == [1.0, 1.0]
    assert model.files() == [root / "child" / "config.yaml", whole]
    # what the sweep's ModelRef summed: config.yaml and the complete model file
    assert model.checksum == sha256_of_sha256s(root / "child" / "config.yaml", whole)
    assert sweep.resolve_model(str(root / "child")).checksum == model.checksum


def test_a_record_pickles_with_what_it_has_read(models):
    model = registry.model(models / "mine")
    model.checksum, model.config  # noqa: B018 (read before it travels)
    again = pickle.loads(pickle.dumps(model))
    assert again == model and hash(again) == hash(model)
    assert vars(again)["checksum"] == OLD_CHECKSUMS["mine"]  # not summed again in a worker
    assert again.config["encoder"] == "conformer"
    assert {model, again} == {model}


def test_the_sweep_gives_its_workers_the_record_with_an_absolute_directory(
        models, monkeypatch):
    monkeypatch.chdir(models)
    model = sweep.resolve_model("mine")
    assert isinstance(model, registry.Model) and sweep.ModelRef is registry.Model
    assert model.directory == (models / "mine").resolve() and model.directory.is_absolute()
    assert model.label == "mine" and vars(model)["checksum"] == OLD_CHECKSUMS["mine"]


def test_building_a_record_imports_no_torch_and_reads_no_yaml(models):
    import subprocess

    code = ("import sys; from simul.models import registry; "
            f"m = registry.model({str(models / 'mine')!r}); m.pair; m.task; "
            "print('torch' in sys.modules, '_config' in vars(m))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]  # its simul.json says the task: no config parsed


def test_an_unknown_name_is_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(registry.UnknownModel) as e:
        registry.model("conformer_bpe_en-xx")
    assert str(e.value) == ("no model 'conformer_bpe_en-xx': not a shipped model, a directory "
                            "nor a Hugging Face Hub repo id (owner/name); did you mean "
                            "conformer_bpe_en-es, conformer_bpe_en-de, asr_conformer_bpe_en? "
                            "(`simul models` lists the shipped models)")
    with pytest.raises(sweep.SweepError, match=r"^no model 'conformer_bpe_en-xx': .*\)$"):
        sweep.resolve_model("conformer_bpe_en-xx")


def test_functions_of_a_name_take_the_record(models):
    model = registry.model(models / "duo")
    assert registry.resolve(model) == models / "duo"
    assert registry.label(model) == "duo"
    assert registry.pair(model) == registry.pair(models / "duo") == "en-es"
    assert registry.pair_source(model) == "its MT model mt's simul.json"
    with pytest.raises(ValueError, match=rf"^--pair en-de: {models / 'duo'} translates en-es"):
        registry.pair_for(model, "en-de")
    assert registry.config(registry.model(models / "mine"))["encoder"] == "conformer"
