"""`simul decode` reads the split of the model's own language pair unless told otherwise."""

import json

import pytest

from simul import cli, decode_split
from simul.models import loader, registry
from simul.records import Record


def test_model_pair_from_simul_json(tmp_path):
    # shipped models record their pair in simul.json
    assert registry.pair("blstm_char_en-pt") == "en-pt"
    assert registry.pair("conformer_bpe_en-es") == "en-es"
    # an ESPnet directory: its simul.json if it has one, else unknown
    assert registry.pair(tmp_path) is None
    (tmp_path / "simul.json").write_text(json.dumps({"pair": "en-de"}))
    assert registry.pair(tmp_path) == "en-de"
    (tmp_path / "simul.json").write_text(json.dumps({"pair": 7}))
    with pytest.raises(ValueError, match="simul.json: field 'pair'"):
        registry.pair(tmp_path)


@pytest.mark.parametrize("argv, model, expected", [
    ([], "blstm_char_en-pt", "en-pt"),  # the model's own pair, not en-es
    (["--pair", "en-es"], "blstm_char_en-pt", "en-es"),  # as told (with a warning)
    ([], "DIR", "en-es"),  # a directory without simul.json: en-es
])
def test_decode_default_pair(tmp_path, monkeypatch, capsys, argv, model, expected):


    model = str(tmp_path) if model == "DIR" else model
    asked = {}

    def fake_records(model, policy, *, pair, **kw):
        asked["pair"] = pair
        return [Record(index=0, prediction="a", delays=[1.0], elapsed=[1.0],
                       prediction_length=1, reference="a", source_length=1.0, source=["x"])]

    monkeypatch.setattr(loader, "load", lambda name, device="cpu": None)
    monkeypatch.setattr(decode_split, "records", fake_records)
    out = tmp_path / "out.jsonl"
    assert cli.main(["decode", "--model", model, "--out", str(out), *argv]) == 0
    assert asked["pair"] == expected
    warned = "trained on en-pt" in capsys.readouterr().err
    assert warned == (argv == ["--pair", "en-es"])
