"""A model directory that cannot give the model it describes is refused in one line naming
the file and what is wrong: weights loaded strictly (missing modules named, with how many of
their tensors are missing; tensors of another model), config.yaml's YAML errors with their
line and column, class names ESPnet does not know with the field."""

from __future__ import annotations

import shutil

import pytest
import torch

from simul.commands import cli
from simul.models import loader, registry
from simul.models.adapters.espnet_st import ModelError
from tests.conftest import make_tiny_model


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return make_tiny_model(tmp_path_factory.mktemp("tiny_errors"), "transformer")


@pytest.fixture
def copy(tiny, tmp_path):
    """A copy of the tiny model's directory, to damage."""
    return shutil.copytree(tiny, tmp_path / "copy")


@pytest.fixture
def splits(tmp_path):
    (tmp_path / "corpus" / "en-de" / "data" / "tst-COMMON").mkdir(parents=True)
    return tmp_path / "corpus"


def one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.removeprefix("simul: error: ").rstrip("\n")


def decode(model, corpus, out) -> int:
    return cli.main(["decode", "--model", str(model), "--pair", "en-de", "--corpus",
                     str(corpus), "--out", str(out)])


def test_a_model_file_without_some_modules_is_refused_naming_them(copy):
    state = torch.load(copy / "model.pth")
    n_encoder = sum(k.startswith("encoder.") for k in state)
    kept = {k: v for k, v in state.items() if not k.startswith(("encoder.", "ctc."))}
    kept.update({k: v for k, v in state.items() if k.startswith("encoder.embed.")})
    n_embed = sum(k.startswith("encoder.embed.") for k in state)
    assert 0 < n_embed < n_encoder
    torch.save(kept, copy / "model.pth")
    with pytest.raises(ModelError) as e:
        loader.load(copy)
    assert str(e.value) == (
        f"{copy}: model.pth lacks modules of the model config.yaml describes: encoder "
        f"({n_encoder - n_embed} of its {n_encoder} tensors), ctc (2 of its 2 tensors); a model "
        "that ships only what it changed needs the simul.json that names its parent")


def test_tensors_of_another_model_are_refused(copy):
    state = torch.load(copy / "model.pth")
    torch.save({**state, "adapter.weight": torch.zeros(2)}, copy / "model.pth")
    with pytest.raises(ModelError, match=r"model.pth holds 1 tensor\(s\) the model config.yaml "
                                         r"describes has no place for \(in adapter, e\.g\. "
                                         r"adapter.weight\)"):
        loader.load(copy)
    name = next(k for k in state if k.startswith("decoder.") and state[k].dim() == 2)
    rows, cols = state[name].shape
    torch.save({**state, name: torch.zeros(rows + 1, cols)}, copy / "model.pth")
    with pytest.raises(ModelError, match=f"model.pth: {name} has shape \\({rows + 1}, {cols}\\), "
                                         f"config.yaml's model \\({rows}, {cols}\\)"):
        loader.load(copy)


def test_a_shipped_child_copied_without_its_simul_json_is_refused(tmp_path, splits, capsys):
    """The issue's case: conformer_bpe_en-de ships its decoder and 18 running statistics of
    its parent's frozen encoder; without simul.json naming the parent it decoded with a
    random encoder and no CTC (BLEU 0.00, exit 0)."""
    if "conformer_bpe_en-de" not in registry.shipped():
        pytest.skip("conformer_bpe_en-de is not shipped")
    copy = shutil.copytree(registry.resolve("conformer_bpe_en-de"), tmp_path / "de_copy")
    (copy / "simul.json").unlink()
    out = tmp_path / "r.jsonl"
    assert decode(copy, splits, out) == 2
    assert one_line(capsys) == (
        f"{copy}: model.pth lacks modules of the model config.yaml describes: encoder (232 of "
        "its 250 tensors), ctc (2 of its 2 tensors); a model that ships only what it changed "
        "needs the simul.json that names its parent")
    assert not out.exists()


def test_a_broken_config_names_the_file_line_and_column(copy, splits, tmp_path, capsys):
    config = copy / "config.yaml"
    config.write_text("encoder: rnn\ndecoder: [transformer\ntoken_list: [a]\n")
    out = tmp_path / "r.jsonl"
    assert decode(copy, splits, out) == 2
    # PyYAML stops at the ':' of line 3, column 11, in the list opened on line 2, column 10
    assert one_line(capsys) == (f"{config}: not valid YAML (line 3, column 11: expected ',' or "
                                "']', but got ':'; while parsing a flow sequence from line 2, "
                                "column 10)")
    assert not out.exists()


def test_an_unknown_class_name_names_the_field_not_an_espnet_flag(copy, splits, tmp_path,
                                                                  capsys):
    config = copy / "config.yaml"
    config.write_text(config.read_text().replace("decoder: transformer\n", "decoder: xyz\n"))
    out = tmp_path / "r.jsonl"
    assert decode(copy, splits, out) == 2
    err = one_line(capsys)
    assert err.startswith(f"{config}: decoder: 'xyz' is not one of transformer, ")
    assert ", rnn," in err and "--decoder" not in err
    assert not out.exists()
