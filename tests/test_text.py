"""Simultaneous text translation (simul.decoding.text, the wait_k_text policy): SimulEval 1.1.4's
text-to-text scorers on random text logs, the chunking invariance of a text session, the
wait-k schedule on a tiny MT, delays put on the audio's clock by hand."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from simul.corpus import Alignment, Segment, Word
from simul.decoding.session import StreamError
from simul.decoding.text import TextSession, delays_at_word_ends, simulate_text, source_words
from simul.metrics.latency import SIMULEVAL_METRICS
from simul.metrics.score import score_records
from simul.models.adapters.cascade import TextMT
from simul.policies import make
from simul.records import Record, check
from tests.conftest import CASCADE_CHARS, make_tiny_task_model, tiny_mt_config

N_LOGS = 600


def _random_log(rng: np.random.Generator, index: int) -> dict:
    """One text-to-text instance: |x| source words, a prediction with non-decreasing delays
    in source words (1 … |x|; SimulEval's delays are the words sent when a word is
    written), a reference of its own length."""
    n_src = int(rng.integers(1, 31))
    n_out = int(rng.integers(1, 41))
    delays = np.sort(rng.integers(1, n_src + 1, size=n_out))
    if rng.random() < 0.3:  # the offline case and its neighbours: everything at the end
        delays[rng.integers(0, n_out):] = n_src
    return {"source": [f"s{i}" for i in range(n_src)],
            "prediction": [f"w{i}" for i in range(n_out)],
            "delays": [int(d) for d in delays],
            "reference": " ".join(f"r{i}" for i in range(int(rng.integers(1, 41))))}


def _simuleval_text_scores(logs: list[dict]) -> tuple[dict[str, float], list[dict]]:
    """SimulEval 1.1.4's scores of ``logs`` as TextToTextInstance objects (what its
    text-to-text evaluation scores), corpus and per instance."""
    scorers = pytest.importorskip(
        "simuleval.evaluator.scorers.latency_scorer",
        reason="simuleval 1.1.4 (pip install --no-deps simuleval==1.1.4 textgrid) is not "
               "installed")
    from simuleval.evaluator.instance import TextToTextInstance
    from simuleval.evaluator.scorers.quality_scorer import SacreBLEUScorer

    instances = {}
    for k, log in enumerate(logs):
        ins = TextToTextInstance(k, None, None)
        ins.latency_unit = "word"
        ins.source, ins.reference = log["source"], log["reference"]
        ins.prediction_list = list(log["prediction"])
        ins.delays = list(log["delays"])
        ins.elapsed = [0] * len(log["delays"])
        instances[k] = ins
    corpus = {name: scorers.LATENCY_SCORERS_DICT[name]()(instances)
              for name in SIMULEVAL_METRICS}
    corpus["BLEU"] = SacreBLEUScorer()(instances)
    return corpus, [ins.metrics for ins in instances.values()]


def _record(log: dict, index: int) -> Record:
    return Record(index=index, prediction=" ".join(log["prediction"]),
                  delays=[float(d) for d in log["delays"]], elapsed=[],
                  prediction_length=len(log["prediction"]), reference=log["reference"],
                  source_length=float(len(log["source"])), source=[" ".join(log["source"])],
                  source_type="text")


@pytest.mark.filterwarnings("ignore:The 'warn' method is deprecated:DeprecationWarning")
def test_same_as_simuleval_text_to_text_on_random_logs():
    rng = np.random.default_rng(20261127)
    logs = [_random_log(rng, k) for k in range(N_LOGS)]
    theirs, per_instance = _simuleval_text_scores(logs)
    records = [_record(log, k) for k, log in enumerate(logs)]
    ours = score_records(records)
    assert not any(name.endswith("_CA") for name in ours)  # SimulEval has none for text
    for name in SIMULEVAL_METRICS:
        assert ours[name] == pytest.approx(theirs[name], rel=1e-12, abs=1e-12), name
    assert ours["BLEU"] == theirs["BLEU"]
    # sentence by sentence too (ATD has no per-instance value in SimulEval's metrics)
    for k, rec in enumerate(records):
        one = score_records([rec])
        for name, value in per_instance[k].items():
            assert one[name] == pytest.approx(value, rel=1e-12, abs=1e-12), (k, name)
    # the same records as speech (ms) give another ATD: the text scorer is not the speech one
    as_speech = score_records([dataclasses.replace(r, source_type="speech") for r in records])
    assert as_speech["ATD"] != ours["ATD"]
    assert as_speech["AL"] == ours["AL"]


def test_text_and_speech_records_are_scored_apart():
    text = _record({"source": ["a", "b"], "prediction": ["x"], "delays": [2],
                    "reference": "x"}, 0)
    speech = dataclasses.replace(text, index=1, source_type="speech", source_length=900.0,
                                 delays=[900.0])
    with pytest.raises(ValueError, match="score them apart"):
        score_records([text, speech])
    with pytest.raises(ValueError, match="source_type"):
        check({**dataclasses.asdict(text), "source_type": "video"}, "record 0")
    with pytest.raises(ValueError, match="positive number of source words"):
        check({**dataclasses.asdict(text), "source_length": 0}, "record 0")


# ------------------------------------------------------------------ sessions on a tiny MT


@pytest.fixture(scope="module")
def tiny_mt(tmp_path_factory):
    directory = make_tiny_task_model(tmp_path_factory.mktemp("mt") / "mt", "mt",
                                     tiny_mt_config(CASCADE_CHARS), seed=3)
    return TextMT(directory / "config.yaml", directory / "model.pth")


def _segment(source: str, index: int = 0) -> Segment:
    return Segment(index=index, id=f"seg{index}", talk="t", wav=None, offset_ms=0.0,
                   duration_ms=1000.0, speaker_id="s", source=source, target="ab cd",
                   audio=None, alignment=None)


SOURCES = ["abc de fgh", "a b c d e f g h", "hgf edc ba ab cd ef gh", "abcdefgh"]


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_words_pushed_in_any_groups_give_the_same_record(tiny_mt, k):
    for source in SOURCES:
        words = source.split()
        whole = simulate_text(tiny_mt, make("wait_k_text", {"k": str(k)}), _segment(source))
        for size in (1, 2, 3):
            session = TextSession(tiny_mt, make("wait_k_text", {"k": str(k)}))
            pushed = []
            for i in range(0, len(words), size):
                pushed += session.push(words[i:i + size]).words
            pushed += session.finish().words
            rec = session.record(reference="ab cd", segment_id="seg0", source=[source, "seg0"],
                                 source_text=source)
            assert [w.text for w in pushed] == rec.prediction.split()
            assert [w.delay_ms for w in pushed] == rec.delays
            assert (rec.prediction, rec.delays, rec.units) == (whole.prediction, whole.delays,
                                                               whole.units)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_wait_k_schedule(tiny_mt, k):
    # after W source words at most W − k + 1 target words are complete … and a word is
    # complete once the next one has begun (look-ahead), so every word but those written
    # at the end waits for at least its g(i) = k + i − 1 source words
    for source in SOURCES:
        rec = simulate_text(tiny_mt, make("wait_k_text", {"k": str(k)}), _segment(source))
        check(dataclasses.asdict(rec), "record")
        n = len(source.split())
        assert rec.source_type == "text" and rec.source_length == n and rec.elapsed == []
        for i, d in enumerate(rec.delays, 1):
            assert d == n or d >= k + i - 1, (source, rec.delays)
        assert all(d == int(d) and 1 <= d <= n for d in rec.delays)


def test_k_past_the_source_is_the_offline_translation(tiny_mt):
    for source in SOURCES:
        rec = simulate_text(tiny_mt, make("wait_k_text", {"k": "100"}), _segment(source))
        offline = tiny_mt.translate(source.split(), maxlenratio=2.0)
        assert rec.units == [tiny_mt.token_list[u] for u in offline]
        assert set(rec.delays) <= {float(len(source.split()))}


def test_a_text_session_refuses_bad_input(tiny_mt):
    session = TextSession(tiny_mt, make("wait_k_text", {}))
    with pytest.raises(StreamError, match="one word at a time"):
        session.push(["two words"])
    with pytest.raises(StreamError, match="empty stream"):
        TextSession(tiny_mt, make("wait_k_text", {})).finish()
    with pytest.raises(ValueError, match="runs on"):
        TextSession(tiny_mt, make("wait_k_words", {}))  # a speech policy on a text model


def test_delays_at_word_ends_by_hand():
    words = (Word("Then", 0, 800.0), Word("what", 800.0, 1390.0), Word("happens", 1400.0,
                                                                        2120.0))
    seg = dataclasses.replace(_segment("Then, what happens?"),
                              alignment=Alignment(words=words, phonemes=()))
    assert source_words(seg) == ["Then,", "what", "happens?"]
    rec = dataclasses.replace(_record({"source": ["Then,", "what", "happens?"],
                                       "prediction": ["Dann", "was", "passiert?"],
                                       "delays": [2, 3, 3], "reference": "x"}, 0))
    # word 2 ends at 1390 ms, word 3 at 2120 ms
    assert delays_at_word_ends(rec, seg) == [1390.0, 2120.0, 2120.0]
    with pytest.raises(ValueError, match="already in ms"):
        delays_at_word_ends(dataclasses.replace(rec, source_type="speech"), seg)


# ------------------------------------------------------------------ simul stream --text


@pytest.fixture(scope="module")
def tiny_mt_dir(tmp_path_factory):
    return make_tiny_task_model(tmp_path_factory.mktemp("mt_cli") / "mt", "mt",
                                tiny_mt_config(CASCADE_CHARS), seed=3)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_translate_text_is_the_text_session(tiny_mt, k):
    """A word at a time, as a user's text streams: the record of the whole source pushed at
    once (the same by the chunking invariance above), each word handed over as written."""
    from simul.decoding.text import translate_text

    for source in SOURCES:
        seen = []
        rec = translate_text(tiny_mt, make("wait_k_text", {"k": str(k)}), source,
                             on_word=seen.append)
        whole = simulate_text(tiny_mt, make("wait_k_text", {"k": str(k)}), _segment(source))
        assert (rec.prediction, rec.delays) == (whole.prediction, whole.delays)
        assert [(w.text, w.delay_ms) for w in seen] == list(zip(rec.prediction.split(),
                                                                rec.delays, strict=True))


def test_simul_stream_text_prints_each_word_after_the_words_read(tiny_mt, tiny_mt_dir,
                                                                 tmp_path, capsys):
    from simul.commands import cli

    argv = ["stream", "--model", str(tiny_mt_dir), "--policy", "wait_k_text", "--set", "k=2"]
    assert cli.main([*argv, "--text", "hgf edc ba ab cd ef gh"]) == 0
    captured = capsys.readouterr()
    whole = simulate_text(tiny_mt, make("wait_k_text", {"k": "2"}),
                          _segment("hgf edc ba ab cd ef gh"))
    lines = captured.out.splitlines()
    assert lines[:-2] == [f"{d:4.0f}  {w}" for d, w in zip(whole.delays,
                                                            whole.prediction.split(),
                                                            strict=True)]
    assert lines[-2:] == [f"translation: {whole.prediction}",
                          f"{len(whole.delays)} words from 7 source words"]
    assert "wait_k_text(k=2" in captured.err
    # a file: a sentence a line (blank lines skipped), each its own stream
    (tmp_path / "src.txt").write_text("abc de fgh\n\na b c d e f g h\n")
    assert cli.main([*argv, "--text-file", str(tmp_path / "src.txt")]) == 0
    out = capsys.readouterr().out
    assert out.count("source:      ") == 2 and out.count("translation: ") == 2
    second = simulate_text(tiny_mt, make("wait_k_text", {"k": "2"}), _segment("a b c d e f g h"))
    assert out.splitlines()[-2] == f"translation: {second.prediction}"


@pytest.mark.parametrize(("extra", "fragment"), [
    (["--policy", "wait_k_words", "--text", "a b"],
     "--text: policy 'wait_k_words' runs on speech; text input takes a policy that runs on "
     "text"),
    (["--policy", "wait_k_text", "--text", "  "], "--text: no source words"),
    (["--policy", "wait_k_text", "--text-file", "/nonexistent/src.txt"],
     "--text-file /nonexistent/src.txt: cannot read it"),
])
def test_simul_stream_text_refuses_in_one_line(tiny_mt_dir, capsys, extra, fragment):
    from simul.commands import cli

    assert cli.main(["stream", "--model", str(tiny_mt_dir), *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err, err


def test_simul_stream_text_refuses_a_speech_model(cascade_dir, capsys):
    from simul.commands import cli

    asr = cascade_dir.parent / "asr"
    assert cli.main(["stream", "--model", str(asr), "--policy", "wait_k_text",
                     "--text", "a b"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is task 'asr', not a text MT model" in err, err
    assert cli.main(["stream", "--model", str(cascade_dir), "--policy", "wait_k_text",
                     "--text", "a b"]) == 2
    assert "is a cascade, not a text MT model" in capsys.readouterr().err
