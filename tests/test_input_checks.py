"""Input the models cannot serve is flagged with what it costs (measured:
benchmarks/input_damage.py): a sound file sampled below 16 kHz, clipped or silent gets one
warning line each from ``simul stream --wav``; clean speech gets none. The start-up note
names the model in use and its own measured numbers, or says none are known."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from simul.commands import cli
from simul.decoding import live
from simul.decoding.level import clipped_fraction
from tests.conftest import make_tiny_model


@pytest.mark.parametrize("samples, fraction", [
    ([0.2, 1.0, 1.0, -1.0, -1.0, -1.0, 0.5, 1.0, 0.3], 5 / 9),  # two runs at the rails
    ([0.2, 1.0, 0.3, -1.0, 0.1], 0.0),  # single samples at full scale: peaks
    ([1.0, -1.0, 1.0, -1.0], 0.0),  # from rail to rail: no sample cut flat
    ([0.9995, 0.9991, 0.5, 0.5], 0.5),  # 0.999 and above is at the rail
    ([], 0.0),
])
def test_clipped_fraction_counts_samples_cut_flat(samples, fraction):
    assert clipped_fraction(np.array(samples, np.float32)) == pytest.approx(fraction)


def speech_like(seconds: float = 1.0, rate: int = 16000) -> np.ndarray:
    """A chirp with noise at about the corpus' level: no sample near full scale."""
    rng = np.random.default_rng(0)
    t = np.arange(round(seconds * rate)) / rate
    return (0.3 * np.sin(2 * np.pi * (200 + 300 * t) * t)
            + 0.05 * rng.standard_normal(t.size)).astype(np.float32)


def test_clean_speech_and_other_rates_are_not_warned_about(tmp_path):
    sf.write(tmp_path / "clean.wav", speech_like(), 16000)
    clean = live.read_wav(tmp_path / "clean.wav")
    assert clean.notices == () and clean.damage == ()
    assert live.damage_warnings(clean, "conformer_bpe_en-es") == []
    sf.write(tmp_path / "wide.wav", speech_like(rate=22050), 22050)
    wide = live.read_wav(tmp_path / "wide.wav")
    assert wide.notices == (f"{tmp_path / 'wide.wav'}: 22050 Hz, resampled to 16000 Hz (soxr)",)
    assert wide.damage == ()


def test_narrowband_clipped_and_silent_files_get_one_warning_each(tmp_path):
    # the numbers: benchmarks/input_damage.py (docs/reference/streaming.md)
    measured = ("conformer_bpe_en-es, offline greedy, first 20 tst-COMMON segments: BLEU 73.2 "
                "as built, ")
    narrow = tmp_path / "narrow.wav"
    sf.write(narrow, speech_like(rate=8000), 8000)
    source = live.read_wav(narrow)
    assert source.damage == (("narrowband", 8000.0),)
    assert live.damage_warnings(source, "conformer_bpe_en-es") == [
        f"warning: {narrow}: 8000 Hz: narrowband audio (nothing above 4 kHz), resampled to "
        f"16000 Hz; the models heard 16 kHz speech and translate it much worse ({measured}28.1 "
        "band-limited to 8 kHz; docs/reference/streaming.md)"]
    clipped = tmp_path / "clipped.wav"
    audio = speech_like()
    audio[1000:1100] = 1.0  # 100 of 16,000 samples cut flat: 0.625 %
    sf.write(clipped, audio, 16000, subtype="FLOAT")
    source = live.read_wav(clipped)
    assert source.damage == (("clipped", 0.00625),)
    assert live.damage_warnings(source, "conformer_bpe_en-es") == [
        f"warning: {clipped}: 0.62 % of the samples are clipped (cut flat at full scale): "
        f"distorted speech translates worse ({measured}68.4 with 10 % of the samples clipped, "
        "13.9 with 33 %; docs/reference/streaming.md)"]
    silent = tmp_path / "silent.wav"
    sf.write(silent, np.zeros(16000, np.float32), 16000)
    source = live.read_wav(silent)
    assert source.damage == (("silence", 0.0),)
    assert live.damage_warnings(source, "conformer_bpe_en-es") == [
        f"warning: {silent}: no speech (no 20 ms frame above -70 dBFS): any words written are "
        "made up (conformer_bpe_en-es writes 3.0 words on average for 9.1 s of silence)"]


def test_the_warnings_quote_the_model_in_use_where_it_was_measured(tmp_path):
    sf.write(tmp_path / "narrow.wav", speech_like(rate=8000), 8000)
    source = live.read_wav(tmp_path / "narrow.wav")
    [line] = live.damage_warnings(source, "conformer_bpe_en-de")
    assert line.endswith("(conformer_bpe_en-de, offline greedy, first 20 tst-COMMON segments: "
                         "BLEU 57.7 as built, 18.3 band-limited to 8 kHz; "
                         "docs/reference/streaming.md)")
    [line] = live.damage_warnings(source, "blstm_char_en-pt")  # not measured: the first, named
    assert "(conformer_bpe_en-es, offline greedy, first 20 tst-COMMON segments: BLEU 73.2" in line


def test_stream_says_the_warning_and_the_models_own_numbers(tmp_path, capsys):
    model = make_tiny_model(tmp_path / "tiny", "rnn")
    narrow = tmp_path / "narrow.wav"
    sf.write(narrow, speech_like(rate=8000), 8000)
    assert cli.main(["stream", "--model", str(model), "--policy", "offline", "--wav",
                     str(narrow)]) == 0
    err = capsys.readouterr().err.splitlines()
    # a model directory without metrics.json: no numbers are quoted for it
    assert err[0] == ("note: tiny: no quality by voice is known (its metrics.json has no "
                      "tst-HE/beam1 by synthesizer; simul models eval measures it)")
    assert err[1].startswith(f"warning: {narrow}: 8000 Hz: narrowband audio")


def test_the_start_up_note_names_the_model_in_use():
    assert live.heard_note("conformer_bpe_en-de") == [
        "note: conformer_bpe_en-de has heard two synthesizers (espeak-ng, festival) at the "
        "corpus' level only; other voices, microphones and rooms translate worse",
        "  (conformer_bpe_en-de, offline greedy BLEU from its metrics.json: 18.1 for tst-HE's "
        "festival voice, which its training never heard, against 48.4 for its espeak-ng "
        "speech)"]
    assert live.heard_note("cascade_en-de")[1] == (
        "note: cascade_en-de: no quality by voice is known (its metrics.json has no "
        "tst-HE/beam1 by synthesizer; simul models eval measures it)")
