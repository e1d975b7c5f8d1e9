"""Rooms, noise and level (simul.corpus.acoustics, conditions; simul.models.training.augment).

The mixing is checked against ESPnet's own preprocessor, which mixes while training: a test
condition must mean what the same words mean in a training recipe."""

import numpy as np
import pytest
import soundfile as sf

from simul.corpus import acoustics, conditions
from simul.corpus.mustc import CorpusError
from simul.models.training import augment


def _speech(seconds=2.0, seed=0):
    """A speech-like test signal: tone bursts with pauses (some frames silent)."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(16000 * seconds)) / 16000
    envelope = (np.sin(2 * np.pi * 1.5 * t) > 0).astype(float)
    return envelope * (0.3 * np.sin(2 * np.pi * 220 * t) + 0.05 * rng.standard_normal(len(t)))


def _preprocessor():
    from simul.models.espnet_env import import_espnet

    return import_espnet("espnet2.train.preprocessor")


def _espnet(tmp_path, **kw):
    return _preprocessor().CommonPreprocessor(train=True, **kw)


@pytest.mark.parametrize("n", [500, 1024, 1500, 16000, 16384 + 77])
def test_non_silent_samples_are_espnets(n):
    x = _speech(n / 16000 + 0.001)[:n]
    x[: n // 3] *= 1e-3  # a quiet start
    expected = _preprocessor().detect_non_silence(x[None, :])[0]
    assert np.array_equal(acoustics.non_silent(x), expected)
    assert np.array_equal(acoustics.non_silent(np.zeros(n)), np.ones(n, dtype=bool))


@pytest.mark.slow
@pytest.mark.parametrize("rt60", [0.3, 0.6])
def test_a_rooms_measured_rt60_is_the_one_asked_for(rt60):
    room = acoustics.make_room(rt60, acoustics.rng_for("test", rt60))
    assert abs(room.measured_rt60 - rt60) <= 0.05 * rt60
    assert abs(acoustics.measure_rt60(room.rir) - room.measured_rt60) < 1e-9
    again = acoustics.make_room(rt60, acoustics.rng_for("test", rt60))
    assert np.array_equal(room.rir, again.rir)  # the same seed, the same room


def test_reverberation_is_espnets(tmp_path):
    rng = np.random.default_rng(1)
    rir = np.exp(-np.arange(3000) / 400.0) * rng.standard_normal(3000)
    sf.write(tmp_path / "r.wav", rir.astype(np.float32), 16000, subtype="FLOAT")
    rir = sf.read(tmp_path / "r.wav", dtype="float64")[0]  # what ESPnet reads
    speech = _speech()
    pre = _espnet(tmp_path, rir_scp=None)
    power = acoustics.speech_power(speech)
    expected, _ = pre._convolve_rir(speech[None, :], power, [str(tmp_path / "r.wav")])
    assert np.allclose(acoustics.reverberate(speech, rir), expected[0], atol=1e-9)


def test_noise_at_an_snr_is_espnets(tmp_path):
    speech = _speech()
    noise = acoustics.coloured_noise(1.0, len(speech), np.random.default_rng(2))
    sf.write(tmp_path / "n.wav", noise, 16000, subtype="DOUBLE")
    pre = _espnet(tmp_path)
    pre.short_noise_thres = 0.5
    power = acoustics.speech_power(speech)
    expected, _ = pre._add_noise(speech[None, :], power, [str(tmp_path / "n.wav")], 10.0, 10.0)
    assert np.allclose(acoustics.add_noise(speech, noise, 10.0), expected[0], atol=1e-9)


def test_snr_by_hand():
    """Noise power 1/10 of the speech's non-silent power is 10 dB SNR."""
    speech = _speech()
    noise = np.random.default_rng(3).standard_normal(len(speech))
    mixed = acoustics.add_noise(speech, noise, 10.0)
    added = mixed - speech
    assert np.mean(added**2) == pytest.approx(acoustics.speech_power(speech) / 10, rel=1e-9)


@pytest.mark.parametrize("name,beta", list(acoustics.COLOURS.items()))
def test_coloured_noise_falls_as_one_over_f_to_the_beta(name, beta):
    noise = acoustics.coloured_noise(beta, 2**16, np.random.default_rng(4))
    assert abs(noise.mean()) < 1e-9 and noise.std() == pytest.approx(1.0)
    power = np.abs(np.fft.rfft(noise)) ** 2
    f = np.fft.rfftfreq(len(noise))
    band = (f > 0.001) & (f < 0.4)
    slope = np.polyfit(np.log(f[band]), np.log(power[band]), 1)[0]
    assert slope == pytest.approx(-beta, abs=0.1)


def test_babble_sums_talkers_at_equal_power():
    a, b = np.ones(100), 3 * np.ones(50)
    out = acoustics.babble([np.r_[a, -a], np.r_[b, -b]], 400, np.random.default_rng(0),
                           talkers=2)
    assert len(out) == 400 and out.std() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="at least 5"):
        acoustics.babble([a], 10, np.random.default_rng(0))


def test_split_conditions():
    assert conditions.split_condition("tst-COMMON") == ("tst-COMMON", None)
    base, cond = conditions.split_condition("tst-COMMON@gain=-20")
    assert base == "tst-COMMON" and cond == conditions.Condition("gain", -20.0)
    assert cond.label == "gain=-20"
    for bad in ("tst-COMMON@loud", "tst-COMMON@snr=x", "tst-COMMON@rt60=7", "dev@hum=3"):
        with pytest.raises(CorpusError, match="split"):
            conditions.split_condition(bad)
    for item in conditions.ROBUSTNESS:
        conditions.Condition.parse(item)


def test_gain_condition_by_hand():
    audio = np.array([0.5, -0.25, 0.1], dtype=np.float32)
    out = conditions.Condition("gain", -20.0).apply(audio, "x")
    assert np.allclose(out, audio * 0.1)
    assert out.dtype == np.float32


def test_noise_condition_is_the_same_for_a_segment_and_differs_between_segments():
    speech = _speech().astype(np.float32)
    pool = lambda: [_speech(seed=i) for i in range(6)]  # noqa: E731
    cond = conditions.Condition("snr", 5.0)
    one, again, other = (cond.apply(speech, sid, pool) for sid in ("s1", "s1", "s2"))
    assert np.array_equal(one, again)
    assert not np.array_equal(one, other)
    noise = one.astype(np.float64) - speech
    snr = 10 * np.log10(acoustics.speech_power(speech) / np.mean(noise**2))
    assert snr == pytest.approx(5.0, abs=0.01)
    louder = conditions.Condition("snr", 15.0).apply(speech, "s1", pool) - speech
    assert np.allclose(louder, noise * 10 ** (-10 / 20), atol=1e-6)  # the same noise, 10 dB down


def test_augment_spec_and_gains():
    aug = augment.spec({}, "r")
    assert aug == augment.DEFAULTS
    assert augment.spec(None, "r") is None
    for bad, key in (({"rt60": [1.0, 0.2]}, "rt60"), ({"rir_prob": 2}, "rir_prob"),
                     ({"rooms": -1}, "rooms"), ({"colour": 3}, "colour")):
        with pytest.raises(ValueError, match=f"simul.augment.{key}"):
            augment.spec(bad, "r")
    gains = [augment.gain_db(aug, f"sp0.9-train_{i:06d}") for i in range(200)]
    assert gains == [augment.gain_db(aug, f"sp0.9-train_{i:06d}") for i in range(200)]
    assert min(gains) >= -40 and max(gains) <= 6 and max(gains) - min(gains) > 40
    assert augment.gain_db(None, "x") == 0.0


def test_augment_prepare_writes_what_espnet_reads(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMUL_CACHE", str(tmp_path / "cache"))
    wavs = []
    for i in range(6):
        sf.write(tmp_path / f"u{i}.wav", _speech(1.0, seed=i).astype(np.float32), 16000)
        wavs.append(f"u{i} {tmp_path / f'u{i}.wav'}\n")
    (tmp_path / "wav.scp").write_text("".join(wavs))
    aug = augment.spec({"rooms": 2, "rt60": [0.2, 0.3], "babble": 1, "coloured": 2,
                        "noise_seconds": 2}, "r")
    conf = augment.prepare(aug, tmp_path / "aug", tmp_path / "wav.scp", progress=False)
    assert conf["noise_db_range"] == "0_30" and conf["rir_apply_prob"] == 0.5
    pre = _espnet(tmp_path, rir_scp=conf["rir_scp"], noise_scp=conf["noise_scp"],
                  noise_db_range=conf["noise_db_range"])
    assert len(pre.rirs) == 2 and len(pre.noises) == 3
    assert all(p.startswith(str(tmp_path / "cache" / "rooms")) for p in pre.rirs)
    for path in pre.rirs:
        rir = sf.read(path)[0]
        assert 0.19 <= acoustics.measure_rt60(rir) <= 0.315
    again = augment.prepare(aug, tmp_path / "aug2", tmp_path / "wav.scp", progress=False)
    again_noises = _espnet(tmp_path, noise_scp=again["noise_scp"]).noises
    for a, b in zip(pre.noises, again_noises, strict=True):
        assert np.array_equal(sf.read(a)[0], sf.read(b)[0])


def test_hearing_without_rooms_or_noise_is_the_level_alone(tmp_path):
    aug = augment.spec({"rooms": 0, "babble": 0, "coloured": 0, "gain_db": [-20, -20]}, "r")
    (tmp_path / "wav.scp").write_text("")
    hear = augment.Hearing(aug, augment.prepare(aug, tmp_path / "aug", tmp_path / "wav.scp",
                                                progress=False))
    x = _speech(1.0)
    out = hear(x, "talk.wav@0", seed=3)
    assert out.dtype == np.float32 and out.shape == x.shape
    np.testing.assert_allclose(out, 0.1 * x, rtol=1e-6, atol=1e-7)  # −20 dB: a tenth


def test_hearing_draws_rooms_and_noise_from_its_seed_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMUL_CACHE", str(tmp_path / "cache"))
    (tmp_path / "wav.scp").write_text("")
    aug = augment.spec({"rooms": 2, "rt60": [0.2, 0.3], "rir_prob": 1.0, "babble": 0,
                        "coloured": 2, "noise_seconds": 2, "noise_prob": 1.0,
                        "gain_db": None}, "r")
    hear = augment.Hearing(aug, augment.prepare(aug, tmp_path / "aug", tmp_path / "wav.scp",
                                                progress=False))
    x = _speech(1.5)
    np.random.seed(123)
    before = np.random.get_state()[1].copy()
    a = hear(x, "k", seed=7)
    assert np.array_equal(np.random.get_state()[1], before)  # NumPy's global draws untouched
    assert a.shape == x.shape and not np.allclose(a, x, atol=1e-3)
    assert np.array_equal(hear(x, "k", seed=7), a)
    assert not np.array_equal(hear(x, "k", seed=8), a)


def test_augment_leaves_another_runs_room_in_progress_alone(tmp_path, monkeypatch):
    """Two runs at once may simulate the same shared room: each writes its own temporary file
    (it used to be one name, which the second writer truncated under the first)."""
    monkeypatch.setenv("SIMUL_CACHE", str(tmp_path / "cache"))
    aug = augment.spec({"rooms": 1, "rt60": [0.2, 0.3], "babble": 0, "coloured": 0}, "r")
    rooms = augment.rooms_dir() / "train-seed0-rt60=0.2-0.3"
    rooms.mkdir(parents=True)
    others = [rooms / "room0000.tmp.wav", rooms / "room0000.tmp1.wav"]  # another run's
    for other in others:
        other.write_bytes(b"half a room")
    (tmp_path / "wav.scp").write_text("")
    augment.prepare(aug, tmp_path / "aug", tmp_path / "wav.scp", progress=False)
    assert [other.read_bytes() for other in others] == [b"half a room"] * 2
    rir = sf.read(rooms / "room0000.wav")[0]
    assert 0.19 <= acoustics.measure_rt60(rir) <= 0.315
    assert sorted(p.name for p in rooms.iterdir()) == sorted(
        ["room0000.wav", *(other.name for other in others)])


def test_a_card_says_how_the_speech_was_augmented():
    from simul.zoo.card import _augmentation_line

    aug = {"speed_perturb": [0.9, 1.0, 1.1], **augment.spec({"rooms": 50}, "r")}
    (line,) = _augmentation_line({"augmentation": aug})
    assert line == ("- augmentation (simul.augment, seed 0): speed 0.9 / 1 / 1.1; a level per "
                    "copy over -40 to +6 dB; 50 simulated rooms, RT60 0.2–1 s (50% of reads); "
                    "noise (20 babble, 12 coloured) at 0–30 dB SNR (50% of reads)")
    # simul meta-train has no speed copies: a level is drawn each time an example is read
    (line,) = _augmentation_line({"augmentation": {**aug, "speed_perturb": None}})
    assert line.startswith("- augmentation (simul.augment, seed 0): a level per read over -40")
    assert _augmentation_line({"augmentation": {"speed_perturb": None}}) == [
        "- augmentation: none (the corpus speech as is)"]
    assert _augmentation_line({}) == []


@pytest.mark.corpus
def test_a_conditioned_split_is_its_split_heard_under_the_condition():
    from simul.corpus import DEFAULT_ROOT, find_split_dir, load_list

    clean = load_list(DEFAULT_ROOT, "en-de", "tst-COMMON", limit=2)
    quiet = load_list(DEFAULT_ROOT, "en-de", "tst-COMMON@gain=-20", limit=2)
    assert [s.id for s in quiet] == [s.id for s in clean]
    for a, b in zip(clean, quiet, strict=True):
        assert np.allclose(b.audio, a.audio * 0.1, atol=1e-7) and a.target == b.target
    noisy = load_list(DEFAULT_ROOT, "en-de", "tst-COMMON@snr=5", limit=2)
    again = load_list(DEFAULT_ROOT, "en-es", "tst-COMMON@snr=5", limit=2)  # same audio
    assert all(np.array_equal(a.audio, b.audio) for a, b in zip(noisy, again, strict=True))
    assert find_split_dir(DEFAULT_ROOT, "en-de", "tst-COMMON@rt60=0.6") == find_split_dir(
        DEFAULT_ROOT, "en-de", "tst-COMMON")
    with pytest.raises(CorpusError, match="condition"):
        find_split_dir(DEFAULT_ROOT, "en-de", "tst-COMMON@rt60")


def test_the_robustness_table_divides_by_clean_bleu_and_marks_the_bars():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[1] / "benchmarks" / "robustness.py"
    spec = importlib.util.spec_from_file_location("robustness", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    row = {"model": "m", "tst-COMMON": 50.0, "tst-COMMON@snr=10": 45.0,
           "tst-COMMON@gain=-30": 30.0, "tst-COMMON (voices)": 40.0, "tst-HE (voices)": 36.0,
           "seconds": 1.0}
    (shown,) = bench.table([row]).to_dict("records")
    assert shown == {"model": "m", "tst-COMMON": 50.0, "snr=10": "0.90",  # bar 0.8: met
                     "gain=-30": "0.60 ✗",  # bar 0.7: missed
                     "tst-HE": "0.90"}  # 36 / 40, the whole splits (36 / 50 would miss 0.85)


def test_the_robustness_voices_ratio_from_a_card_is_the_cards_and_refused_without_it(tmp_path):
    import importlib.util
    import json
    from pathlib import Path

    from simul.corpus.built import pair_version

    path = Path(__file__).parents[1] / "benchmarks" / "robustness.py"
    spec = importlib.util.spec_from_file_location("robustness", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    model = tmp_path / "m"
    model.mkdir()
    (model / "simul.json").write_text(json.dumps(
        {"pair": "en-de", "task": "st", "corpus_builder_version": pair_version("en-de")}))
    (model / "metrics.json").write_text(json.dumps({"tst-COMMON/beam1": {"bleu": 47.01}}))
    with pytest.raises(ValueError, match=r"metrics\.json: no tst-HE/beam1"):
        bench.from_card(str(model))
    (model / "metrics.json").write_text(json.dumps(
        {"tst-COMMON/beam1": {"bleu": 47.01}, "tst-COMMON/beam5": {"bleu": 50.0},
         "tst-HE/beam1": {"bleu": 42.5}}))
    assert bench.from_card(str(model)) == {"tst-COMMON (voices)": 47.01,
                                           "tst-HE (voices)": 42.5}
    (model / "simul.json").write_text(json.dumps(
        {"pair": "en-de", "task": "st", "corpus_builder_version": pair_version("en-de") - 1}))
    with pytest.raises(ValueError, match="older corpus"):
        bench.from_card(str(model))
