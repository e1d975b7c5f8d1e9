"""Bad input to the command line: one line naming the option, file or field, exit 2, and
nothing written (a new user's first hour, issue: errors that help)."""

import json

import pytest

from simul import records
from simul.commands import cli
from simul.metrics.score import score_records
from simul.records import Record
from tests.test_mustc import PAIR, SPLIT, make_corpus


def one_line_error(capsys, *fragments: str) -> str:
    captured = capsys.readouterr()
    err = captured.err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "error: " in err
    for fragment in fragments:
        assert fragment in err, (fragment, err)
    return err


@pytest.mark.parametrize(("argv", "fragment"), [
    (["--max-utterances", "0"], "argument --max-utterances: expected a whole number ≥ 1, got 0"),
    (["--max-utterances", "-1"], "argument --max-utterances: expected a whole number ≥ 1, "
                                 "got -1"),
    (["--max-utterances", "two"], "expected a whole number ≥ 1, got 'two'"),
    (["--beam", "0"], "argument --beam: expected a whole number ≥ 1, got 0"),
])
def test_a_count_below_one_names_its_option(tmp_path, capsys, argv, fragment):
    out = tmp_path / "r.jsonl"
    with pytest.raises(SystemExit) as stop:
        cli.main(["decode", "--model", "blstm_char_en-es", "--out", str(out), *argv])
    assert stop.value.code == 2
    one_line_error(capsys, "simul decode: error: ", fragment)
    assert not out.exists()


def test_usage_errors_are_one_line_too(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["decode", "--out", "x"])
    assert stop.value.code == 2
    one_line_error(capsys, "the following arguments are required: --model",
                   "(see simul decode -h)")


def test_score_reads_simulevals_output_folder(tmp_path, capsys):
    recs = [Record(index=0, prediction="a b", delays=[100.0, 900.0], elapsed=[150.0, 950.0],
                   prediction_length=2, reference="a b", source_length=1000.0,
                   source=["x.wav"])]
    folder = records.write_simuleval_dir(recs, tmp_path / "simuleval_out")
    assert cli.main(["score", str(folder), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["AL"] == score_records(records.read(folder / "instances.log"))["AL"]
    assert got["StartOffset"] == 100.0  # d_1, by hand


def test_score_of_a_folder_without_a_log_says_so(tmp_path, capsys):
    assert cli.main(["score", str(tmp_path)]) == 2
    one_line_error(capsys, f"{tmp_path}: a folder without instances.log")
    assert cli.main(["score", str(tmp_path / "missing.jsonl")]) == 2
    one_line_error(capsys, "missing.jsonl: no such file")


def test_the_score_table_says_what_each_number_is(tmp_path, capsys):
    recs = [Record(index=0, prediction="a b", delays=[100.0, 900.0], elapsed=[150.0, 950.0],
                   prediction_length=2, reference="a b", source_length=1000.0,
                   source=["x.wav"])]
    path = records.write(recs, tmp_path / "r.jsonl")
    assert cli.main(["score", str(path)]) == 0
    out = capsys.readouterr().out
    for line in ("  AL: Average Lagging, ms", "  LAAL: Length-Adaptive Average Lagging",
                 "  AL_N21: AL of Nguyen et al. 2021 eq. (6)", "  length_diff: mean hypothesis",
                 "  _CA: the same metric, computation-aware"):
        assert line in out, line


def test_a_mistyped_split_lists_the_splits_there(tmp_path, capsys):
    make_corpus(tmp_path / PAIR)
    out = tmp_path / "r.jsonl"
    assert cli.main(["decode", "--model", str(tmp_path), "--corpus", str(tmp_path),
                     "--pair", PAIR, "--split", "tst-COMON", "--out", str(out)]) == 2
    one_line_error(capsys, "no split 'tst-COMON'; the splits there: " + SPLIT)
    assert not out.exists()


def test_a_sweep_that_fails_on_a_typo_leaves_its_output_free(tiny_model_dir, tmp_path):
    from simul import sweep

    corpus = tmp_path / "corpus"
    make_corpus(corpus / PAIR)
    spec = {"models": [str(tiny_model_dir)], "pair": PAIR, "splits": ["tst-COMON"],
            "corpus": str(corpus), "output": str(tmp_path / "out"), "max_utterances": 1,
            "policies": [{"policy": "offline"}]}
    with pytest.raises(Exception, match="no split 'tst-COMON'"):
        sweep.run(spec, workers=1, progress=False)
    assert not (tmp_path / "out" / "sweep.json").exists()  # nothing claimed
    table = sweep.run({**spec, "splits": [SPLIT]}, workers=1, progress=False)
    assert len(table) == 1
    # a claim that decoded nothing (e.g. a crash before the first record) is no obstacle
    claim = tmp_path / "out2" / "sweep.json"
    claim.parent.mkdir()
    claim.write_text(json.dumps({"fingerprint": {"spec": "another"}}))
    assert len(sweep.run({**spec, "splits": [SPLIT], "output": str(claim.parent)},
                         workers=1, progress=False)) == 1


def test_confirm_names_the_options_it_does_not_take_and_the_missing_first_run(tmp_path, capsys):
    assert cli.main(["reproduce", "--confirm", "--quick", "--jobs", "2"]) == 2
    one_line_error(capsys, "--confirm: not with --quick, --jobs")
    assert cli.main(["reproduce", "--confirm", "--figures", str(tmp_path)]) == 2
    one_line_error(capsys, f"no claims under {tmp_path}", "run simul reproduce")
    assert not (tmp_path / "confirm").exists()


@pytest.mark.parametrize(("argv", "fragment"), [
    (["nope"], "no meta-learning recipe 'nope'; known: conformer_bpe_en-de_meta"),
    (["conformer_bpe_en-de_meta", "--stage", "finetune", "--start", "NOWHERE"],
     "--start: NOWHERE holds no checkpoint.pt"),
    (["conformer_bpe_en-de_meta", "--stage", "meta", "--start", "NOWHERE"],
     "--start: only the finetune stage starts from another run"),
])
def test_meta_train_names_what_is_wrong_and_writes_nothing(tmp_path, capsys, argv, fragment):
    workdir = tmp_path / "run"
    code = cli.main(["meta-train", *argv, "--workdir", str(workdir)])
    assert code == 2
    one_line_error(capsys, fragment)
    assert not workdir.exists()


def test_corpus_commands_take_corpus_and_root_still_works_with_a_warning(tmp_path, capsys):
    make_corpus(tmp_path / PAIR)
    argv = ["corpus", "simuleval", "--pair", PAIR, "--split", SPLIT, "--text"]
    assert cli.main([*argv, "--corpus", str(tmp_path), "--out", str(tmp_path / "a")]) == 0
    assert "deprecated" not in capsys.readouterr().err
    assert cli.main([*argv, "--root", str(tmp_path), "--out", str(tmp_path / "b")]) == 0
    err = capsys.readouterr().err
    assert err == "simul corpus simuleval: warning: --root is deprecated, use --corpus\n"
    for name in ("source.txt", "target.txt"):
        assert (tmp_path / "b" / name).read_text() == (tmp_path / "a" / name).read_text()
    assert (tmp_path / "a" / "source.txt").read_text().splitlines()[0] == "hello world"
