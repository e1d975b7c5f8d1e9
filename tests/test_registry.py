"""simul.models.registry: one rule from a model name to its directory, one reader of a
model's simul.json."""

import json

import pytest

from simul.models import registry


@pytest.fixture
def models(tmp_path, monkeypatch):
    """A models folder of one ESPnet model ("st") and one cascade naming it twice."""
    root = tmp_path / "models"
    (root / "st").mkdir(parents=True)
    (root / "st" / "config.yaml").write_text("src_token_list: [a]\ntoken_list: [b]\n")
    (root / "st" / "simul.json").write_text(json.dumps({"pair": "en-de", "task": "st"}))
    (root / "duo").mkdir()
    (root / "duo" / "cascade.json").write_text(json.dumps({"asr": "st", "mt": "st"}))
    monkeypatch.setattr(registry, "MODELS_DIR", root)
    return root


def test_a_shipped_name_comes_before_a_directory_of_the_same_name(models, tmp_path,
                                                                  monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "st").mkdir()  # ./st exists too: the shipped model wins
    assert registry.resolve("st") == models / "st"
    assert registry.resolve(tmp_path / "st") == tmp_path / "st"  # a path is a path
    assert registry.shipped() == ["duo", "st"]


def test_a_directory_is_found_with_its_home_expanded(models, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "mine").mkdir()
    assert registry.resolve("~/mine") == tmp_path / "mine"


def test_an_unknown_model_says_did_you_mean_and_where_to_list_them(models):
    with pytest.raises(registry.UnknownModel) as e:
        registry.resolve("sst")  # one letter from "st"
    assert str(e.value) == ("no model 'sst': not a shipped model, a directory nor a Hugging "
                            "Face Hub repo id (owner/name); did you mean st? (`simul models` "
                            "lists the shipped models)")
    with pytest.raises(registry.UnknownModel) as e:
        registry.resolve("nope")  # nothing close: no guess
    assert str(e.value) == ("no model 'nope': not a shipped model, a directory nor a Hugging "
                            "Face Hub repo id (owner/name) (`simul models` lists the shipped "
                            "models)")


def test_an_unknown_shipped_name_is_one_short_line(tmp_path, capsys):
    from simul.commands import cli

    out = tmp_path / "r.jsonl"
    assert cli.main(["decode", "--model", "conformer_bpe_en-xx", "--out", str(out)]) == 2
    assert not out.exists()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 250, err
    assert "did you mean conformer_bpe_en-es, conformer_bpe_en-de, asr_conformer_bpe_en?" in err


def test_a_mistyped_path_is_not_looked_up_on_the_hub(models, tmp_path, monkeypatch):
    from simul.models import hub

    monkeypatch.setattr(hub, "fetch", lambda repo_id: pytest.fail(f"fetched {repo_id}"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    with pytest.raises(registry.UnknownModel, match=r"no model 'runs/mine': not a shipped"):
        registry.resolve("runs/mine")


def test_metadata_is_read_from_simul_json(models, tmp_path):
    assert registry.pair("st") == "en-de" and registry.task("st") == "st"
    assert registry.cascade_parts("duo") == (models / "st", models / "st")
    assert registry.is_cascade(models / "duo") and not registry.is_cascade(models / "st")
    bare = tmp_path / "bare"  # no simul.json: no pair; the task from what the config holds
    bare.mkdir()
    (bare / "config.yaml").write_text("token_list: [b]\n")  # no src_token_list: ASR
    assert registry.info(bare) == {} and registry.pair(bare) is None
    assert registry.task(bare) == "asr"
    (bare / "simul.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"bare/simul.json: not JSON"):
        registry.info(bare)
    (bare / "simul.json").write_text(json.dumps({"task": "tts"}))
    with pytest.raises(ValueError, match=r"field 'task': 'tts' is not a task"):
        registry.task(bare)


def test_a_cascade_naming_a_missing_model_says_which_field(models):
    (models / "duo" / "cascade.json").write_text(json.dumps({"asr": "st", "mt": "gone"}))
    with pytest.raises(ValueError, match=r"cascade.json: field 'mt': no model 'gone'"):
        registry.cascade_parts("duo")
