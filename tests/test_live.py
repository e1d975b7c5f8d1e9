"""``simul stream`` (simul.decoding.live) with a shipped model on the mini corpus: the words and
delays it prints are simulate()'s for the same audio, whatever the source (a segment, a
resampled stereo file), the chunking or the pacing — a file and a microphone through the
level control (``--level auto``, their default), a segment as it is; bad input fails before
anything is printed; Ctrl-C finishes what was heard. The level control itself: causal,
independent of the chunking, bounded, never clipping, bringing quiet speech to the corpus'
level and leaving speech at that level about as it is. And the tutorial's live replay."""

import re
import signal
import sys
import types
from dataclasses import replace

import matplotlib
import numpy as np
import pytest
import soundfile as sf
import soxr

from simul.commands import cli
from simul.corpus import DEFAULT_ROOT, load_list
from simul.decoding import live
from simul.decoding.level import CORPUS_LEVEL_DBFS, LevelControl, soft_limit, speech_level_dbfs
from simul.decoding.session import Session
from simul.decoding.simulate import simulate
from simul.models import loader, registry
from simul.papers import tutorial as tut
from simul.policies import make
from simul.records import Record

matplotlib.use("Agg")

MODEL = "conformer_bpe_en-es"
SEGMENT = "talk_0480_2"  # 5.7 s, the third segment of tst-COMMON
SETTINGS = {"k": "100", "s": "50", "n": "2"}  # wait_k_frames: cheap, writes while reading
POLICY = ["--policy", "wait_k_frames", *[a for k, v in SETTINGS.items()
                                         for a in ("--set", f"{k}={v}")]]
WORD = re.compile(r"^ *(\d+\.\d\d) s  (\S+)(?:  \(lag (-?\d+\.\d\d) s\))?$")
SUMMARY = re.compile(r"^(\d+) words, (\d+\.\d\d) s of source, (\d+\.\d\d) s of compute: "
                     r"real-time factor (\d+\.\d\d)$")


def have_corpus() -> None:
    if not (DEFAULT_ROOT / "manifest.json").is_file():
        pytest.skip(f"no corpus at {DEFAULT_ROOT}: run `make corpus`")


@pytest.fixture(scope="module")
def model():
    if MODEL not in registry.shipped():
        pytest.skip(f"{MODEL} is not shipped (data/models/)")
    return loader.load(MODEL)


@pytest.fixture(scope="module")
def segment():
    have_corpus()
    segments = load_list(DEFAULT_ROOT, "en-es", "tst-COMMON", limit=3)
    return next(s for s in segments if s.id == SEGMENT)


@pytest.fixture
def stream_cli(model, monkeypatch, capsys):
    """``simul stream --model MODEL ARGS``: (exit code, stdout, stderr); the model is
    loaded once for the module."""
    def load(name, device="cpu"):
        assert str(name) == MODEL  # the name, or the record it resolved to
        return model

    monkeypatch.setattr(loader, "load", load)

    def run(*args):
        code = cli.main(["stream", "--model", MODEL, *args])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def printed_words(out: str) -> list[tuple[str, str, str | None]]:
    """(delay s, word, lag s or None) of each word line."""
    return [m.groups() for line in out.splitlines() if (m := WORD.match(line))]


def expected_words(record: Record) -> list[tuple[str, str]]:
    return [(f"{d / 1000:.2f}", w) for d, w in zip(record.delays, record.prediction.split(),
                                                    strict=True)]


@pytest.mark.corpus
@pytest.mark.parametrize("chunk_ms", [None, "370"])
def test_segment_prints_the_simulated_words(stream_cli, model, segment, chunk_ms):
    record = simulate(model, make("wait_k_frames", SETTINGS), segment)
    assert record.prediction_length > 2 and record.delays[0] < record.source_length
    args = ["--chunk-ms", chunk_ms] if chunk_ms else []
    code, out, err = stream_cli(*POLICY, "--segment", SEGMENT, *args)
    assert code == 0, err
    assert [(d, w) for d, w, _ in printed_words(out)] == expected_words(record)
    assert all(lag is None for *_, lag in printed_words(out))  # not paced: no lag
    lines = out.splitlines()
    assert f"translation: {record.prediction}" in lines
    assert f"reference:   {segment.target}" in lines
    summary = SUMMARY.match(lines[-1])
    assert summary, lines[-1]
    assert int(summary[1]) == record.prediction_length
    assert summary[2] == f"{segment.duration_ms / 1000:.2f}"
    assert f"streaming {SEGMENT}" in err
    assert "level:" not in err  # a corpus segment is fed as it is (--level off)


@pytest.mark.corpus
def test_stream_gives_the_exact_delays_of_simulate(model, segment):
    record = simulate(model, make("onlinization", {"chunk_ms": "1000", "beam": "2"}), segment)
    session = Session(model, make("onlinization", {"chunk_ms": "1000", "beam": "2"}),
                      alignment=segment.alignment)
    result = live.stream(session, segment.audio, chunk_ms=230)
    assert [w.text for w in result.words] == record.prediction.split()
    assert [w.delay_ms for w in result.words] == record.delays
    assert result.audio_ms == record.source_length and not result.interrupted
    assert result.rtf == result.compute_ms / result.audio_ms > 0


@pytest.fixture
def stereo_8k(segment, tmp_path):
    """The segment at 8 kHz, in two different channels (their mean is the segment)."""
    audio = soxr.resample(segment.audio, 16000, 8000)
    path = tmp_path / "stereo.wav"
    sf.write(path, np.stack([1.25 * audio, 0.75 * audio], axis=1), 8000, subtype="FLOAT")
    return path


def as_read(path, start_s=0.0, duration_s=None) -> np.ndarray:
    """What simul stream should make of a file: mean of the channels, at 16 kHz."""
    audio, rate = sf.read(path, dtype="float32", always_2d=True)
    start = round(start_s * rate)
    stop = audio.shape[0] if duration_s is None else start + round(duration_s * rate)
    mono = audio[start:stop].mean(axis=1, dtype=np.float32)
    return np.clip(soxr.resample(mono, rate, 16000), -1, 1).astype(np.float32)


def levelled(audio: np.ndarray) -> np.ndarray:
    """``audio`` through a fresh level control, whole (the output does not depend on the
    chunking, see test_level_control_is_causal_and_ignores_the_chunking)."""
    return LevelControl().process(audio)


@pytest.mark.corpus
@pytest.mark.parametrize("level", [None, "off", "auto"])
def test_wav_is_resampled_and_mixed_down(stream_cli, model, segment, stereo_8k, level):
    audio = as_read(stereo_8k) if level == "off" else levelled(as_read(stereo_8k))
    record = simulate(model, make("wait_k_frames", SETTINGS),
                      replace(segment, audio=audio, alignment=None))
    args = ["--level", level] if level else []
    code, out, err = stream_cli(*POLICY, "--wav", str(stereo_8k), *args)
    assert code == 0, err
    assert f"{stereo_8k}: 2 channels, mixed down to mono" in err
    assert (f"warning: {stereo_8k}: 8000 Hz: narrowband audio (nothing above 4 kHz), resampled "
            "to 16000 Hz; the models heard 16 kHz speech") in err  # and what it costs
    assert [(d, w) for d, w, _ in printed_words(out)] == expected_words(record)
    assert "reference:" not in out
    assert ("level: auto" in err) == (level != "off")  # a file is levelled by default
    said = re.search(r"level: speech heard at (-\d+\.\d) dBFS, gain at the end ([+-]\d+\.\d) dB",
                     err)
    assert bool(said) == (level != "off")
    if said:  # the file is the segment at the corpus' level: little to do
        assert abs(float(said[1]) - CORPUS_LEVEL_DBFS) < 4 and abs(float(said[2])) < 4
    assert err.startswith(f"note: {MODEL} has heard two synthesizers")  # live input


@pytest.mark.corpus
def test_realtime_paces_the_input_and_reports_the_lag(stream_cli, model, segment, stereo_8k):
    record = simulate(model, make("wait_k_frames", {"k": "30", "s": "20", "n": "2"}),
                      replace(segment, audio=levelled(as_read(stereo_8k, 1.0, 0.8)),
                              alignment=None))
    code, out, err = stream_cli("--policy", "wait_k_frames", "--set", "k=30", "--set", "s=20",
                                "--set", "n=2", "--wav", str(stereo_8k), "--start", "1",
                                "--duration", "0.8", "--realtime")
    assert code == 0, err
    words = printed_words(out)
    assert [(d, w) for d, w, _ in words] == expected_words(record)
    assert all(lag is not None and float(lag) >= -0.01 for *_, lag in words)
    lines = out.splitlines()
    assert SUMMARY.match(lines[-2]) and SUMMARY.match(lines[-2])[2] == "0.80"
    paced = re.match(r"real time: 0\.80 s of source in (\d+\.\d\d) s of wall time; (.*)$",
                     lines[-1])
    assert paced, lines[-1]
    assert float(paced[1]) >= 0.79  # the input came no faster than speech
    if words:
        worst = max(float(lag) for *_, lag in words)
        assert paced[2].startswith(f"max lag {worst:.2f} s")
    else:
        assert paced[2] == "no words, no lag"
    assert "in real time" in err


@pytest.mark.corpus
def test_ctrl_c_finishes_what_was_heard(model, segment):
    chunk = round(0.37 * 16000)

    def chunks():  # Ctrl-C after 6 chunks (2.22 s): no chunk after it is fed
        for i, a in enumerate(range(0, segment.audio.size, chunk)):
            if i == 6:
                signal.raise_signal(signal.SIGINT)
            yield segment.audio[a : a + chunk]

    told = []
    before = signal.getsignal(signal.SIGINT)  # SIG_IGN under `make test &` in a script
    session = Session(model, make("wait_k_frames", SETTINGS), alignment=segment.alignment)
    result = live.stream(session, chunks(), notice=told.append)
    assert result.interrupted and result.audio_ms == 6 * chunk / 16
    assert told and "finishing the translation of what was heard" in told[0]
    heard = simulate(model, make("wait_k_frames", SETTINGS),
                     replace(segment, audio=segment.audio[: 6 * chunk]))
    assert [w.text for w in result.words] == heard.prediction.split()
    assert [w.delay_ms for w in result.words] == heard.delays
    assert signal.getsignal(signal.SIGINT) is before  # restored


@pytest.mark.corpus
def test_a_fake_microphone_streams_until_its_duration(model, segment, monkeypatch, capsys):
    """--mic through a stand-in for sounddevice that plays the segment at 16 kHz."""
    blocks = []

    class InputStream:
        def __init__(self, *, samplerate, channels, dtype, device, blocksize, callback):
            assert (samplerate, channels, dtype) == (16000, 1, "float32")
            self.callback, self.blocksize = callback, blocksize

        def __enter__(self):
            for a in range(0, segment.audio.size, self.blocksize):
                block = segment.audio[a : a + self.blocksize, None]
                blocks.append(block)
                self.callback(block, len(block), None, None)
            return self

        def __exit__(self, *exc):
            return False

    fake = types.SimpleNamespace(
        PortAudioError=RuntimeError, InputStream=InputStream,
        query_devices=lambda device, kind: {"name": "fake mic", "default_samplerate": 16000},
        check_input_settings=lambda *a, **kw: None)
    monkeypatch.setitem(sys.modules, "sounddevice", fake)
    monkeypatch.setattr(loader, "load", lambda name, device="cpu": model)
    code = cli.main(["stream", "--model", MODEL, *POLICY, "--mic", "--duration", "2"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "microphone: fake mic" in err and "Ctrl-C to stop" in err
    assert err.startswith("\n".join(live.heard_note(MODEL)) + "\n")  # said first
    # the model's own numbers (its metrics.json: tst-HE/beam1 by synthesizer)
    assert ("(conformer_bpe_en-es, offline greedy BLEU from its metrics.json: 26.1 for "
            "tst-HE's festival voice, which its training never heard, against 69.1 for its "
            "espeak-ng speech)") in err
    assert "level: auto" in err
    assert "level: speech heard at" in err
    assert SUMMARY.match(out.splitlines()[-2])[2] == "2.00"  # stopped at --duration
    assert out.splitlines()[-1].startswith("real time: 2.00 s of source")
    assert all(lag is not None for *_, lag in printed_words(out))


@pytest.mark.corpus
def test_a_fake_microphone_is_levelled_as_the_control_does(model, segment, monkeypatch):
    """A quiet microphone (the segment ×0.05) gives the words of the levelled audio, and
    those of the segment as it is with --level off."""
    quiet = (0.05 * segment.audio).astype(np.float32)
    size = round(0.1 * 16000)
    source = live.Source("fake", chunks=lambda stopped: (quiet[a : a + size]
                                                         for a in range(0, quiet.size, size)))
    for level, audio in [("auto", levelled(quiet)), ("off", quiet)]:
        session = Session(model, make("wait_k_frames", SETTINGS))
        result = live.stream(session, source.chunks, level=live.level_control(level, source))
        record = simulate(model, make("wait_k_frames", SETTINGS),
                          replace(segment, audio=audio, alignment=None))
        assert [w.text for w in result.words] == record.prediction.split(), level
        assert [w.delay_ms for w in result.words] == record.delays
        assert (result.level is None) == (level == "off")


def test_mic_without_sounddevice_says_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "sounddevice", None)  # import sounddevice fails
    code = cli.main(["stream", "--model", MODEL, *POLICY, "--mic"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert "sounddevice" in err and "pip install 'simul[live]'" in err


def test_bad_input_fails_before_anything_is_printed(tmp_path, capsys):
    text = tmp_path / "notes.wav"
    text.write_text("not audio\n")
    quiet = tmp_path / "quiet.wav"
    sf.write(quiet, np.zeros(8000, np.float32), 16000)
    cases = [
        (["--wav", str(tmp_path / "missing.wav")], f"{tmp_path / 'missing.wav'}: no such file"),
        (["--wav", str(text)], f"{text}: not an audio file"),
        (["--wav", str(quiet), "--start", "2"], f"{quiet} lasts 0.50 s: --start 2 is past"),
        (["--wav", str(quiet), "--chunk-ms", "0"], "--chunk-ms must be > 0"),
        (["--wav", str(quiet), "--set", "k"], "--set expects KEY=VALUE"),
        (["--wav", str(quiet), "--policy", "nope"], "unknown policy 'nope'"),
    ]
    for args, message in cases:
        code = cli.main(["stream", "--model", MODEL, *POLICY, *args])
        out, err = capsys.readouterr()
        assert code == 2 and out == "", args
        assert message in err, (args, err)


def test_level_option_parses_and_refuses_other_values(capsys):
    parser = cli.build_parser()
    base = ["stream", "--model", MODEL, "--policy", "offline"]
    assert parser.parse_args([*base, "--wav", "a.wav"]).level is None  # by the source
    assert parser.parse_args([*base, "--mic", "--level", "off"]).level == "off"
    assert parser.parse_args([*base, "--segment", SEGMENT, "--level", "auto"]).level == "auto"
    with pytest.raises(SystemExit) as e:
        cli.main([*base, "--wav", "a.wav", "--level", "loud"])
    assert e.value.code == 2
    assert "invalid choice: 'loud'" in capsys.readouterr().err
    wav, corpus = live.Source("a.wav", audio=np.zeros(1)), live.Source("x", from_corpus=True)
    assert isinstance(live.level_control(None, wav), LevelControl)
    assert live.level_control(None, corpus) is None
    assert live.level_control("off", wav) is None
    assert isinstance(live.level_control("auto", corpus), LevelControl)
    with pytest.raises(live.LiveError, match="--level must be one of auto, off"):
        live.level_control("loud", wav)


@pytest.mark.corpus
def test_unknown_segment_is_named(capsys):
    have_corpus()
    code = cli.main(["stream", "--model", MODEL, *POLICY, "--segment", "talk_0480_999"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert "segment 'talk_0480_999' is not in" in err and "tst-COMMON" in err
    code = cli.main(["stream", "--model", MODEL, *POLICY, "--segment", SEGMENT,
                     "--start", "1"])
    assert code == 2 and "a --segment is streamed whole" in capsys.readouterr().err


# ---------------------------------------------------------------------------- level control

def through(control: LevelControl, audio: np.ndarray, chunk: int) -> np.ndarray:
    return np.concatenate([control.process(audio[a : a + chunk])
                           for a in range(0, audio.size, chunk)])


def test_level_control_is_causal_and_ignores_the_chunking():
    rng = np.random.default_rng(0)
    t = np.arange(4 * 16000) / 16000
    quiet = (0.01 * np.sin(2 * np.pi * 220 * t) * (np.sin(2 * np.pi * 1.5 * t) > 0)
             + 1e-4 * rng.standard_normal(t.size)).astype(np.float32)
    whole = LevelControl().process(quiet)
    assert LevelControl().gain_db == 0.0
    for chunk in (1, 37, 320, 1600, 5000):  # samples: the output is the same, exactly
        assert np.array_equal(through(LevelControl(), quiet, chunk), whole), chunk
    heard = 2 * 16000 + 123  # not on a frame boundary
    changed = quiet.copy()
    changed[heard:] = rng.uniform(-1, 1, changed.size - heard)  # a loud noise from then
    control = LevelControl()
    first = through(control, changed[:heard], 1600)
    assert np.array_equal(first, whole[:heard])  # what came before did not change
    rest = control.process(changed[heard:])
    assert not np.array_equal(rest, whole[heard:])
    assert np.abs(rest).max() <= 1.0  # the burst, raised by the gain, does not clip


@pytest.mark.corpus
def test_level_control_brings_quiet_speech_to_the_corpus_level(segment):
    quiet = (0.05 * segment.audio).astype(np.float32)  # 26 dB below
    assert speech_level_dbfs(quiet) < CORPUS_LEVEL_DBFS - 20
    control = LevelControl()
    out = through(control, quiet, 1600)
    assert abs(speech_level_dbfs(out) - CORPUS_LEVEL_DBFS) < 3
    second_half = out[out.size // 2 :]
    assert abs(speech_level_dbfs(second_half) - CORPUS_LEVEL_DBFS) < 3
    assert abs(control.speech_dbfs - speech_level_dbfs(quiet)) < 3
    assert 20 < control.gain_db <= control.max_gain_db
    assert np.abs(out).max() <= 1.0


@pytest.mark.corpus
def test_level_control_is_about_the_identity_at_the_corpus_level(segment):
    at_target = segment.audio * 10 ** ((CORPUS_LEVEL_DBFS
                                        - speech_level_dbfs(segment.audio)) / 20)
    at_target = np.clip(at_target, -1, 1).astype(np.float32)
    assert abs(speech_level_dbfs(at_target) - CORPUS_LEVEL_DBFS) < 0.5
    out = through(LevelControl(), at_target, 1600)
    assert abs(speech_level_dbfs(out) - speech_level_dbfs(at_target)) < 1.5
    heard = np.abs(at_target) > 1e-3
    gain_db = 20 * np.log10(np.abs(out[heard]) / np.abs(at_target[heard]))
    assert np.all(np.abs(gain_db) < 2), (gain_db.min(), gain_db.max())


@pytest.mark.corpus
def test_level_control_bounds_its_gain_and_never_clips(segment):
    faint = (0.003 * segment.audio).astype(np.float32)  # 50 dB below: more than it may add
    control = LevelControl(max_gain_db=30.0)
    out = through(control, faint, 1600)
    assert control.gain_db == pytest.approx(30.0)
    assert np.all(np.abs(out) <= np.abs(faint) * 10 ** (30 / 20) * (1 + 1e-5))
    assert speech_level_dbfs(out) < CORPUS_LEVEL_DBFS - 15
    loud = np.clip(4.0 * segment.audio, -1, 1).astype(np.float32)  # clipped, 12 dB over
    control = LevelControl(target_dbfs=-40.0, max_cut_db=6.0)
    out = through(control, loud, 1600)
    assert control.gain_db == pytest.approx(-6.0)
    assert np.all(np.abs(out) >= np.abs(loud) * 10 ** (-6 / 20) * (1 - 1e-5) - 0.1)
    # silence, then noise: no speech, the gain stays at 0 dB; then quiet speech raises it
    # and a sudden full-scale burst after it is bent below ±1, not clipped
    rng = np.random.default_rng(1)
    control = LevelControl()
    noise = (1e-5 * rng.standard_normal(16000)).astype(np.float32)
    assert np.array_equal(control.process(np.zeros(8000, np.float32)), np.zeros(8000))
    assert np.array_equal(control.process(noise), noise) and control.gain_db == 0.0
    assert control.speech_dbfs is None
    through(control, (0.01 * segment.audio).astype(np.float32), 1600)
    assert control.gain_db > 20
    burst = control.process(rng.uniform(-1, 1, 16000).astype(np.float32))
    assert np.abs(burst).max() <= 1.0 and np.abs(burst).max() > 0.9
    kept = np.array([0.5, -0.9], np.float32)
    assert np.array_equal(soft_limit(kept), kept)
    assert np.all(np.abs(soft_limit(np.array([1e6, -3.0, 0.95], np.float32))) <= 1.0)


# ---------------------------------------------------------------------------- live replay

WORDS = [("hola", 300.0), ("mundo", 800.0), ("<b>!</b>", 800.0)]


@pytest.fixture
def displayed(monkeypatch):
    """What live_replay displays (IPython.display.display, recorded)."""
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    return shown


def texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def test_replay_outside_a_notebook_draws_the_static_timeline(displayed):
    audio = np.sin(np.arange(16000) / 5).astype(np.float32) * 0.3
    assert not tut.interactive_frontend()
    fig = tut.live_replay(audio, WORDS, title="replay")
    assert displayed == []  # no player without a frontend that runs it
    assert texts(fig) == ["hola", "mundo <b>!</b>"]  # one row per write
    assert "source time (s)" in fig.axes[1].get_xlabel()
    assert fig.axes[0].get_xlim()[1] >= 1.0  # the whole second of audio


def test_replay_in_an_interactive_notebook_adds_the_player(displayed, monkeypatch):
    import IPython

    kernel = types.SimpleNamespace(_allow_stdin=True)  # JupyterLab; papermill sends False
    monkeypatch.setattr(IPython, "get_ipython", lambda: types.SimpleNamespace(kernel=kernel))
    assert tut.interactive_frontend()
    fig = tut.live_replay(np.zeros(16000, np.float32), WORDS)
    assert texts(fig) == ["hola", "mundo <b>!</b>"]
    (player,) = displayed
    html = player.data
    assert '<audio controls' in html and "data:audio/wav;base64," in html
    assert re.findall(r'data-t="([\d.]+)"', html) == ["0.300", "0.800", "0.800"]
    assert "&lt;b&gt;!&lt;/b&gt;" in html and "<b>!</b>" not in html
    kernel._allow_stdin = False  # a batch run: the figure only
    assert not tut.interactive_frontend()


def test_replay_takes_a_record_or_stream_words():
    record = Record(index=0, prediction="hola mundo", delays=[300.0, 800.0],
                    elapsed=[310.0, 820.0], prediction_length=2, reference="", source_length=1000.0,
                    source=[], units=["▁hola", "▁mundo"])
    shown = [live.Shown("hola", 300.0, 310.0, 350.0), live.Shown("mundo", 800.0, 820.0, 900.0)]
    assert tut.timed_words(record) == tut.timed_words(shown) == [("hola", 300.0),
                                                                 ("mundo", 800.0)]
    with pytest.raises(ValueError, match="2 words but 1 delays"):
        tut.timed_words(replace(record, delays=[300.0]))


def test_corpus_simuleval_export(tmp_path, capsys):
    have_corpus()
    out = tmp_path / "sev"
    assert cli.main(["corpus", "simuleval", "--max-utterances", "3", "--out", str(out)]) == 0
    segments = load_list(DEFAULT_ROOT, "en-es", "tst-COMMON", limit=3)
    wavs = out.joinpath("source.txt").read_text().splitlines()
    assert [w.rsplit("/", 1)[1] for w in wavs] == [f"{s.id}.wav" for s in segments]
    assert out.joinpath("target.txt").read_text().splitlines() == [s.target for s in segments]
    audio, rate = sf.read(wavs[0], dtype="float32")
    assert rate == 16000 and np.array_equal(audio, segments[0].audio)  # float: exact
    from simul.corpus import CorpusError, export_simuleval
    with pytest.raises(CorpusError, match="no segment 'nope'"):
        export_simuleval(DEFAULT_ROOT, "en-es", "tst-COMMON", tmp_path / "bad", ids=["nope"])
    assert not (tmp_path / "bad").exists() and len(list(tmp_path.iterdir())) == 1
