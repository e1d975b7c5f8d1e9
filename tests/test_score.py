"""score_records, records.read (simul records and SimulEval instances.log) and refused records."""

import json
import math
import re
import sys
from pathlib import Path

import pytest
import sacrebleu

from simul import records
from simul.metrics.score import main_score, score_records
from simul.records import Record

NCA_KEYS = ["BLEU", "chrF", "AL", "LAAL", "DAL", "AP", "ATD", "StartOffset", "EndOffset",
            "RTF"]
CA_KEYS = [f"{k}_CA" for k in NCA_KEYS[2:]]
PAPER_KEYS = ["AL_N21", "AL_N21_orig", "AL_orig", "AL_M20", "AL_K22"]
TAIL_KEYS = ["length_diff", "BLEU_signature", "chrF_signature", "n"]


def _record(index, prediction, delays, reference, source_length, elapsed=None):
    return Record(index=index, prediction=prediction, delays=delays,
                  elapsed=list(delays) if elapsed is None else elapsed,
                  prediction_length=len(delays), reference=reference,
                  source_length=source_length, source=[f"{index}.wav"])


def _corpus(with_elapsed=True):
    # record 0: 3 words / 3 reference words, one per second of a 3 s source: AL = 1000
    #   (lags 1000, 2000 − 1000, 3000 − 2000); elapsed adds 100 ms per word (cumulative).
    # record 1: 2 words / 4 reference words at 1000 and 2000 of 2000 ms: 1/γ = 2000/4 = 500,
    #   AL = (1000 + 2000 − 500) / 2 = 1250.
    # record 2: empty prediction (left out of the latency means, counted in BLEU).
    recs = [
        _record(0, "das ist gut", [1000, 2000, 3000], "das ist gut", 3000.0,
                [1100, 2200, 3300]),
        _record(1, "ein Haus", [1000, 2000], "ein kleines altes Haus", 2000.0,
                [1000, 2050]),
        _record(2, "", [], "nichts", 1500.0, []),
    ]
    if not with_elapsed:
        recs[0].elapsed = []
    return recs


def test_score_records_keys_and_values():
    recs = _corpus()
    scores = score_records(recs)
    assert list(scores) == NCA_KEYS + CA_KEYS + PAPER_KEYS[:4] + ["AL_M20_CA", "AL_K22"] \
        + TAIL_KEYS
    hyps, refs = [r.prediction for r in recs], [r.reference for r in recs]
    assert scores["BLEU"] == sacrebleu.corpus_bleu(hyps, [refs]).score
    assert scores["chrF"] == sacrebleu.corpus_chrf(hyps, [refs]).score
    assert scores["BLEU_signature"].startswith("nrefs:1|case:mixed|eff:no|tok:13a")
    assert scores["n"] == 3
    # AL: mean(1000, 1250) = 1125 (the empty record is left out)
    assert scores["AL"] == 1125
    # StartOffset: mean(1000, 1000); EndOffset: mean(0, 0)
    assert scores["StartOffset"] == 1000 and scores["EndOffset"] == 0
    # StartOffset_CA: mean(1100, 1000) = 1050; EndOffset_CA: mean(300, 50) = 175
    assert scores["StartOffset_CA"] == 1050 and scores["EndOffset_CA"] == 175
    # length_diff: (3 − 3 + 2 − 4 + 0 − 1) / 3 = −1
    assert scores["length_diff"] == -1


def test_ca_only_when_every_record_has_elapsed():
    scores = score_records(_corpus(with_elapsed=False))
    assert list(scores) == NCA_KEYS + PAPER_KEYS + TAIL_KEYS
    assert not any(k.endswith("_CA") for k in scores)


def test_latency_nan_when_no_word_at_all():
    scores = score_records([_record(0, "", [], "etwas", 1000.0)])
    assert math.isnan(scores["AL"]) and scores["BLEU"] == 0.0 and scores["n"] == 1


def test_read_simul_records(tmp_path):
    recs = _corpus()
    recs[0].units = ["▁das", "▁ist", "▁gut"]
    recs[0].policy = "wait_k"
    path = records.write(recs, tmp_path / "records.jsonl")
    back = records.read(path)
    assert back == recs
    assert score_records(back) == score_records(recs)


def test_read_simuleval_log(tmp_path):
    # as SimulEval 1.1 writes it (extra fields such as prediction_spm are ignored)
    line = dict(index=0, prediction="das ist gut", delays=[1000.0, 2000.0, 3000.0],
                elapsed=[1100.0, 2200.0, 3300.0], prediction_length=3,
                reference="das ist gut", source=["samplerate: 16000 Hz"],
                source_length=3000.0, prediction_spm=["▁das", "▁ist", "▁gut"])
    path = tmp_path / "instances.log"
    path.write_text(json.dumps(line) + "\n")
    (rec,) = records.read(path)
    assert rec.prediction == "das ist gut" and rec.delays == [1000.0, 2000.0, 3000.0]
    assert rec.elapsed == [1100.0, 2200.0, 3300.0] and rec.source_length == 3000.0
    assert rec.units == [] and rec.unit_type == "" and rec.policy == ""
    assert score_records([rec])["AL"] == 1000  # lags 1000, 1000, 1000


def test_read_records_written_before_unit_type(tmp_path):
    # a record line as simul wrote it before Record.unit_type existed: no "unit_type" field
    line = dict(GOOD, units=["\u2581a", "\u2581b"], trace=[[1000, 2]], policy="offline")
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(line) + "\n\n")  # a blank last line is skipped
    (rec,) = records.read(path)
    assert rec.unit_type == "" and rec.units == ["\u2581a", "\u2581b"]


def test_main_score_refuses_an_empty_file(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    with pytest.raises(ValueError, match="empty.jsonl: no records"):
        main_score(path, as_json=True)


GOOD = dict(index=0, prediction="a b", delays=[100, 200], elapsed=[150, 260],
            prediction_length=2, reference="a b", source_length=1000, source=["x"])


def _refused(tmp_path, bad: dict, drop: str | None = None):
    """Write a good line, then the bad one (line 2); return records.read's error message."""
    second = {k: v for k, v in (GOOD | bad).items() if k != drop}
    path = tmp_path / "instances.log"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(second) + "\n")
    with pytest.raises(ValueError) as e:
        records.read(path)
    message = str(e.value)
    assert str(path) in message and "line 2" in message
    return message


@pytest.mark.parametrize("field", ["index", "prediction", "delays", "elapsed",
                                   "prediction_length", "reference", "source_length",
                                   "source"])
def test_refuses_missing_field(tmp_path, field):
    assert f"missing field '{field}'" in _refused(tmp_path, {}, drop=field)


def test_refuses_decreasing_delays(tmp_path):
    message = _refused(tmp_path, dict(delays=[200, 100], elapsed=[250, 260]))
    assert "'delays'" in message and "non-decreasing" in message


def test_refuses_delays_not_one_per_word(tmp_path):
    message = _refused(tmp_path, dict(delays=[100, 200, 300], elapsed=[], prediction_length=3))
    assert "'delays'" in message and "3 delays for 2 words" in message


def test_refuses_wrong_prediction_length(tmp_path):
    assert "'prediction_length'" in _refused(tmp_path, dict(prediction_length=3))


def test_refuses_elapsed_not_one_per_word(tmp_path):
    assert "'elapsed'" in _refused(tmp_path, dict(elapsed=[150]))


def test_refuses_elapsed_before_delay(tmp_path):
    assert "'elapsed'" in _refused(tmp_path, dict(elapsed=[90, 260]))


def test_refuses_bad_source_length(tmp_path):
    assert "'source_length'" in _refused(tmp_path, dict(source_length=0))


def test_refuses_non_json(tmp_path):
    path = tmp_path / "instances.log"
    path.write_text(json.dumps(GOOD) + "\n{not json\n")
    with pytest.raises(ValueError, match="line 2: not JSON"):
        records.read(path)


def test_score_records_refuses_bad_record():
    rec = _record(7, "a b", [300, 200], "a b", 1000.0)
    with pytest.raises(ValueError, match=r"record 0 \(index 7\): field 'delays'"):
        score_records([rec])


def test_main_score_json_and_table(tmp_path, capsys):
    path = records.write(_corpus(), tmp_path / "records.jsonl")
    assert main_score(path, as_json=True) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == score_records(_corpus())
    assert main_score(path, as_json=False) == 0
    table = capsys.readouterr().out
    assert "LAAL_CA" in table and "1125.000" in table and "ms" in table


def test_simuleval_score_only_reads_a_folder_we_write(tmp_path):
    """`simuleval --score-only` on our folder prints the same latency we compute."""
    import shutil
    import subprocess

    from simul.records import Record, write_simuleval_dir

    exe = shutil.which("simuleval") or str(Path(sys.executable).with_name("simuleval"))
    recs = [
        Record(index=0, prediction="uno dos tres", delays=[1000.0, 2000.0, 3000.0],
               elapsed=[1100.0, 2300.0, 3500.0], prediction_length=3,
               reference="uno dos tres cuatro", source_length=3000.0, source=["a.wav"]),
        Record(index=1, prediction="x y", delays=[500.0, 2500.0], elapsed=[600.0, 2700.0],
               prediction_length=2, reference="x y z", source_length=2500.0, source=["b.wav"]),
    ]
    folder = write_simuleval_dir(recs, tmp_path / "run")
    out = subprocess.run([exe, "--score-only", "--output", str(folder)], capture_output=True,
                         text=True, check=True, cwd=tmp_path).stdout.splitlines()
    header, values = out[-2].split(), out[-1].split()[1:]
    theirs = dict(zip(header, map(float, values), strict=True))
    ours = score_records(recs)
    for key in ("LAAL", "AL", "AP", "DAL", "ATD"):
        assert theirs[key] == pytest.approx(ours[key], abs=1e-3), key


def test_several_files_side_by_side(tmp_path, capsys):
    """One row per file, a row of units under the metric names; a metric a file lacks is –."""
    a = records.write(_corpus(), tmp_path / "a.jsonl")
    b = records.write(_corpus(with_elapsed=False)[:2], tmp_path / "b.jsonl")
    assert main_score([a, b], as_json=False) == 0
    lines = capsys.readouterr().out.splitlines()
    header, units, row_a, row_b = (line.split() for line in lines[:4])
    assert header[:5] == ["records", "n", "BLEU", "chrF", "AL"]
    assert units[:3] == ["ms", "ms", "ms"]  # AL, LAAL, DAL (the blank cells are spaces)
    column = header.index("AL")
    assert row_a[:2] == [str(a), "3"] and row_a[column] == "1125.000"
    # b: records 0 and 1 only, AL = mean(1000, 1250) as for a; no elapsed, so no AL_CA
    assert row_b[:2] == [str(b), "2"] and row_b[column] == "1125.000"
    assert row_b[header.index("AL_CA")] == "–" and row_a[header.index("AL_CA")] != "–"
    assert main_score([a, b], as_json=True) == 0
    first, second = map(json.loads, capsys.readouterr().out.splitlines())
    assert first["records"] == str(a) and second["records"] == str(b)
    assert second["AL"] == 1125 and "AL_CA" not in second


def test_speech_and_text_files_are_scored_apart(tmp_path):
    speech = records.write(_corpus()[:1], tmp_path / "speech.jsonl")
    text = _corpus(with_elapsed=False)[:1]
    text[0].source_type, text[0].source_length, text[0].delays = "text", 3.0, [1.0, 2.0, 3.0]
    text_path = records.write(text, tmp_path / "text.jsonl")
    with pytest.raises(ValueError, match=r"speech.jsonl is of speech input \(latency in ms\), "
                                         r".*text.jsonl of text input"):
        main_score([speech, text_path], as_json=False)


def test_the_legend_names_the_signature_lines_and_text_units(tmp_path, capsys):
    path = records.write(_corpus(), tmp_path / "r.jsonl")
    main_score(path, as_json=False)
    out = capsys.readouterr().out
    signature = out.index("BLEU_signature: nrefs:1")
    assert out.index("length_diff") < signature < out.index("What the numbers are")
    words = " ".join(out.split())
    assert "signature below" not in words and "the BLEU_signature line" in words
    text = _corpus(with_elapsed=False)[:1]
    text[0].source_type, text[0].source_length, text[0].delays = "text", 3.0, [1.0, 2.0, 3.0]
    main_score(records.write(text, tmp_path / "t.jsonl"), as_json=False)
    out = capsys.readouterr().out
    assert "a word's delay: the source words read when the word was complete" in out
    assert re.search(r"^AL +1\.000  source words$", out, re.M)  # lags 1, 2 − 1, 3 − 2
    assert ", ms" not in out


def test_a_closed_pipe_ends_quietly(tmp_path):
    """`simul score F | head`: the reader goes away; no BrokenPipeError traceback."""
    import subprocess

    path = records.write(_corpus(), tmp_path / "r.jsonl")
    run = subprocess.Popen([sys.executable, "-m", "simul", "score", str(path)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           cwd=Path(__file__).resolve().parents[1])
    run.stdout.close()  # before simul writes anything: its first write meets a closed pipe
    err = run.stderr.read().decode()
    assert run.wait(timeout=120) == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err


@pytest.mark.parametrize("hyps, refs", [
    (["the cat sat on the mat .", "a dog", ""], ["the cat sat on a mat .", "a dog barked", "x"]),
    (["ein Hund bellt laut", "ja"], ["ein Hund bellt", "nein"]),
])
def test_bleu_from_summed_statistics_is_sacrebleus_corpus_bleu(hyps, refs):
    # simul's one BLEU path (the claims' bootstrap sums these per resample) against sacrebleu
    import sacrebleu

    from simul.metrics.quality import bleu_of, bleu_statistics, corpus_quality

    stats = bleu_statistics(hyps, refs)
    assert stats.shape == (len(hyps), 10)
    reference = sacrebleu.corpus_bleu(hyps, [refs])
    assert bleu_of(stats.sum(axis=0)) == pytest.approx(reference.score)
    assert corpus_quality(hyps, refs).bleu == pytest.approx(reference.score)
    assert corpus_quality(hyps, refs).length_ratio == pytest.approx(
        reference.sys_len / reference.ref_len)
    with pytest.raises(ValueError, match="vector of 10"):
        bleu_of(stats)
