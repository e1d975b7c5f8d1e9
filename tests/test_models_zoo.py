"""Packing a trained run, averaging checkpoints, offline decoding into records."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import torch
import yaml

from simul import records
from simul.commands.cli import main
from simul.models import registry
from simul.zoo import curves, evaluation, pack
from simul.zoo.card import summary_line, write_card
from tests.conftest import _conf, make_tiny_model


@pytest.fixture(scope="module")
def fake_run(tmp_path_factory):
    """An ESPnet-like experiment dir: config.yaml, three epoch snapshots, a train.log."""
    exp = make_tiny_model(tmp_path_factory.mktemp("run") / "exp", "transformer")
    state = torch.load(exp / "model.pth")
    for epoch, shift in ((1, 0.0), (2, 1.0), (3, 2.0)):
        torch.save({k: v + shift if v.is_floating_point() else v for k, v in state.items()},
                   exp / f"{epoch}epoch.pth")
    (exp / "train.log").write_text(
        "[vm] x (trainer:1) INFO: 1epoch results: [train] loss=10.5, acc=0.2, "
        "train_time=6.3, time=54 minutes and 3.24 seconds, total_count=513, "
        "[valid] loss=9.0, acc=0.25, bleu=3.5\n"
        "[vm] x (trainer:1) INFO: 2epoch results: [train] loss=5.0, acc=0.5, "
        "time=1 hour, 2 minutes and 1.5 seconds, total_count=513, "
        "[valid] loss=4.5, acc=0.55, bleu=20.0, time=36.76 seconds, total_count=22\n"
    )
    return exp, state


def test_average_of_the_last_snapshots(fake_run, tmp_path):
    exp, state = fake_run
    out = pack.pack(exp, "tiny", pair="en-es", n_average=2, out_root=tmp_path)
    packed = torch.load(out / "model.pth")
    key = next(k for k, v in state.items() if v.is_floating_point())
    assert packed[key].dtype == torch.float16  # stored small, loaded into float32 modules
    torch.testing.assert_close(packed[key].float(), state[key] + 1.5,  # mean of +1 and +2
                               atol=2e-3, rtol=1e-3)  # float16: 11 significant bits
    info = json.loads((out / "simul.json").read_text())
    assert info["averaged"] == ["2epoch.pth", "3epoch.pth"] and info["pair"] == "en-es"
    curve = (out / "learning_curve.csv").read_text().splitlines()
    assert curve[0].split(",")[0] == "epoch" and len(curve) == 3
    assert "valid_bleu" in curve[0] and curve[2].split(",")[0] == "2"


def test_pack_keeps_training_starts_out_of_the_config(fake_run, tmp_path):
    # init_param holds absolute paths of the training machine: the packed config drops it
    # (ESPnet reads it only when training) and simul.json says what the run started from.
    import shutil

    import yaml

    exp = tmp_path / "exp"
    shutil.copytree(fake_run[0], exp)
    conf = yaml.safe_load((exp / "config.yaml").read_text())
    conf["init_param"] = ["/somewhere/data/models/base/model.pth:encoder:encoder",
                          "/somewhere/data/models/base/model.pth:decoder.decoder:decoder.decoder"]
    conf["freeze_param"] = ["encoder"]
    (exp / "config.yaml").write_text(yaml.safe_dump(conf))
    out = pack.pack(exp, "tiny", pair="en-es", n_average=1, out_root=tmp_path / "models")
    assert "init_param" not in yaml.safe_load((out / "config.yaml").read_text())
    info = json.loads((out / "simul.json").read_text())
    assert info["initialized_from"] == ["base/model.pth:encoder:encoder",
                                        "base/model.pth:decoder.decoder:decoder.decoder"]
    assert info["frozen"] == ["encoder"]
    card = write_card("tiny", root=tmp_path / "models").read_text()
    assert "base/model.pth:decoder.decoder:decoder.decoder" in card
    assert "- frozen while training: encoder" in card


def test_a_run_that_continues_a_packed_model_packs_over_it_with_both_runs(fake_run, tmp_path):
    # a run started from every module of the model packed under the same name continues it:
    # the earlier epochs come first in the learning curve (and the cost), both commands on
    # the card, and the old measurements leave with the old weights
    root = tmp_path / "round"
    first = pack.pack(fake_run[0], "tiny", pair="en-es", n_average=2, out_root=root,
                      command="simul train tiny")
    (first / "metrics.json").write_text("{}")
    (first / "card.md").write_text("BLEU 99.9")
    exp = tmp_path / "more" / "exp"
    shutil.copytree(fake_run[0], exp)
    conf = yaml.safe_load((exp / "config.yaml").read_text())
    conf["init_param"] = [f"{first.resolve()}/model.pth:{m}:{m}" for m in ("encoder", "decoder")]
    (exp / "config.yaml").write_text(yaml.safe_dump(conf))
    out = pack.pack(exp, "tiny", pair="en-es", n_average=3, out_root=root,
                    command="simul train tiny --workdir RUN2 --max-epoch 3")
    assert out == first and not (out / "metrics.json").exists() and not (out / "card.md").exists()
    rows = (out / "learning_curve.csv").read_text().splitlines()
    header = rows[0].split(",")
    epochs = [r.split(",")[0] for r in rows[1:]]
    assert epochs == ["1", "2", "3", "4"]  # 2 logged epochs before, 2 after
    seconds = header.index("train_seconds")
    # fake train.log: 54 min 3.24 s, then 1 h 2 min 1.5 s, in each run
    assert [float(r.split(",")[seconds]) for r in rows[1:]] == [3243.24, 3721.5] * 2
    info = json.loads((out / "simul.json").read_text())
    assert info["continues"] == {"epochs": 2, "averaged": ["2epoch.pth", "3epoch.pth"],
                                 "command": "simul train tiny"}
    assert info["command"].splitlines() == [
        "simul train tiny", "simul models pack RUN/exp tiny --pair en-es --average 2",
        "simul train tiny --workdir RUN2 --max-epoch 3"]
    card = write_card("tiny", root=root).read_text()
    assert "- continues the model packed before under this name (2 epochs, averaged " \
           "2epoch.pth, 3epoch.pth), every module" in card
    assert "- training cost: 4 epochs, 3 h 53 min" in card  # 2 × (3243.24 + 3721.5 + 36.76) s


def test_a_run_from_another_model_or_with_frozen_modules_continues_nothing(tmp_path):
    model = tmp_path / "round" / "tiny"
    model.mkdir(parents=True)
    own = [f"{model}/model.pth:encoder:encoder"]
    assert pack.continued({"init_param": own}, "tiny", tmp_path / "round") == model
    assert pack.continued({"init_param": own, "freeze_param": ["encoder"]}, "tiny",
                          tmp_path / "round") is None
    assert pack.continued({"init_param": own}, "other", tmp_path / "round") is None
    assert pack.continued({"init_param": [*own, "/x/base/model.pth:decoder:decoder"]}, "tiny",
                          tmp_path / "round") is None
    assert pack.continued({}, "tiny", tmp_path / "round") is None


def test_a_model_trained_in_simultaneous_mode_packs_as_espnets_decoder(fake_run, tmp_path):
    # the transformer_waitk training decoder has ESPnet's transformer decoder's parameters:
    # the packed config names that one and simul.json keeps the training schedule
    import shutil

    import yaml

    from simul.models.adapters.espnet_st import ESPnetST

    exp = tmp_path / "exp"
    shutil.copytree(fake_run[0], exp)
    conf = yaml.safe_load((exp / "config.yaml").read_text())
    conf["decoder"] = "transformer_waitk"
    conf["decoder_conf"].update(k_train=[3, 7], word_ms=280.0, frame_ms=40.0,
                                units_file="/somewhere/tokens.txt", unit_type="char")
    (exp / "config.yaml").write_text(yaml.safe_dump(conf))
    out = pack.pack(exp, "tiny_waitk", pair="en-es", n_average=1, out_root=tmp_path / "models")
    packed = yaml.safe_load((out / "config.yaml").read_text())
    assert packed["decoder"] == "transformer"
    assert packed["decoder_conf"] == {"attention_heads": 2, "linear_units": 64, "num_blocks": 2}
    info = json.loads((out / "simul.json").read_text())
    assert info["simultaneous_training"] == {"k_train": [3, 7], "word_ms": 280.0,
                                             "frame_ms": 40.0, "detection": "fixed"}
    assert ESPnetST.from_dir(out).encode(torch.zeros(8000).numpy()).frames > 0
    card = write_card("tiny_waitk", root=tmp_path / "models").read_text()
    assert "multi-path, k_train drawn per batch from [3, 7], a word every 280 ms" in card

    # H20's wait-k with a stride: a unit per stride, said so in simul.json and the card
    conf["decoder_conf"].update(k_train=4, word_ms=350.0, step="unit")
    (exp / "config.yaml").write_text(yaml.safe_dump(conf))
    out = pack.pack(exp, "tiny_stride", pair="en-es", n_average=1,
                    out_root=tmp_path / "models")
    assert "step" not in yaml.safe_load((out / "config.yaml").read_text())["decoder_conf"]
    info = json.loads((out / "simul.json").read_text())
    assert info["simultaneous_training"]["step"] == "unit"
    card = write_card("tiny_stride", root=tmp_path / "models").read_text()
    assert "k_train = 4, one target unit per stride of 350 ms" in card

    # P22's adaptive detection: the source CTC's words, no word duration to keep
    conf["decoder_conf"].pop("step")
    conf["decoder_conf"].update(k_train=5, detection="adaptive",
                                src_units_file="/somewhere/src_tokens.txt", src_unit_type="bpe")
    (exp / "config.yaml").write_text(yaml.safe_dump(conf))
    out = pack.pack(exp, "tiny_adaptive", pair="en-es", n_average=1,
                    out_root=tmp_path / "models")
    packed = yaml.safe_load((out / "config.yaml").read_text())
    assert packed["decoder"] == "transformer"
    assert packed["decoder_conf"] == {"attention_heads": 2, "linear_units": 64, "num_blocks": 2}
    info = json.loads((out / "simul.json").read_text())
    assert info["simultaneous_training"] == {"k_train": 5, "detection": "adaptive"}
    card = write_card("tiny_adaptive", root=tmp_path / "models").read_text()
    assert "k_train = 5, words by adaptive detection: the greedy transcript" in card


def test_an_mma_model_packs_with_its_decoder_and_loads_as_mma(fake_run, tmp_path):
    # transformer_mma stays in the packed config (its adapter decodes it); simul.json and the
    # card keep the pre-decision and the latency weights it was trained with
    import shutil

    import yaml

    from simul.models.adapters.mma_st import ESPnetMMA
    from simul.models.espnet_env import import_espnet
    from simul.models.extensions import mma_decoder
    from simul.models.loader import load_dir

    exp = tmp_path / "exp"
    shutil.copytree(fake_run[0], exp)
    conf = yaml.safe_load((exp / "config.yaml").read_text())
    conf["decoder"] = "transformer_mma"
    conf["decoder_conf"].update(step_ms=200.0, frame_ms=40.0, latency_weight=0.32,
                                variance_weight=0.32, noise_std=4.0)
    (exp / "config.yaml").write_text(yaml.safe_dump(conf))
    mma_decoder.register()
    st = import_espnet("espnet2.tasks.st").STTask
    spec = {**_conf("transformer"), "decoder": "transformer_mma",
            "decoder_conf": conf["decoder_conf"]}
    (tmp_path / "mma.yaml").write_text(yaml.safe_dump(spec))
    args = st.get_parser().parse_args(["--config", str(tmp_path / "mma.yaml")])
    state = st.build_model(args).state_dict()  # the fake run's snapshots lack the mono parts
    for snapshot in exp.glob("*epoch.pth"):
        torch.save({**state, **torch.load(snapshot)}, snapshot)
    out = pack.pack(exp, "tiny_mma", pair="en-de", n_average=1, out_root=tmp_path / "models")
    assert yaml.safe_load((out / "config.yaml").read_text())["decoder"] == "transformer_mma"
    info = json.loads((out / "simul.json").read_text())
    assert info["monotonic_attention"] == {"step_ms": 200.0, "frame_ms": 40.0,
                                           "latency_weight": 0.32, "variance_weight": 0.32,
                                           "noise_std": 4.0}
    assert isinstance(load_dir(out), ESPnetMMA)
    card = write_card("tiny_mma", root=tmp_path / "models").read_text()
    assert "fixed pre-decision blocks of 200 ms" in card and "latency weight λ = 0.32" in card
    # trained on oracle word ends, by a recipe of another name (one of a family per λ): the
    # card says so and opens with that recipe's description
    packed = yaml.safe_load((out / "config.yaml").read_text())
    packed["decoder_conf"]["pre_decision"] = "word"
    (out / "config.yaml").write_text(yaml.safe_dump(packed))
    info["command"] = "simul train conformer_bpe_en-de_mma_word_lat --set x=1"
    (out / "simul.json").write_text(json.dumps(info))
    card = write_card("tiny_mma", root=tmp_path / "models").read_text()
    assert "stops over oracle word blocks, one per word read at its end" in card
    assert "M20's second stage on oracle word blocks" in card


def test_float32_when_asked(fake_run, tmp_path):
    exp, state = fake_run
    out = pack.pack(exp, "tiny", pair="en-es", n_average=1, out_root=tmp_path, float16=False)
    packed = torch.load(out / "model.pth")
    key = next(k for k, v in state.items() if v.is_floating_point())
    assert packed[key].dtype == torch.float32
    torch.testing.assert_close(packed[key], state[key] + 2.0)  # the last snapshot alone


def test_learning_curve_parsing(fake_run):
    rows = curves.learning_curve(fake_run[0])
    assert rows[0]["train_seconds"] == pytest.approx(54 * 60 + 3.24)
    assert rows[1] == {"epoch": 2, "train_loss": 5.0, "train_acc": 0.5,
                       "train_seconds": 3600 + 120 + 1.5, "valid_loss": 4.5,
                       "valid_acc": 0.55, "valid_bleu": 20.0, "valid_seconds": 36.76}


@pytest.mark.corpus
def test_decode_cli_writes_consistent_records(fake_run, tmp_path):
    out = pack.pack(fake_run[0], "tiny", pair="en-es", out_root=tmp_path)
    path = tmp_path / "recs.jsonl"
    assert main(["decode", "--model", str(out), "--max-utterances", "3", "--split", "dev",
                 "--out", str(path)]) == 0
    recs = list(records.read(path))
    assert [r.index for r in recs] == [0, 1, 2]
    for r in recs:
        assert r.prediction_length == len(r.delays) == len(r.elapsed) == len(r.prediction.split())
        assert all(d == r.source_length for d in r.delays)
        assert all(e > d for e, d in zip(r.elapsed, r.delays, strict=True))
        assert r.reference and r.policy == "offline"


def test_card_names_the_command_and_the_measured_bleu(fake_run, tmp_path):
    out = pack.pack(fake_run[0], "tiny", pair="en-es", out_root=tmp_path,
                   command="simul train tiny")
    (out / "metrics.json").write_text(json.dumps({
        "tst-COMMON/beam1": {"bleu": 41.234, "chrf": 60.0, "n": 500, "signature": "sig",
                             "ms_per_utterance": 80.0},
        "tst-COMMON/beam5": {"bleu": 43.0, "chrf": 61.0, "n": 500, "signature": "sig",
                             "ms_per_utterance": 300.0}}))
    card = write_card("tiny", root=tmp_path).read_text()
    assert "simul train tiny" in card
    assert "| tst-COMMON | greedy | 41.23 | 60.00 | – | 80 |" in card  # no length recorded
    assert "| tst-COMMON | beam 5 | 43.00 |" in card


def test_card_and_listing_give_quality_per_synthesizer(fake_run, tmp_path, monkeypatch):
    out = pack.pack(fake_run[0], "tiny", pair="en-es", out_root=tmp_path)
    by_engine = {"espeak-ng": {"bleu": 45.0, "chrf": 66.0, "n": 340},
                 "festival": {"bleu": 30.5, "chrf": 55.0, "n": 160}}
    (out / "metrics.json").write_text(json.dumps({
        "tst-COMMON/beam1": {"bleu": 40.0, "chrf": 62.0, "n": 500, "signature": "sig",
                             "ms_per_utterance": 80.0, "length_ratio": 0.97,
                             "by_engine": by_engine,
                             "sentence_ends": {"n": 250, "same_count": 0.912}}}))
    card = write_card("tiny", root=tmp_path).read_text()
    assert "| split | decoding | BLEU | chrF | espeak-ng | festival | length | ms/utt |" in card
    assert "| tst-COMMON | greedy | 40.00 | 62.00 | 45.00 | 30.50 | 0.97 | 80 |" in card
    assert "tst-COMMON greedy 91.2 % of 250" in card
    monkeypatch.setattr(registry, "MODELS_DIR", tmp_path)
    line = summary_line("tiny")
    assert "tst-COMMON  greedy 40.0 (espeak-ng 45.0, festival 30.5)" in line


def test_offline_summary_by_engine_and_sentence_ends():
    refs = ["Hola. Adiós.", "Sí, claro. No. Bien.", "Una frase.", "Dos. Tres."]
    hyps = ["Hola. Adiós.", "Sí, claro no. Bien.", "Una frase.", "Dos tres cuatro"]
    engines = ["espeak-ng", "festival", "festival", "espeak-ng"]
    s = evaluation.offline_summary(hyps, refs, engines)
    # three references have ≥ 2 sentences; only the first hypothesis matches their count
    assert s["sentence_ends"] == {"n": 3, "same_count": round(1 / 3, 3)}
    # BLEU's 13a tokens split off "." and ",": 17 hypothesis tokens, 19 reference tokens
    assert s["length_ratio"] == round(17 / 19, 3)
    assert s["by_engine"]["espeak-ng"]["n"] == 2 and s["by_engine"]["festival"]["n"] == 2
    assert s["n"] == 4
    perfect = evaluation.offline_summary(refs, refs, engines)
    assert perfect["bleu"] == 100.0 and perfect["by_engine"]["festival"]["bleu"] == 100.0
    assert perfect["sentence_ends"]["same_count"] == 1.0
    with pytest.raises(ValueError, match="one of each per segment"):
        evaluation.offline_summary(hyps, refs, engines[:3])


def test_every_recipe_parses_and_its_init_names_a_known_recipe():
    from simul.models.training import train

    names = train.recipes()
    assert {"conformer_bpe_en-es", "blstm_char_en-es", "transformer_bpe_en-es"} <= set(names)
    for name in names:
        for entry in train.load_recipe(name)["simul"].get("init") or []:
            # a model starts from itself only as git held it at an earlier revision
            assert entry["model"] in names and (entry["model"] != name or "commit" in entry)


def test_init_grows_a_deeper_encoder_by_copying_blocks_as_espnet_loads_them(tmp_path,
                                                                             monkeypatch):
    # SRC:DST entries: ESPnet's own loader puts blocks 0 and 1 of a two-block encoder into
    # blocks 0, 1 and 2, 3 of a four-block one (progressive stacking); nothing else moves
    from simul.models.espnet_env import import_espnet
    from simul.models.training import train

    base = make_tiny_model(tmp_path / "base", "transformer")
    monkeypatch.setattr(registry, "MODELS_DIR", tmp_path)
    conf = yaml.safe_load((base / "config.yaml").read_text())
    assert conf["encoder_conf"]["num_blocks"] == 2
    entries = train.init_params(
        [{"model": "base", "modules": ["encoder.embed", "encoder.encoders",
                                       "encoder.encoders.0:encoder.encoders.2",
                                       "encoder.encoders.1:encoder.encoders.3",
                                       "encoder.after_norm"]}], "deep")
    assert entries[2] == f"{base / 'model.pth'}:encoder.encoders.0:encoder.encoders.2"
    raw = _conf("transformer")  # what make_tiny_model built, before ESPnet's defaults
    deeper = {**raw, "encoder_conf": {**raw["encoder_conf"], "num_blocks": 4}}
    (tmp_path / "deep.yaml").write_text(yaml.safe_dump(deeper))
    st = import_espnet("espnet2.tasks.st").STTask
    model = st.build_model(st.get_parser().parse_args(["--config", str(tmp_path / "deep.yaml")]))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    load = import_espnet("espnet2.torch_utils.load_pretrained_model").load_pretrained_model
    for entry in entries:
        load(entry, model, "cpu")
    got, start = model.state_dict(), torch.load(base / "model.pth")
    blocks = [k for k in start if k.startswith("encoder.encoders.")]
    assert blocks
    for key in blocks:
        n = int(key.split(".")[2])
        torch.testing.assert_close(got[key], start[key])
        torch.testing.assert_close(got[key.replace(f".encoders.{n}.", f".encoders.{n + 2}.")],
                                   start[key])
    torch.testing.assert_close(got["encoder.after_norm.weight"], start["encoder.after_norm.weight"])
    untouched = [k for k in got if k.startswith("decoder.")]
    assert untouched and all(torch.equal(got[k], before[k]) for k in untouched)


def test_init_copies_decoder_and_ctc_only_from_a_model_with_the_same_units(tmp_path,
                                                                            monkeypatch):
    from simul.models.training import train

    shipped = tmp_path / "base"
    shipped.mkdir()
    (shipped / "model.pth").write_bytes(b"")
    (shipped / "config.yaml").write_text(
        "token_list: ['<blank>', '<unk>', a, b, '<sos/eos>']\n"
        "src_token_list: ['<blank>', '<unk>', x, '<sos/eos>']\n")
    monkeypatch.setattr(registry, "MODELS_DIR", tmp_path)
    same = {"token_list": ["<blank>", "<unk>", "a", "b", "<sos/eos>"],
            "src_token_list": ["<blank>", "<unk>", "x", "<sos/eos>"]}
    init = [{"model": "base", "modules": ["encoder.embed", "ctc", "decoder"]}]
    assert train.init_params(init, "new", same) == [
        f"{shipped / 'model.pth'}:{m}:{m}" for m in ("encoder.embed", "ctc", "decoder")]
    # same sizes, different units: ESPnet would copy the rows; refused here
    swapped = {**same, "token_list": ["<blank>", "<unk>", "b", "a", "<sos/eos>"]}
    with pytest.raises(ValueError, match="cannot copy 'decoder' from base: its token_list"):
        train.init_params(init, "new", swapped)
    other_src = {**same, "src_token_list": ["<blank>", "<unk>", "y", "<sos/eos>"]}
    with pytest.raises(ValueError, match="cannot copy 'ctc'"):
        train.init_params(init, "new", other_src)
    # an RNN decoder's LSTM cells and attention are not indexed by units: copied across
    # unit sets; its embedding and output layer are, and so is the CTC's projection
    parts = [{"model": "base", "modules": ["decoder.decoder", "decoder.att_list"]}]
    assert len(train.init_params(parts, "new", swapped)) == 2
    for tied in ("decoder.embed", "decoder.output", "decoder.output_layer.weight"):
        with pytest.raises(ValueError, match=f"cannot copy '{tied}'"):
            train.init_params([{"model": "base", "modules": [tied]}], "new", swapped)
    with pytest.raises(ValueError, match="cannot copy 'ctc.ctc_lo'"):
        train.init_params([{"model": "base", "modules": ["ctc.ctc_lo"]}], "new", other_src)
    # the encoder alone does not depend on units
    assert len(train.init_params([{"model": "base", "modules": ["encoder"]}], "new",
                                 other_src)) == 1
    with pytest.raises(ValueError, match="train and pack missing first"):
        train.init_params([{"model": "missing", "modules": ["encoder"]}], "new", same)


def test_init_copies_an_asr_models_ctc_into_a_translation_models_source_ctc(tmp_path,
                                                                            monkeypatch):
    # an ASR model (no src_token_list) indexes its CTC by its token list: the English units
    # an ST model's source CTC has (ESPnet's MuST-C recipes start an ST encoder from ASR)
    from simul.models.training import train

    asr = tmp_path / "asr"
    asr.mkdir()
    (asr / "model.pth").write_bytes(b"")
    (asr / "config.yaml").write_text("token_list: ['<blank>', '<unk>', x, y, '<sos/eos>']\n")
    monkeypatch.setattr(registry, "MODELS_DIR", tmp_path)
    st = {"token_list": ["<blank>", "<unk>", "a", "b", "<sos/eos>"],
          "src_token_list": ["<blank>", "<unk>", "x", "y", "<sos/eos>"]}
    init = [{"model": "asr", "modules": ["encoder", "ctc"]}]
    assert train.init_params(init, "st", st) == [
        f"{asr / 'model.pth'}:{m}:{m}" for m in ("encoder", "ctc")]
    with pytest.raises(ValueError, match="cannot copy 'ctc' from asr: its src_token_list"):
        train.init_params(init, "st", {**st, "src_token_list": ["<blank>", "<unk>", "y",
                                                                 "x", "<sos/eos>"]})
    with pytest.raises(ValueError, match="cannot copy 'decoder' from asr: its token_list"):
        train.init_params([{"model": "asr", "modules": ["decoder"]}], "st", st)


def global_mvn_run(exp: Path, out: Path) -> Path:
    """A copy of the run ``exp`` whose model normalises with global statistics, as every
    shipped speech model does (the packed model then carries feats_stats.npz)."""
    import numpy as np
    import yaml

    shutil.copytree(exp, out)
    conf = yaml.safe_load((out / "config.yaml").read_text())
    dims = conf["frontend_conf"]["n_mels"]
    np.savez(out / "feats_stats.npz", count=np.array(1000), sum=np.zeros(dims),
             sum_square=np.full(dims, 1000.0))
    conf.update(normalize="global_mvn", normalize_conf={"stats_file": str(out / "feats_stats.npz")})
    (out / "config.yaml").write_text(yaml.safe_dump(conf))
    for f in out.glob("*epoch.pth"):
        state = torch.load(f)
        state.update({"normalize.mean": torch.zeros(dims), "normalize.std": torch.ones(dims)})
        torch.save(state, f)
    return out


@pytest.mark.corpus
@pytest.mark.parametrize("relative", [False, True])  # --out-root data/round, as the round packs
def test_pack_measures_dev_bleu_of_every_snapshot(fake_run, tmp_path, monkeypatch, relative):
    root, run = tmp_path, fake_run[0]
    if relative:  # the snapshots decode beside links to the packed model's files
        run = global_mvn_run(run, tmp_path / "mvn" / "exp")
        monkeypatch.chdir(tmp_path)
        root = Path("round")
    out = pack.pack(run, "tiny", pair="en-es", out_root=root, dev_utterances=2,
                   progress=False)
    rows = [line.split(",") for line in (out / "learning_curve.csv").read_text().splitlines()]
    col = rows[0].index("dev_bleu_greedy")
    assert [r[0] for r in rows[1:]] == ["1", "2", "3"]  # epoch 3 has a snapshot, no log line
    assert all(0.0 <= float(r[col]) <= 100.0 for r in rows[1:])
    info = json.loads((out / "simul.json").read_text())
    assert info["dev_utterances"] == 2 and 0.0 <= info["dev_bleu_greedy_averaged"] <= 100.0
    assert (out / "learning_curve.png").stat().st_size > 10_000


def test_pack_cli_can_write_outside_the_shipped_models(fake_run, tmp_path):
    exp, _ = fake_run
    before = registry.shipped()
    assert main(["models", "pack", str(exp), "probe", "--pair", "en-es", "--average", "2",
                 "--dev-utterances", "0", "--out-root", str(tmp_path)]) == 0
    assert (tmp_path / "probe" / "model.pth").is_file()
    assert (tmp_path / "probe" / "learning_curve.csv").read_text().startswith("epoch,")
    assert json.loads((tmp_path / "probe" / "simul.json").read_text())["averaged"] == [
        "2epoch.pth", "3epoch.pth"]
    assert registry.shipped() == before


def test_pack_records_the_corpus_version_and_stale_models_are_named(fake_run, tmp_path,
                                                                     monkeypatch):
    corpus = tmp_path / "mini"
    corpus.mkdir()
    (corpus / "manifest.json").write_text(json.dumps({"builder_version": 1, "files": {}}))
    out = pack.pack(fake_run[0], "tiny", pair="en-es", n_average=1, out_root=tmp_path,
                   corpus_root=corpus)
    assert json.loads((out / "simul.json").read_text())["corpus_builder_version"] == 1
    monkeypatch.setattr(registry, "MODELS_DIR", tmp_path)
    from simul.corpus.mini import build

    monkeypatch.setitem(build.PAIR_VERSIONS, "en-es", 1)
    assert registry.corpus_version("tiny") == 1 and not registry.stale("tiny")
    monkeypatch.setitem(build.PAIR_VERSIONS, "en-es", 2)
    assert registry.stale("tiny")


def _commit_all(repo: Path, message: str) -> str:
    """Commit everything under ``repo`` (a git repository made on the first call); its
    short revision."""
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    if not (repo / ".git").is_dir():
        subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", message], check=True)
    return subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()


def test_a_run_can_start_from_a_model_as_git_held_it(tmp_path, monkeypatch):
    """`commit` in a recipe's init or tokens reads the shipped model at that revision: a model
    retrained in place starts from its own earlier weights and keeps its units."""

    from simul.models.training import train

    repo = tmp_path / "repo"
    base = repo / "data" / "models" / "base"
    base.mkdir(parents=True)
    (base / "config.yaml").write_text(
        "token_type: bpe\ntoken_list: ['<blank>', '<unk>', a, b, '<sos/eos>']\n"
        "src_token_type: char\nsrc_token_list: ['<blank>', '<unk>', x, '<sos/eos>']\n")
    (base / "model.pth").write_bytes(b"old weights")
    (base / "bpe.model").write_bytes(b"old sp")
    rev = _commit_all(repo, "v1")
    (base / "model.pth").write_bytes(b"new weights")  # the model retrained since
    monkeypatch.setattr(registry, "MODELS_DIR", repo / "data" / "models")
    work = tmp_path / "run"
    src = train.model_source({"model": "base", "commit": rev}, "base", work)
    assert src == work / "start" / f"base@{rev}"
    assert (src / "model.pth").read_bytes() == b"old weights"
    assert train.model_source({"model": "base"}, "base", work) == base
    same = {"token_list": ["<blank>", "<unk>", "a", "b", "<sos/eos>"],
            "src_token_list": ["<blank>", "<unk>", "x", "<sos/eos>"]}
    init = [{"model": "base", "commit": rev, "modules": ["encoder", "decoder", "ctc"]}]
    assert train.init_params(init, "base", same, work) == [
        f"{src / 'model.pth'}:{m}:{m}" for m in ("encoder", "decoder", "ctc")]
    kind, tokens, sp = train._tokens({"from": {"model": "base", "commit": rev}},
                                     tmp_path / "text", work / "tokens", name="base",
                                     workdir=work)
    assert kind == "bpe" and sp.read_bytes() == b"old sp"
    assert tokens.read_text().split() == same["token_list"]
    kind, tokens, sp = train._tokens({"from": {"model": "base", "commit": rev}},
                                     tmp_path / "text", work / "src_tokens", side="source",
                                     name="base", workdir=work)
    assert (kind, sp) == ("char", None) and tokens.read_text().split() == same["src_token_list"]
    with pytest.raises(ValueError, match="cannot read data/models/base at git revision 'nosuch'"):
        train.model_source({"model": "base", "commit": "nosuch"}, "base", work)


def test_a_child_model_at_a_git_revision_assembles_with_its_parent_of_that_revision(
        tmp_path, monkeypatch):
    """A child model (its changed modules, its parent named by checksum) taken at a revision
    gets that revision's parent beside it, so it assembles though the parent was retrained
    since; a revision without the parent it was made from is refused in one line."""

    import torch

    from simul.corpus.manifest import sha256
    from simul.models import parent
    from simul.models.training import train

    repo = tmp_path / "repo"
    models = repo / "data" / "models"
    (models / "mother").mkdir(parents=True)
    (models / "kid").mkdir()
    torch.save({"encoder.w": torch.tensor([1.0]), "decoder.w": torch.tensor([2.0])},
               models / "mother" / "model.pth")
    (models / "mother" / "config.yaml").write_text("token_type: char\n")
    torch.save({"decoder.w": torch.tensor([3.0])}, models / "kid" / "model.pth")
    (models / "kid" / "config.yaml").write_text("token_type: char\n")
    (models / "kid" / "simul.json").write_text(json.dumps({"parent": {
        "model": "mother", "sha256": sha256(models / "mother" / "model.pth"),
        "modules": ["encoder"]}}))
    rev = _commit_all(repo, "v1")
    torch.save({"encoder.w": torch.tensor([9.0]), "decoder.w": torch.tensor([9.0])},
               models / "mother" / "model.pth")  # the parent retrained since
    monkeypatch.setattr(registry, "MODELS_DIR", models)
    monkeypatch.setattr(parent, "cache_dir", lambda: tmp_path / "assembled")
    monkeypatch.setattr(registry, "assembled_dir", lambda: tmp_path / "assembled")
    work = tmp_path / "run"
    src = train.model_source({"model": "kid", "commit": rev}, "kid", work)
    assert src == work / "start" / f"kid@{rev}"
    whole = torch.load(parent.assembled(src, src / "model.pth"))
    assert {k: v.item() for k, v in whole.items()} == {"encoder.w": 1.0, "decoder.w": 3.0}
    # taken again (the run resumed): the same, nothing extracted twice
    assert train.model_source({"model": "kid", "commit": rev}, "kid", work) == src
    # a revision whose parent is not the one the child was made from
    (models / "kid" / "simul.json").write_text(json.dumps({"parent": {
        "model": "mother", "sha256": "0" * 64, "modules": ["encoder"]}}))
    rev2 = _commit_all(repo, "v2")
    with pytest.raises(ValueError, match=rf"kid at git revision '{rev2}' was made from mother "
                                         r"000000000000…, which that revision does not hold"):
        train.model_source({"model": "kid", "commit": rev2}, "kid", work)


@pytest.mark.corpus
def test_eval_of_a_model_packed_outside_the_shipped_ones(fake_run, tmp_path, monkeypatch):
    # a snapshot packed with --out-root: its results go to runs/eval/NAME, and into the
    # model's own folder (metrics.json, card) only with --into-model; the shipped models are
    # untouched either way
    before = {n: registry.metrics(n) for n in registry.shipped()}
    out = pack.pack(fake_run[0], "probe", pair="en-es", n_average=1, out_root=tmp_path)
    card = out / "card.md"
    card_before = card.read_text() if card.exists() else None
    monkeypatch.chdir(tmp_path)
    assert main(["models", "eval", str(out), "--max-utterances", "2", "--beams", "1"]) == 0
    m = json.loads((tmp_path / "runs" / "eval" / "probe" / "metrics.json").read_text())
    assert not (out / "metrics.json").exists()
    assert (card.read_text() if card.exists() else None) == card_before
    assert sorted(m) == ["tst-COMMON/beam1", "tst-HE/beam1"]
    assert all(r["n"] == 2 and sum(v["n"] for v in r["by_engine"].values()) == 2
               for r in m.values())
    assert main(["models", "eval", str(out), "--max-utterances", "2", "--beams", "1",
                 "--into-model"]) == 0
    assert json.loads((out / "metrics.json").read_text()) == m
    assert "| tst-HE | greedy |" in (out / "card.md").read_text()
    assert "simul models eval probe --into-model" in (out / "card.md").read_text()
    assert {n: registry.metrics(n) for n in registry.shipped()} == before
    with pytest.raises(ValueError, match="not a shipped model"):
        evaluation.evaluate(tmp_path / "nothing")


def test_shipped_translators_leave_out_cascades_and_their_halves(cascade_dir, monkeypatch,
                                                                 tmp_path):
    import shutil

    models = tmp_path / "models"
    shutil.copytree(cascade_dir.parent, models)  # tiny_cascade, asr, mt
    st = models / "st"
    st.mkdir()
    (st / "config.yaml").write_text(yaml.safe_dump({"src_token_list": ["a"], "frontend":
                                                    "default"}))
    (st / "simul.json").write_text(json.dumps({"pair": "en-es"}))
    for part, task in (("asr", "asr"), ("mt", "mt")):
        (models / part / "simul.json").write_text(json.dumps({"pair": "en-es", "task": task}))
    monkeypatch.setattr(registry, "MODELS_DIR", models)
    assert set(registry.shipped()) == {"asr", "mt", "st", "tiny_cascade"}
    assert registry.shipped_translators() == ["st"]
    assert registry.shipped_cascades() == ["tiny_cascade"]


def test_staleness_is_per_pair(fake_run, tmp_path, monkeypatch):
    """A corpus whose manifest gives each pair's version: a model records its pair's, and a
    newer version of another pair leaves it current."""
    corpus = tmp_path / "mini"
    corpus.mkdir()
    (corpus / "manifest.json").write_text(json.dumps(
        {"builder_version": 3, "pair_versions": {"en-es": 2, "en-de": 3}, "files": {}}))
    out = pack.pack(fake_run[0], "tiny", pair="en-es", n_average=1, out_root=tmp_path,
                    corpus_root=corpus)
    assert json.loads((out / "simul.json").read_text())["corpus_builder_version"] == 2
    monkeypatch.setattr(registry, "MODELS_DIR", tmp_path)
    from simul.corpus import built

    monkeypatch.setattr(built, "BUILDER_VERSION", 3)
    monkeypatch.setattr(built, "PAIR_VERSIONS", {"en-es": 2, "en-de": 3})
    assert not registry.stale("tiny")
    monkeypatch.setattr(built, "PAIR_VERSIONS", {"en-es": 3, "en-de": 3})
    assert registry.stale("tiny")


def _models_table() -> dict[str, str]:
    """docs/reference/models.md's table of shipped models: model name → its paper column, with
    a row's short names (`_k4_s350` after `conformer_bpe_en-de_k3_s300`) written out."""
    from pathlib import Path

    page = Path(__file__).resolve().parents[1] / "docs" / "reference" / "models.md"
    section = page.read_text().split("\n## Shipped models\n")[1].split("\n## ")[0]
    table = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0].startswith("`"):
            continue
        names = [n.strip().strip("`") for n in cells[0].split(",")]
        for name in names:
            if name.startswith("_"):  # the first name less as many parts as the suffix has
                stem = names[0].rsplit("_", name.count("_"))[0]
                name = stem + name
            table[name] = cells[1]
    return table


def test_every_shipped_model_has_its_papers_as_the_docs_say():
    from simul.zoo.card import papers

    table = _models_table()
    assert set(table) == set(registry.shipped())  # the page lists every shipped model
    for name in registry.shipped():
        assert papers(name) == table[name], name
    assert papers("my_own_model") == ""
    # the P22 grid (not shipped yet) is Figs. 1–2, not the offline Transformer's Table 1
    assert papers("transformer_bpe_en-de_waitk11_adaptive") == "P22 Figs. 1–2"
    assert papers("transformer_bpe_en-de") == "P22 Table 1"


def test_simul_models_has_pair_and_paper_columns(fake_run, tmp_path, monkeypatch, capsys):
    pack.pack(fake_run[0], "conformer_bpe_en-es_waitk3", pair="en-es", out_root=tmp_path)
    pack.pack(fake_run[0], "mine", pair="en-pt", out_root=tmp_path)
    monkeypatch.setattr(registry, "MODELS_DIR", tmp_path)
    monkeypatch.setattr("simul.zoo.card.MODELS_DIR", tmp_path)
    assert main(["models"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["model", "pair", "papers"]
    rows = [line for line in lines if not line.startswith(" ")][1:]
    assert rows[0].startswith("conformer_bpe_en-es_waitk3  en-es  P22 §3, H20 Table 6  (")
    assert rows[1].startswith("mine                        en-pt  –                    (")


def _spelled(text: str) -> int:
    """A number as the docs spell it: 'nineteen', 'forty-one'."""
    units = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
             "fourteen fifteen sixteen seventeen eighteen nineteen").split()
    tens = dict(twenty=20, thirty=30, forty=40, fifty=50, sixty=60, seventy=70, eighty=80,
                ninety=90)
    parts = text.lower().split("-")
    if parts[0] in tens:
        return tens[parts[0]] + (units.index(parts[1]) if len(parts) > 1 else 0)
    return units.index(parts[0])


def test_the_docs_count_the_shipped_models():
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    page = (root / "docs" / "reference" / "models.md").read_text()
    readme = (root / "README.md").read_text()
    n = len(registry.shipped())
    assert _spelled(re.search(r"It ships ([a-z-]+)", page).group(1)) == n
    assert _spelled(re.search(r"([A-Za-z-]+) models ship in `data/models/`", readme)
                    .group(1)) == n
    assert _spelled("nineteen") == 19 and _spelled("forty-one") == 41
