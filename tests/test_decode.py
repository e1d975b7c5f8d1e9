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


@pytest.fixture
def fake_decode(monkeypatch):
    """simul decode without a model: the pair it was asked to read."""
    asked = {}

    def fake_records(model, policy, *, pair, **kw):
        asked["pair"] = pair
        return [Record(index=0, prediction="a", delays=[1.0], elapsed=[1.0],
                       prediction_length=1, reference="a", source_length=1.0, source=["x"])]

    monkeypatch.setattr(loader, "load", lambda name, device="cpu": None)
    monkeypatch.setattr(decode_split, "records", fake_records)
    return asked


@pytest.mark.parametrize("argv, model, expected", [
    ([], "blstm_char_en-pt", "en-pt"),  # the model's own pair, not en-es
    (["--pair", "en-pt"], "blstm_char_en-pt", "en-pt"),  # the same, said
    ([], "DIR", "en-es"),  # a directory without simul.json: en-es
    (["--pair", "en-pt"], "DIR", "en-pt"),  # … or the pair named
])
def test_decode_reads_the_models_pair(tmp_path, fake_decode, argv, model, expected):
    model = str(tmp_path) if model == "DIR" else model
    out = tmp_path / "out.jsonl"
    assert cli.main(["decode", "--model", model, "--out", str(out), *argv]) == 0
    assert fake_decode["pair"] == expected


def test_decode_refuses_a_pair_the_model_does_not_translate(tmp_path, fake_decode, capsys):
    out = tmp_path / "out.jsonl"
    argv = ["decode", "--model", "blstm_char_en-pt", "--pair", "en-es", "--out", str(out)]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err == ("simul: error: --pair en-es: blstm_char_en-pt translates en-pt (its "
                   "simul.json); leave --pair out to read the en-pt split\n")
    assert fake_decode == {} and not out.exists()
