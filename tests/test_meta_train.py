"""simul meta-train end to end on a tiny recipe: a meta run, fine-tuning from it, the
snapshots packed and decoded by simul like any ESPnet model; stages resume and refuse what
does not fit."""

import json

import pytest
import yaml

from simul.corpus.mini import build
from simul.models.training import meta_train

pytestmark = [pytest.mark.espeak, pytest.mark.apertium]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A tiny corpus with train spoken (`make test` leaves data/mini's train unspoken)."""
    root = tmp_path_factory.mktemp("corpus") / "mini"
    build.build(root, sizes={"train": 80, "dev": 5, "tst-COMMON": 1, "tst-HE": 1}, workers=2,
                progress=False)
    return root


@pytest.fixture(scope="module")
def recipe(tmp_path_factory):
    r = meta_train.load_recipe("conformer_bpe_en-de_meta")
    r["meta"].pop("init")  # the shipped encoder does not fit the tiny model (tested below)
    r["meta"].pop("augment")  # babble mixes 5 talks, the tiny corpus has 3 (tested below)
    r["meta"].update(source_tasks=["asr_en", "mt_en-de"], vocabulary=200,
                     batch={"speech": 2, "text": 3}, snapshot_every=2, dev_segments=3,
                     pretrain={"steps": 2, "lr": 0.001, "warmup": 2},
                     finetune={"steps": 4, "lr": 0.001, "warmup": 2})
    r["espnet"]["encoder_conf"].update(output_size=32, linear_units=32, num_blocks=1,
                                       attention_heads=2)
    r["espnet"]["decoder_conf"].update(linear_units=32, num_blocks=1, attention_heads=2)
    path = tmp_path_factory.mktemp("recipe") / "tiny_meta.yaml"
    path.write_text(yaml.safe_dump(r))
    return str(path)


def test_meta_then_finetune_then_pack_and_decode(recipe, corpus, tmp_path):
    from simul.corpus import load_list
    from simul.decoding.simulate import simulate
    from simul.models import loader
    from simul.policies import make
    from simul.zoo.pack import pack

    meta_dir = meta_train.run_stage(recipe, "meta", tmp_path / "meta", corpus_root=corpus,
                                    progress=False)
    steps = [json.loads(x) for x in (meta_dir / "steps.jsonl").read_text().splitlines()]
    assert [s["step"] for s in steps] == [0, 1]
    assert {s["task"] for s in steps} <= {"asr_en", "mt_en-de"}
    ft = meta_train.run_stage(recipe, "finetune", tmp_path / "wMT", start=meta_dir,
                              corpus_root=corpus, progress=False)
    curve = [json.loads(x) for x in (ft / "exp" / "curve.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in curve] == [1, 2] and all(0 <= r["valid_acc"] <= 1
                                                          for r in curve)
    steps = [json.loads(x) for x in (ft / "steps.jsonl").read_text().splitlines()]
    assert {s["task"] for s in steps} == {"st_en-de"}
    out = pack(ft / "exp", "tiny_wmt", pair="en-de", n_average=2, out_root=tmp_path / "models",
               progress=False)
    model = loader.load(out)
    seg = load_list(corpus, "en-de", "dev", limit=1)[0]
    record = simulate(model, make("offline"), seg)
    assert record.prediction is not None
    assert (out / "learning_curve.csv").is_file()
    # the card: the meta recipe's description, and both stages' steps and CPU time
    cost = json.loads((out / "simul.json").read_text())["training_cost"]
    assert (cost["stage"], cost["steps"], cost["start"]["stage"], cost["start"]["steps"]) == (
        "finetune", 4, "meta", 2)
    assert cost["cpu_seconds"] > 0 and cost["start"]["cpu_seconds"] > 0
    info = json.loads((out / "simul.json").read_text())
    info["command"] = "simul meta-train conformer_bpe_en-de_meta --stage finetune --workdir R"
    (out / "simul.json").write_text(json.dumps(info))
    from simul.zoo.card import write_card

    card = write_card("tiny_wmt", root=tmp_path / "models").read_text()
    assert "training cost: finetune 4 steps (" in card and " after meta 2 steps (" in card
    assert "dev loss and accuracy per snapshot" in card
    assert "H20's meta-learning for data-scarce speech translation" in card
    # a finished stage resumes to nothing; another stage in its directory is refused
    meta_train.run_stage(recipe, "finetune", ft, start=meta_dir, corpus_root=corpus,
                         progress=False)
    again = json.loads((ft / "cost.json").read_text())
    assert again["steps"] == 4 and again["cpu_seconds"] > cost["cpu_seconds"]
    assert again["counted_steps"] == 4
    info["training_cost"]["start"].update(steps=1500, counted_steps=1200, cpu_seconds=1943)
    (out / "simul.json").write_text(json.dumps(info))
    card = write_card("tiny_wmt", root=tmp_path / "models").read_text()
    assert (" after meta 1500 steps (32 min for the last 1200 of them; the others' time was not "
            "kept) of process CPU time") in card
    with pytest.raises(ValueError, match="holds a finetune run, not meta"):
        meta_train.run_stage(recipe, "meta", ft, progress=False)
    with pytest.raises(ValueError, match="only the finetune stage"):
        meta_train.run_stage(recipe, "meta", tmp_path / "x", start=meta_dir, progress=False)
    with pytest.raises(ValueError, match="--stage"):
        meta_train.run_stage(recipe, "maml", tmp_path / "y", progress=False)


def test_a_stopped_stage_keeps_the_time_of_its_checkpointed_steps(recipe, corpus, tmp_path,
                                                                   monkeypatch):
    """Stopped after its first checkpoint (2 of 4 steps), a stage has written the CPU time of
    those 2 steps; resumed, it counts the other 2 on top, every step once."""
    from simul.models.training import meta

    plain = meta.plain_step
    calls = []

    def stop_at_the_third(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return plain(*args, **kwargs)

    monkeypatch.setattr(meta, "plain_step", stop_at_the_third)
    with pytest.raises(KeyboardInterrupt):
        meta_train.run_stage(recipe, "finetune", tmp_path / "woMT", corpus_root=corpus,
                             progress=False)
    first = json.loads((tmp_path / "woMT" / "cost.json").read_text())
    assert (first["steps"], first["counted_steps"]) == (2, 2) and first["cpu_seconds"] > 0
    monkeypatch.setattr(meta, "plain_step", plain)
    meta_train.run_stage(recipe, "finetune", tmp_path / "woMT", corpus_root=corpus,
                         progress=False)
    done = json.loads((tmp_path / "woMT" / "cost.json").read_text())
    assert (done["steps"], done["counted_steps"]) == (4, 4)
    assert done["cpu_seconds"] > first["cpu_seconds"]


def test_init_copies_the_shipped_modules_and_refuses_a_misfit(recipe, corpus, tmp_path):
    """``meta.init``: the recipe's model at full size gets conformer_bpe_en-es's encoder and
    decoder blocks, tensor for tensor as ESPnet stored them, and nothing else (the decoder's
    embedding and output layer keep the seed's: another vocabulary); ``meta.freeze`` leaves
    the encoder out of training; the tiny model and an unknown module are refused."""
    import torch

    from simul.models.training import train

    full = meta_train.load_recipe("conformer_bpe_en-de_meta")
    tiny = yaml.safe_load(open(recipe))
    s = meta_train.setup(tiny, tmp_path, corpus)
    s.espnet.update({k: full["espnet"][k] for k in ("encoder_conf", "decoder_conf")})
    units = {"token_list": s.token_list, "src_token_list": s.token_list}
    init = train.init_params(full["meta"]["init"], "conformer_bpe_en-de_meta", units, tmp_path)
    model, conf = meta_train.build(s, 0, init, ["encoder"])
    seeded, _ = meta_train.build(s, 0)
    # frozen: the encoder; the decoder and the text path learn; the config records both
    assert {n.split(".")[1] for n, p in model.named_parameters() if not p.requires_grad} == {
        "encoder"}
    assert all(p.requires_grad for n, p in model.named_parameters()
               if not n.startswith("st.encoder."))
    assert (conf["init_param"], conf["freeze_param"]) == (init, ["encoder"])
    shipped = torch.load(init[0].split(":")[0], map_location="cpu")
    copied = {k: v for k, v in shipped.items()
              if k.startswith(("encoder.", "decoder.decoders.", "decoder.after_norm."))}
    mine, before = model.st.state_dict(), seeded.st.state_dict()
    assert sum(k.startswith("encoder.") for k in copied) == 250
    assert sum(k.startswith("decoder.") for k in copied) == 3 * 26 + 2
    for k, v in copied.items():
        assert torch.equal(mine[k], v.to(mine[k].dtype)), k
        assert not torch.equal(before[k], mine[k]), k
    assert "decoder.embed.0.weight" in mine and "decoder.output_layer.weight" in mine
    assert all(torch.equal(before[k], v) for k, v in mine.items() if k not in copied)
    s.espnet.update({k: tiny["espnet"][k] for k in ("encoder_conf", "decoder_conf")})
    with pytest.raises(ValueError, match="meta.init: .*encoder:encoder does not fit"):
        meta_train.build(s, 0, init)
    with pytest.raises(ValueError, match="meta.freeze: 'encoders' names no parameter"):
        meta_train.build(s, 0, [], ["encoders"])


def test_meta_augment_hears_training_speech_as_espnet_runs_do_and_the_card_says_so(
        recipe, corpus, tmp_path, monkeypatch):
    """``meta.augment``: rooms and noise prepared under the run (babble from its training
    talks), training reads heard through them, dev clean; the packed model records it, so
    the round counts it retrained; a wrong key is refused before any work."""
    from simul.models import registry
    from simul.zoo.pack import pack

    monkeypatch.setenv("SIMUL_CACHE", str(tmp_path / "cache"))
    r = yaml.safe_load(open(recipe))
    r["meta"]["augment"] = {"rooms": 1, "rt60": [0.2, 0.3], "babble": 0, "coloured": 1,
                            "noise_seconds": 1}  # babble needs 5 talks: the tiny corpus has 3
    path = tmp_path / "tiny_meta_aug.yaml"
    path.write_text(yaml.safe_dump(r))
    s = meta_train.setup(r, tmp_path / "s", corpus, "tiny_meta_aug")
    assert s.hear is not None and s.augmentation["speed_perturb"] is None
    assert (s.augmentation["rooms"], s.augmentation["coloured"]) == (1, 1)
    talks = (tmp_path / "s" / "shared" / "augment" / "wav.scp").read_text().splitlines()
    speech = {e.wav for t in s.tasks.values() if t.modality == "speech" for e in t.examples}
    assert {line.split(maxsplit=1)[1] for line in talks} == speech
    ft = meta_train.run_stage(str(path), "finetune", tmp_path / "woMT", corpus_root=corpus,
                              progress=False)
    out = pack(ft / "exp", "tiny_aug", pair="en-de", n_average=2, out_root=tmp_path / "models",
               progress=False)
    info = json.loads((out / "simul.json").read_text())
    assert info["augmentation"] == s.augmentation
    assert registry.retrained(out)
    r["meta"]["augment"] = {"room": 1}
    with pytest.raises(ValueError, match="meta.augment.room: unknown key"):
        meta_train.setup(r, tmp_path / "bad", corpus, "tiny_meta_aug")
