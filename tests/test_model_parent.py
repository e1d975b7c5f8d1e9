"""Models that ship only what they changed and name their parent for the rest."""

import json

import pytest
import torch

from simul.models import parent, registry
from simul.zoo import pack


def _state(seed: int, running: float = 0.0) -> dict:
    g = torch.Generator().manual_seed(seed)
    return {
        "encoder.w": torch.randn(3, 2, generator=g).half(),
        "encoder.norm.running_mean": torch.full((2,), running).half(),
        "ctc.ctc_lo.weight": torch.randn(4, 2, generator=g).half(),
        "decoder.w": torch.randn(2, 2, generator=g).half(),
    }


def test_split_drops_the_parents_modules_and_keeps_moved_statistics():
    mother = _state(0)
    child = {**_state(0, running=0.5), "decoder.w": torch.ones(2, 2).half()}
    own = parent.split(child, mother, ["ctc", "encoder"])
    # the frozen weights are the parent's; batch-norm statistics moved in training stay
    assert sorted(own) == ["decoder.w", "encoder.norm.running_mean"]
    assert torch.equal(own["decoder.w"], torch.ones(2, 2).half())


def test_split_refuses_a_module_that_was_not_frozen():
    mother = _state(0)
    child = {**mother, "encoder.w": mother["encoder.w"] + 1}
    with pytest.raises(parent.ParentError, match=r"encoder\.w differs.*'encoder' was not frozen"):
        parent.split(child, mother, ["encoder"])


@pytest.fixture
def family(tmp_path, monkeypatch):
    """A shipped parent and a child that ships its decoder and moved statistics only."""
    models = tmp_path / "models"
    (models / "mother").mkdir(parents=True)
    (models / "child").mkdir()
    mother = _state(1)
    torch.save(mother, models / "mother" / "model.pth")
    whole = {**_state(1, running=0.25), "decoder.w": torch.zeros(2, 2).half()}
    torch.save(parent.split(whole, mother, ["ctc", "encoder"]), models / "child" / "model.pth")
    (models / "child" / "simul.json").write_text(json.dumps({parent.KEY: {
        "model": "mother", "sha256": parent.sha256(models / "mother" / "model.pth"),
        "modules": ["ctc", "encoder"]}}))
    monkeypatch.setattr(registry, "MODELS_DIR", models)
    monkeypatch.setenv(parent.ENV, str(tmp_path / "cache"))
    return models, whole


def test_the_loader_assembles_the_whole_model_once(family):
    models, whole = family
    child = models / "child"
    path = parent.assembled(child, child / "model.pth")
    assert path.parents[2] == parent.cache_dir() and path.parent.name == "child"
    state = torch.load(path)
    assert sorted(state) == sorted(whole)
    assert all(torch.equal(state[k], whole[k]) for k in whole)
    mtime = path.stat().st_mtime_ns
    assert parent.assembled(child, child / "model.pth") == path
    assert path.stat().st_mtime_ns == mtime  # cached, not written again
    # a whole model is its own file
    mother = models / "mother"
    assert parent.assembled(mother, mother / "model.pth") == mother / "model.pth"


def test_a_retrained_parent_is_refused(family):
    models, _ = family
    torch.save(_state(2), models / "mother" / "model.pth")
    with pytest.raises(parent.ParentError, match=r"simul\.json: field 'parent'.*retrained"):
        parent.assembled(models / "child", models / "child" / "model.pth")


def test_pack_finds_the_parent_of_frozen_modules(tmp_path):
    models = tmp_path / "models"
    (models / "mother").mkdir(parents=True)
    mother = _state(3)
    torch.save(mother, models / "mother" / "model.pth")
    run_conf = {"freeze_param": ["encoder", "ctc"],
                "init_param": [f"/x/start/mother@abc1234/model.pth:{m}:{m}"
                               for m in ("encoder", "ctc", "decoder.w")]}
    trained = {**mother, "decoder.w": torch.ones(2, 2).half()}
    entry, own = pack.child_of_parent(run_conf, trained, models, "child")
    assert entry == {"model": "mother", "sha256": parent.sha256(models / "mother" / "model.pth"),
                     "modules": ["ctc", "encoder"]}
    assert sorted(own) == ["decoder.w"]
    # nothing frozen: shipped whole
    assert pack.child_of_parent({}, trained, models, "child") == (None, trained)
    # frozen weights that are not the shipped parent's (it was retrained): shipped whole
    moved = {**trained, "encoder.w": trained["encoder.w"] * 2}
    assert pack.child_of_parent(run_conf, moved, models, "child") == (None, moved)


def test_a_grandchild_is_assembled_through_its_parent(family):
    """A child of a child (a wait-k decoder on the en-de Conformer, itself on the en-es
    encoder) gets its grandparent's modules through its parent."""
    models, whole = family
    (models / "grandchild").mkdir()
    own = {"decoder.w": torch.full((2, 2), 3.0).half()}
    torch.save(own, models / "grandchild" / "model.pth")
    (models / "grandchild" / "simul.json").write_text(json.dumps({parent.KEY: {
        "model": "child", "sha256": parent.sha256(models / "child" / "model.pth"),
        "modules": ["ctc", "encoder"]}}))
    path = parent.assembled(models / "grandchild", models / "grandchild" / "model.pth")
    state = torch.load(path)
    assert torch.equal(state["encoder.w"], whole["encoder.w"])  # the grandparent's
    assert torch.equal(state["encoder.norm.running_mean"], whole["encoder.norm.running_mean"])
    assert torch.equal(state["decoder.w"], own["decoder.w"])


def test_a_run_starts_from_a_child_model_whole(family, monkeypatch):
    """`simul train` copies modules from a child model's assembled file: ESPnet's
    init_param needs every parameter, the child's model.pth has only its own."""
    from simul.models.training import train

    models, whole = family
    (models / "child" / "config.yaml").write_text("token_list: [a]\n")
    entries = train.init_params([{"model": "child", "modules": ["encoder"]}], "new")
    path = entries[0].rsplit(":", 2)[0]
    assert entries[0].endswith(":encoder:encoder") and path != str(models / "child" / "model.pth")
    assert sorted(torch.load(path)) == sorted(whole)


def test_a_model_packed_elsewhere_names_the_shipped_parent(tmp_path, monkeypatch):
    from simul.zoo import pack as pack_mod

    shipped = tmp_path / "shipped"
    (shipped / "mother").mkdir(parents=True)
    mother = _state(4)
    torch.save(mother, shipped / "mother" / "model.pth")
    monkeypatch.setattr(pack_mod, "MODELS_DIR", shipped)
    run_conf = {"freeze_param": ["encoder"],
                "init_param": ["/x/start/mother@abc1234/model.pth:encoder:encoder"]}
    entry, own = pack.child_of_parent(run_conf, mother, tmp_path / "probes", "probe")
    assert entry["model"] == "mother" and "encoder.w" not in own


def test_the_card_counts_the_whole_model_and_names_what_the_parent_supplies(
        tmp_path, monkeypatch):
    import yaml

    from simul.zoo.card import write_card

    # a parent of 1,000,000 encoder and 10,000 ctc values; the child adds a decoder of
    # 500,000 and ships only that: 1.51 M in all, 0.50 M in its file
    models = tmp_path / "models"
    (models / "mother").mkdir(parents=True)
    (models / "child").mkdir()
    mother = {"encoder.w": torch.zeros(1000, 1000).half(), "ctc.w": torch.zeros(100, 100).half()}
    torch.save(mother, models / "mother" / "model.pth")
    torch.save({"decoder.w": torch.ones(500, 1000).half()}, models / "child" / "model.pth")
    (models / "child" / "simul.json").write_text(json.dumps({
        parent.KEY: {"model": "mother", "sha256": parent.sha256(models / "mother" / "model.pth"),
                     "modules": ["ctc", "encoder"]},
        "pair": "en-de", "averaged": ["1epoch.pth"]}))
    (models / "child" / "config.yaml").write_text(yaml.safe_dump({
        "encoder": "conformer", "decoder": "transformer", "token_type": "bpe",
        "token_list": ["<blank>", "a", "<sos/eos>"]}))
    # two epochs of 1,500 + 300 and 1,800 + 0 seconds: 3,600 s = 1 h 00 min
    (models / "child" / "learning_curve.csv").write_text(
        "epoch,train_seconds,valid_seconds\n1,1500,300\n2,1800,\n")
    monkeypatch.setattr(registry, "MODELS_DIR", models)
    monkeypatch.setenv(parent.ENV, str(tmp_path / "cache"))
    card = write_card("child", models).read_text()
    assert ("- training cost: 2 epochs, 1 h 00 min of ESPnet train and valid time "
            "(learning_curve.csv), one core") in card.splitlines()
    line = next(x for x in card.splitlines() if x.startswith("- parameters:"))
    assert line.startswith("- parameters: 1.51 M, of which 0.50 M in its file (1.0 MiB): "
                           "the ctc and encoder of `mother` (sha256 ")
    assert line.endswith("are not shipped again; the loader puts them back")
    # one inherited module: the verb agrees
    info = json.loads((models / "child" / "simul.json").read_text())
    info[parent.KEY]["modules"] = ["encoder"]
    (models / "child" / "simul.json").write_text(json.dumps(info))
    torch.save({"decoder.w": torch.ones(500, 1000).half(), "ctc.w": torch.zeros(100, 100).half()},
               models / "child" / "model.pth")
    line = next(x for x in write_card("child", models).read_text().splitlines()
                if x.startswith("- parameters:"))
    assert " the encoder of `mother` (sha256 " in line
    assert line.endswith("is not shipped again; the loader puts it back")
    # running statistics a frozen module's BatchNorm moved stay in the child's file (split
    # keeps them): the card counts them
    torch.save({"decoder.w": torch.ones(500, 1000).half(),
                "encoder.bn.running_mean": torch.ones(4).half(),
                "encoder.bn.running_var": torch.ones(4).half()},
               models / "child" / "model.pth")
    line = next(x for x in write_card("child", models).read_text().splitlines()
                if x.startswith("- parameters:"))
    assert line.endswith("is not shipped again, but for the 2 running statistics that training "
                         "moved (running_mean and running_var); the loader puts it back")
