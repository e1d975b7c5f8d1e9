"""`simul decode`: the pair it reads is the model's own, by one rule everywhere a pair is
taken (a cascade's is its MT model's); records are written as each utterance finishes, Ctrl-C
keeps them (exit 130) and --resume continues; an existing --out is never replaced unasked;
--beam is refused where no beam applies."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from simul import records as records_io
from simul.commands import cli
from simul.decoding import decode_split, live
from simul.models import loader, registry
from simul.records import Record
from simul.sweep.spec import Spec, SweepError
from tests.conftest import make_tiny_model
from tests.test_mustc import PAIR, SPLIT, make_corpus

ROOT = Path(__file__).resolve().parents[1]


def one_line(capsys) -> str:
    """The one error line of the last command, without its ``simul: error: ``."""
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("simul: error: "), err
    return err.removeprefix("simul: error: ").rstrip("\n")


# ---------------------------------------------------------------------------- the pair

def test_a_models_pair_is_its_own_and_a_cascades_its_mt_models(tmp_path):
    assert registry.pair("blstm_char_en-pt") == "en-pt"
    assert registry.pair("conformer_bpe_en-de") == "en-de"  # a child: its own simul.json
    # a cascade's directory holds cascade.json only: the pair of the MT model it names
    assert not (registry.resolve("cascade_en-de") / "simul.json").exists()
    assert registry.pair("cascade_en-de") == "en-de"
    assert registry.pair("cascade_en-es") == "en-es"
    assert registry.pair(tmp_path) is None  # a directory without simul.json: unknown
    (tmp_path / "simul.json").write_text(json.dumps({"pair": "en-de"}))
    assert registry.pair(tmp_path) == "en-de"
    (tmp_path / "simul.json").write_text(json.dumps({"pair": 7}))
    with pytest.raises(ValueError, match="simul.json: field 'pair'"):
        registry.pair(tmp_path)


@pytest.fixture
def splits(tmp_path):
    """A corpus root with an empty tst-COMMON split for each pair (what the pair check and
    the split check read; the records are faked)."""
    root = tmp_path / "corpus"
    for pair in ("en-es", "en-de", "en-pt"):
        (root / pair / "data" / "tst-COMMON").mkdir(parents=True)
    return root


@pytest.fixture
def fake_decode(monkeypatch):
    """simul decode without a model: the pair and the policy it was asked to decode."""
    asked = {}

    def fake_records(model, policy, *, pair, **kw):
        asked.update(pair=pair, policy=policy)
        return [Record(index=0, prediction="a", delays=[1.0], elapsed=[1.0],
                       prediction_length=1, reference="a", source_length=1.0, source=["x"])]

    monkeypatch.setattr(loader, "load", lambda name, device="cpu": None)
    monkeypatch.setattr(decode_split, "records", fake_records)
    return asked


@pytest.mark.parametrize("model, argv, expected", [
    ("blstm_char_en-pt", [], "en-pt"),  # the model's own pair
    ("blstm_char_en-pt", ["--pair", "en-pt"], "en-pt"),  # the same, said
    ("cascade_en-de", [], "en-de"),  # its MT model's (it used to read en-es)
    ("DIR", ["--pair", "en-pt"], "en-pt"),  # a model that does not record it: the one named
])
def test_decode_reads_the_models_pair(tmp_path, splits, fake_decode, model, argv, expected):
    model = str(tmp_path) if model == "DIR" else model
    out = tmp_path / "out.jsonl"
    assert cli.main(["decode", "--model", model, "--corpus", str(splits), "--out", str(out),
                     *argv]) == 0
    assert fake_decode["pair"] == expected


@pytest.mark.parametrize("model, argv, message", [
    ("blstm_char_en-pt", ["--pair", "en-es"],
     "--pair en-es: blstm_char_en-pt translates en-pt (its simul.json); leave --pair out to "
     "read the en-pt split"),
    ("cascade_en-de", ["--pair", "en-pt"],
     "--pair en-pt: cascade_en-de translates en-de (its MT model mt_transformer_bpe_en-de's "
     "simul.json); leave --pair out to read the en-de split"),
    ("DIR", [], "DIR: its language pair is not known (no 'pair' in DIR/simul.json): give "
                "--pair SRC-TGT"),
])
def test_decode_refuses_a_pair_that_is_not_the_models(tmp_path, splits, fake_decode, capsys,
                                                      model, argv, message):
    directory = tmp_path / "model"
    directory.mkdir()
    model = str(directory) if model == "DIR" else model
    out = tmp_path / "out.jsonl"
    assert cli.main(["decode", "--model", model, "--corpus", str(splits), "--out", str(out),
                     *argv]) == 2
    assert one_line(capsys) == message.replace("DIR", str(directory))
    assert fake_decode == {} and not out.exists()


def test_stream_takes_the_pair_by_the_same_rule(tmp_path):
    # a file needs no pair; one given must still be the model's
    assert live.source_pair(None, "cascade_en-de", needed=False) == ""
    assert live.source_pair(None, "cascade_en-de") == "en-de"  # --segment: read in en-de
    with pytest.raises(ValueError, match="^--pair en-pt: cascade_en-de translates en-de"):
        live.source_pair("en-pt", "cascade_en-de", needed=False)
    assert live.source_pair("en-pt", str(tmp_path), needed=False) == "en-pt"  # unknown: as said
    with pytest.raises(ValueError, match="its language pair is not known"):
        live.source_pair(None, str(tmp_path))  # a --segment of an unknown pair


def test_a_sweep_reads_the_pair_of_its_models(tmp_path):
    spec = {"models": ["cascade_en-de", "conformer_bpe_en-de"], "output": str(tmp_path),
            "policies": [{"policy": "offline"}]}
    assert Spec.from_dict(spec).pair == "en-de"  # the pair left out: the models'
    assert Spec.from_dict({**spec, "pair": "en-de"}).pair == "en-de"
    with pytest.raises(SweepError, match=r"^spec: field 'pair': en-es, but cascade_en-de "
                                         r"translates en-de \(its MT model"):
        Spec.from_dict({**spec, "pair": "en-es"})
    with pytest.raises(SweepError, match=r"they translate different pairs \(en-de: "
                                         r"cascade_en-de; en-es: conformer_bpe_en-es\)"):
        Spec.from_dict({**spec, "models": ["cascade_en-de", "conformer_bpe_en-es"]})
    with pytest.raises(SweepError, match=f"field 'pair' is missing and {tmp_path} does not"):
        Spec.from_dict({**spec, "models": [str(tmp_path)]})
    assert Spec.from_dict({**spec, "models": [str(tmp_path)], "pair": "en-pt"}).pair == "en-pt"


def test_models_eval_refuses_a_model_without_its_pair(tmp_path):
    from simul.zoo import evaluation

    (tmp_path / "simul.json").write_text(json.dumps({"task": "st"}))
    with pytest.raises(ValueError, match=f"^{tmp_path}/simul.json: no field 'pair'"):
        evaluation.evaluate(tmp_path)


# ---------------------------------------------------------------------------- --beam

@pytest.mark.parametrize("argv, beam", [
    (["--beam", "3"], 3),  # the offline policy's beam
    (["--policy", "onlinization", "--beam", "2"], 2),  # onlinization has one too
    (["--beam", "3", "--set", "beam=3"], 3),  # said twice alike
    ([], 1),  # offline's own default
])
def test_beam_sets_the_beam_of_a_policy_that_has_one(tmp_path, splits, fake_decode, argv, beam):
    out = tmp_path / "out.jsonl"
    assert cli.main(["decode", "--model", "cascade_en-es", "--corpus", str(splits),
                     "--out", str(out), *argv]) == 0
    assert fake_decode["policy"].beam == beam


@pytest.mark.parametrize("argv, message", [
    (["--policy", "wait_k_frames", "--beam", "5"],
     "--beam 5: policy wait_k_frames has no beam (it decodes greedily); leave --beam out"),
    (["--beam", "3", "--set", "beam=2"], "--beam 3 and --set beam=2 disagree: give one"),
])
def test_beam_is_refused_where_it_does_not_apply(tmp_path, splits, fake_decode, capsys, argv,
                                                 message):
    out = tmp_path / "out.jsonl"
    assert cli.main(["decode", "--model", "cascade_en-es", "--corpus", str(splits),
                     "--out", str(out), *argv]) == 2
    assert one_line(capsys) == message
    assert fake_decode == {} and not out.exists()


# ---------------------------------------------------------------------------- records

@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return make_tiny_model(tmp_path_factory.mktemp("tiny_decode"), "transformer")


@pytest.fixture
def corpus(tmp_path):
    make_corpus(tmp_path / "corpus" / PAIR)
    return tmp_path / "corpus"


def decode(tiny, corpus, out, *argv) -> int:
    return cli.main(["decode", "--model", str(tiny), "--pair", PAIR, "--corpus", str(corpus),
                     "--split", SPLIT, "--out", str(out), *argv])


def decoded(path) -> list[tuple]:
    """What a decode determines of each record (elapsed times are the machine's)."""
    return [(r.index, r.segment_id, r.prediction, r.delays, r.units, r.settings)
            for r in records_io.read(path)]


def test_an_existing_out_is_replaced_only_when_asked(tiny, corpus, tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    assert decode(tiny, corpus, out, "--max-utterances", "2") == 0
    before = out.read_bytes()
    capsys.readouterr()
    assert decode(tiny, corpus, out) == 2
    assert one_line(capsys) == f"--out {out} exists: --resume continues it, --overwrite replaces it"
    assert decode(tiny, corpus, out, "--resume", "--overwrite") == 2
    assert one_line(capsys).startswith("--resume and --overwrite: give one")
    assert out.read_bytes() == before
    assert decode(tiny, corpus, out, "--overwrite", "--max-utterances", "1") == 0
    assert [r[0] for r in decoded(out)] == [0]


def test_resume_decodes_only_what_the_file_lacks(tiny, corpus, tmp_path, capsys):
    whole = tmp_path / "whole.jsonl"
    assert decode(tiny, corpus, whole) == 0
    out = tmp_path / "r.jsonl"
    assert decode(tiny, corpus, out, "--max-utterances", "2") == 0
    first = out.read_bytes()
    capsys.readouterr()
    assert decode(tiny, corpus, out, "--resume") == 0
    assert f"4 records → {out} (2 of them from before); BLEU" in capsys.readouterr().out
    assert out.read_bytes().startswith(first)  # the records written before are kept as they were
    assert decoded(out) == decoded(whole)
    # a line cut off by a killed process is dropped and its utterance decoded again
    lines = whole.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:2]) + lines[2][:40])
    assert decode(tiny, corpus, out, "--resume") == 0
    assert "its last line was cut off" in capsys.readouterr().err
    assert decoded(out) == decoded(whole)


@pytest.mark.parametrize("argv, message", [
    (["--beam", "2"], "record 1: settings {'beam': 1}, this run's is {'beam': 2}: written with "
                      "other settings"),
    (["--policy", "wait_k_frames"], "record 1: policy 'offline', this run's is "
                                    "'wait_k_frames': written with other settings"),
    (["--max-utterances", "1"], "record 2: segment 'ted_1_1' is not utterance 1 of this run's "
                                "split"),
])
def test_resume_refuses_a_file_written_otherwise(tiny, corpus, tmp_path, capsys, argv, message):
    out = tmp_path / "r.jsonl"
    assert decode(tiny, corpus, out, "--max-utterances", "2") == 0
    before = out.read_bytes()
    capsys.readouterr()
    assert decode(tiny, corpus, out, "--resume", *argv) == 2
    assert one_line(capsys).startswith(f"{out}: {message}")
    assert out.read_bytes() == before


def long_corpus(root: Path, n: int) -> Path:
    """A MuST-C style en-de dev split of ``n`` one-second segments of one talk."""
    rng = np.random.default_rng(0)
    wav, txt = root / PAIR / "data" / SPLIT / "wav", root / PAIR / "data" / SPLIT / "txt"
    wav.mkdir(parents=True)
    txt.mkdir()
    sf.write(wav / "talk.wav", 0.1 * rng.standard_normal(16000 * n).astype(np.float32), 16000)
    (txt / f"{SPLIT}.yaml").write_text("".join(
        f"- {{duration: 1.0, offset: {i}.0, rW: 1, uW: 0, speaker_id: s, wav: talk.wav}}\n"
        for i in range(n)))
    (txt / f"{SPLIT}.en").write_text("".join(f"word {i}\n" for i in range(n)))
    (txt / f"{SPLIT}.de").write_text("".join(f"wort {i}\n" for i in range(n)))
    return root


def test_ctrl_c_keeps_the_finished_records_and_exits_130(tiny, tmp_path):
    n = 400
    corpus = long_corpus(tmp_path / "corpus", n)
    out = tmp_path / "r.jsonl"
    argv = [sys.executable, "-m", "simul", "decode", "--model", str(tiny), "--pair", PAIR,
            "--corpus", str(corpus), "--split", SPLIT, "--out", str(out)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    # a pytest-xdist worker ignores SIGINT, and a child inherits an ignored signal: Python
    # then installs no KeyboardInterrupt handler and the decode runs to its end (exit 0)
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not (out.is_file() and out.read_text().count("\n") >= 2):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and stdout == ""
    kept = records_io.read(out)  # every line a whole record
    assert 2 <= len(kept) < n
    assert [r.index for r in kept] == list(range(len(kept)))
    assert stderr.splitlines()[-1] == (f"simul: interrupted: {len(kept)} finished records kept "
                                       f"in {out} (--resume continues)")
