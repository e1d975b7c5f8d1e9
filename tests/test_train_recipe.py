"""Recipe variants (``simul train --set``) and speed-perturbed training data."""

import math
from types import SimpleNamespace

import numpy as np
import pytest
import soundfile as sf

from simul.models.training import prepare, train


def _augment_options(aug, out_dir, wav_scp, **_):
    """What :func:`simul.models.training.augment.prepare` returns, without simulating anything: the
    ESPnet options a recipe with ``simul.augment`` trains with."""
    return {"rir_scp": str(out_dir / "rir.scp"), "rir_apply_prob": aug["rir_prob"],
            "noise_scp": str(out_dir / "noise.scp"), "noise_apply_prob": aug["noise_prob"],
            "noise_db_range": "{:g}_{:g}".format(*aug["snr_db"])}

def test_overrides_change_one_run_and_leave_the_recipe_alone():
    recipe = train.load_recipe("blstm_char_en-es")
    out = train.apply_overrides(recipe, ["espnet.specaug=null",
                                         "simul.speed_perturb=[0.9, 1.0, 1.1]",
                                         "espnet.optim_conf.lr=0.002"])
    assert out["espnet"]["specaug"] is None
    assert out["simul"]["speed_perturb"] == [0.9, 1.0, 1.1]
    assert out["espnet"]["optim_conf"]["lr"] == 0.002
    assert recipe["espnet"]["specaug"] == "specaug"  # the loaded recipe is not modified
    assert recipe["espnet"]["optim_conf"]["lr"] == train.load_recipe(
        "blstm_char_en-es")["espnet"]["optim_conf"]["lr"]


@pytest.mark.parametrize("bad", ["specaug=null", "model.x=1", "espnet.specaug"])
def test_overrides_name_the_section(bad):
    with pytest.raises(ValueError, match="simul.KEY=VALUE or espnet.KEY=VALUE"):
        train.apply_overrides(train.load_recipe("blstm_char_en-es"), [bad])


def test_overrides_refuse_a_path_through_a_value():
    with pytest.raises(ValueError, match="'specaug' is not a mapping"):
        train.apply_overrides(train.load_recipe("blstm_char_en-es"), ["espnet.specaug.x=1"])


def _peak_hz(audio, rate=16000):
    spectrum = np.abs(np.fft.rfft(audio * np.hanning(audio.size)))
    return np.fft.rfftfreq(audio.size, 1 / rate)[spectrum.argmax()]


@pytest.mark.parametrize("factor", [0.9, 1.1])
def test_speed_perturbation_scales_length_and_pitch_like_sox_speed(factor):
    # sox `speed 1.1` on 1 s of a 440 Hz tone: 1/1.1 s of a 484 Hz tone
    tone = np.sin(2 * np.pi * 440 * np.arange(16000) / 16000).astype(np.float32)
    out = prepare.perturb_speed(tone, factor)
    assert out.size == math.ceil(16000 / factor)  # a partial last sample is kept
    assert _peak_hz(out) == pytest.approx(440 * factor, abs=2)
    np.testing.assert_array_equal(prepare.perturb_speed(tone, 1.0), tone)


def test_export_writes_one_copy_per_speed_with_kaldi_ids(tmp_path, monkeypatch):
    segs = [SimpleNamespace(index=i, audio=np.full(1600 * (i + 1), 0.1, np.float32),
                            target=f"t{i}", source=f"s{i}", speaker_id=f"v{i}")
            for i in range(2)]
    monkeypatch.setattr(prepare, "load", lambda root, pair, split, **k: iter(segs))
    n = prepare.export_split("unused", "en-es", "train", tmp_path / "train_sp",
                             speed_factors=(0.9, 1.0, 1.1), progress=False)
    assert n == 6
    scp = [line.split() for line in (tmp_path / "train_sp" / "wav.scp").read_text().splitlines()]
    assert [uid for uid, _ in scp] == ["sp0.9-train_000000", "sp0.9-train_000001",
                                       "sp1.1-train_000000", "sp1.1-train_000001",
                                       "train_000000", "train_000001"]
    assert sf.info(dict(scp)["sp0.9-train_000001"]).frames == math.ceil(3200 / 0.9)
    assert "sp1.1-train_000000 sp1.1-v0\n" in (tmp_path / "train_sp" / "utt2spk").read_text()
    text = (tmp_path / "train_sp" / "text").read_text().splitlines()
    assert text.count("sp0.9-train_000001 t1") == 1 and len(text) == 6


def test_a_run_directory_keeps_its_recipe(tmp_path, monkeypatch):
    # a second start with other --set options must not mix two recipes in one run
    calls = []
    monkeypatch.setattr(prepare, "export_split", lambda *a, **k: calls.append(k) or 0)
    monkeypatch.setattr(train.augment, "prepare", _augment_options)
    monkeypatch.setattr(train, "_tokens", lambda *a, **k: (_ for _ in ()).throw(
        RuntimeError("stop after export")))
    with pytest.raises(RuntimeError, match="stop after export"):
        train.train("blstm_char_en-es", workdir=tmp_path, progress=False,
                    overrides=["simul.speed_perturb=[0.95,1.0,1.05]"])
    assert calls[0]["speed_factors"] == (0.95, 1.0, 1.05) and calls[1]["speed_factors"] == (1.0,)
    assert "0.95" in (tmp_path / "recipe.yaml").read_text()
    with pytest.raises(ValueError, match="started with another recipe"):
        train.train("blstm_char_en-es", workdir=tmp_path, progress=False)


def test_simultaneous_training_gets_the_runs_units(tmp_path, monkeypatch):
    # decoder: transformer_waitk reads the run's token list to find target words
    import yaml

    tokens = tmp_path / "tokens.txt"
    tokens.write_text("<blank>\n<unk>\n▁a\n<sos/eos>\n")
    monkeypatch.setattr(prepare, "export_split", lambda *a, **k: 0)
    monkeypatch.setattr(train.augment, "prepare", _augment_options)
    monkeypatch.setattr(train, "_tokens", lambda *a, **k: ("bpe", tokens, None))
    monkeypatch.setattr(train, "init_params", lambda *a, **k: [])
    children = []
    monkeypatch.setattr(train, "_espnet", lambda module, args, log: children.append(args))
    train.train("conformer_bpe_en-es", workdir=tmp_path / "run", progress=False,
                overrides=["espnet.decoder=transformer_waitk", "espnet.decoder_conf.k_train=3"])
    conf = yaml.safe_load((tmp_path / "run" / "train_config.yaml").read_text())
    assert conf["decoder"] == "transformer_waitk"
    assert conf["decoder_conf"]["k_train"] == 3
    assert conf["decoder_conf"]["units_file"] == str(tokens)
    assert conf["decoder_conf"]["unit_type"] == "bpe"
    assert "source" not in conf["decoder_conf"]  # audio: words of fixed duration
    assert len(children) == 2  # statistics, then training
    # a text MT: wait-k over source words, found in the run's source units
    train.train("mt_transformer_bpe_en-de_waitk", workdir=tmp_path / "mt", progress=False)
    conf = yaml.safe_load((tmp_path / "mt" / "train_config.yaml").read_text())
    assert conf["decoder_conf"]["source"] == "text"
    assert conf["decoder_conf"]["src_units_file"] == str(tokens)
    assert conf["decoder_conf"]["src_unit_type"] == "bpe"
    # adaptive detection on speech: the source CTC's words, in the run's source units
    train.train("conformer_bpe_en-es", workdir=tmp_path / "adaptive", progress=False,
                overrides=["espnet.decoder=transformer_waitk", "espnet.decoder_conf.k_train=3",
                           "espnet.decoder_conf.detection=adaptive"])
    conf = yaml.safe_load((tmp_path / "adaptive" / "train_config.yaml").read_text())
    assert conf["decoder_conf"]["detection"] == "adaptive"
    assert conf["decoder_conf"]["src_units_file"] == str(tokens)
    assert "source" not in conf["decoder_conf"]


@pytest.mark.parametrize("overrides, message", [
    (["espnet.decoder_conf.detection=ctc"], "detection: 'fixed' or 'adaptive', got 'ctc'"),
    (["espnet.model_conf.asr_weight=0.0"], "set espnet.model_conf.asr_weight > 0"),
])
def test_adaptive_detection_is_refused_before_any_export(tmp_path, monkeypatch, overrides,
                                                         message):
    exported = []
    monkeypatch.setattr(prepare, "export_split", lambda *a, **k: exported.append(a))
    with pytest.raises(ValueError, match=message):
        train.train("conformer_bpe_en-es", workdir=tmp_path / "run", progress=False,
                    overrides=["espnet.decoder=transformer_waitk",
                               "espnet.decoder_conf.detection=adaptive", *overrides])
    assert exported == [] and list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize("name", train.recipes())
def test_every_recipe_builds_its_espnet_model(name, tmp_path, monkeypatch):
    # the config simul train writes for each recipe is one ESPnet's task parses and builds
    # (statistics and units stubbed: a 10-unit list, no global MVN file)
    import yaml

    from simul.models.espnet_env import import_espnet
    from simul.models.extensions import (
        mma_decoder,
        rnn_padded,
        unidirectional_encoder,
        waitk_decoder,
    )

    tokens = tmp_path / "tokens.txt"
    tokens.write_text("\n".join(["<blank>", "<unk>", "▁a", "b", "<space>", "c", "d", "e", "f",
                                 "<sos/eos>"]) + "\n")
    monkeypatch.setattr(prepare, "export_split", lambda *a, **k: 0)
    monkeypatch.setattr(train.augment, "prepare", _augment_options)
    monkeypatch.setattr(prepare, "export_boundaries", lambda *a, **k: None)
    monkeypatch.setattr(train, "_tokens", lambda *a, **k: ("bpe", tokens, None))
    monkeypatch.setattr(train, "init_params", lambda *a, **k: [])
    children = []
    monkeypatch.setattr(train, "_espnet", lambda module, args, log: children.append(module))
    train.train(name, workdir=tmp_path / "run", progress=False)
    task = train.load_recipe(name)["simul"].get("task", "st")
    assert children == [train.TASKS[task][0]] * 2
    conf = yaml.safe_load((tmp_path / "run" / "train_config.yaml").read_text())
    conf.pop("normalize", None), conf.pop("normalize_conf", None)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(conf))
    rnn_padded.register()
    waitk_decoder.register()
    mma_decoder.register()
    unidirectional_encoder.register()
    cls = {"st": "espnet2.tasks.st:STTask", "asr": "espnet2.tasks.asr:ASRTask",
           "mt": "espnet2.tasks.mt:MTTask"}[task]
    module, attr = cls.split(":")
    espnet_task = getattr(import_espnet(module), attr)
    args = espnet_task.get_parser().parse_args(["--config", str(tmp_path / "config.yaml")])
    model = espnet_task.build_model(args)
    assert sum(p.numel() for p in model.parameters()) > 100_000


def test_units_from_a_model_not_yet_shipped_are_refused_in_one_line(tmp_path, monkeypatch):
    from simul.models import registry

    monkeypatch.setattr(registry, "MODELS_DIR", tmp_path / "models")
    with pytest.raises(ValueError, match=r"recipe new: units from later: .*later/config\.yaml "
                                         r"missing — train and pack it first"):
        train._tokens({"from": {"model": "later"}}, tmp_path / "text", tmp_path / "tok",
                      name="new")


def test_oracle_pre_decision_training_reads_the_boundaries(tmp_path, monkeypatch):
    # an MMA decoder on oracle word blocks gets the exported word ends as data block_ms, in
    # the statistics and the training runs, and ESPnet is told to accept the extra data
    import yaml

    tokens = tmp_path / "tokens.txt"
    tokens.write_text("<blank>\n<unk>\n▁a\n<sos/eos>\n")
    exported = []
    monkeypatch.setattr(prepare, "export_split", lambda *a, **k: 0)
    monkeypatch.setattr(train.augment, "prepare", _augment_options)
    monkeypatch.setattr(prepare, "export_boundaries",
                        lambda root, pair, split, out, kind, **k: exported.append((split, kind)))
    monkeypatch.setattr(train, "_tokens", lambda *a, **k: ("bpe", tokens, None))
    monkeypatch.setattr(train, "init_params", lambda *a, **k: [])
    children = []
    monkeypatch.setattr(train, "_espnet", lambda module, args, log: children.append(args))
    train.train("conformer_bpe_en-de_mma_word", workdir=tmp_path / "run", progress=False)
    assert exported == [("train", "word"), ("dev", "word")]
    conf = yaml.safe_load((tmp_path / "run" / "train_config.yaml").read_text())
    assert conf["allow_variable_data_keys"] is True
    for args in children:  # statistics, then training
        data = [a for a in args if a.endswith(",text_float")]
        # the recipe trains on augmented speed copies (train_sp_aug), as its parent
        assert [d.split("/")[-2:] for d in data] == [["train_sp_aug",
                                                      "word_ends,block_ms,text_float"],
                                                     ["dev", "word_ends,block_ms,text_float"]]


def test_normalize_from_without_statistics_fails_before_any_export(tmp_path, monkeypatch):
    from simul.models import registry

    (tmp_path / "models" / "parent").mkdir(parents=True)  # a model with no feats_stats.npz
    monkeypatch.setattr(registry, "MODELS_DIR", tmp_path / "models")
    monkeypatch.setattr(prepare, "export_split", lambda *a, **k: pytest.fail("exported"))
    recipe = train.load_recipe("conformer_bpe_en-es")
    recipe["simul"]["normalize_from"] = {"model": "parent"}
    monkeypatch.setattr(train, "load_recipe", lambda name: recipe)
    with pytest.raises(ValueError, match=r"normalize_from: .*parent/feats_stats\.npz is missing"):
        train.train("conformer_bpe_en-es", workdir=tmp_path / "run", progress=False)


def test_the_p22_grid_recipes_train_every_module_of_the_offline_transformer():
    # P22 Figs. 1–2: k_train 3, 5, 7, 9, 11, fixed and adaptive detection, both pairs; the
    # whole model learns, from the shipped offline Transformer (no revision pinned: after the
    # retraining round, the new one)
    grid = {(pair, k, detection): f"transformer_bpe_{pair}_waitk{k}_{detection}"
            for pair in ("en-de", "en-es") for k in (3, 5, 7, 9, 11)
            for detection in ("fixed", "adaptive")}
    names = [n for n in train.recipes() if n.startswith("transformer_bpe_en-")
             and "_waitk" in n]
    assert sorted(names) == sorted(grid.values())
    shapes = set()
    for (pair, k, detection), name in grid.items():
        recipe = train.load_recipe(name)
        parent = f"transformer_bpe_{pair}"
        assert recipe["simul"]["pair"] == pair
        assert recipe["simul"]["init"] == [{"model": parent,
                                            "modules": ["encoder", "decoder", "ctc"]}]
        assert recipe["simul"]["tokens"] == recipe["simul"]["src_tokens"] == {
            "from": {"model": parent}}
        espnet = recipe["espnet"]
        assert "freeze_param" not in espnet and espnet["encoder"] == "transformer"
        assert espnet["model_conf"]["asr_weight"] > 0  # the source CTC learns too
        dec = espnet["decoder_conf"]
        assert espnet["decoder"] == "transformer_waitk"
        assert (dec["k_train"], dec["detection"]) == (k, detection)
        assert ("word_ms" in dec) == (detection == "fixed")
        # apart from pair, k and detection, the 20 recipes are one
        rest = {key: value for key, value in espnet.items() if key != "decoder_conf"}
        shapes.add(repr(sorted(rest.items())))
    assert len(shapes) == 1


@pytest.mark.parametrize("blocks", ["", "_word"])
def test_the_mma_recipes_with_the_encoder_chain_lambda_zero_then_lambda(blocks):
    first, second = (train.load_recipe(n) for n in (f"conformer_bpe_en-de_mma_enc{blocks}",
                                                    f"conformer_bpe_en-de_mma_enc{blocks}_lat"))
    assert first["simul"]["init"][0]["model"] == "conformer_bpe_en-de"
    assert second["simul"]["init"][0]["model"] == f"conformer_bpe_en-de_mma_enc{blocks}"
    for recipe in (first, second):
        assert "freeze_param" not in recipe["espnet"]
        assert recipe["espnet"]["decoder"] == "transformer_mma"
        assert recipe["espnet"]["decoder_conf"].get("pre_decision", "fixed") == \
            ("word" if blocks else "fixed")
    assert first["espnet"]["decoder_conf"]["latency_weight"] == 0.0
    assert second["espnet"]["decoder_conf"]["latency_weight"] > 0
    # the two block kinds differ in nothing else (the comments aside)
    other = train.load_recipe(f"conformer_bpe_en-de_mma_enc{'_word' if not blocks else ''}_lat")
    other["espnet"]["decoder_conf"].pop("pre_decision", None)
    second["espnet"]["decoder_conf"].pop("pre_decision", None)
    other["simul"].pop("init"), second["simul"].pop("init")
    assert other == second
