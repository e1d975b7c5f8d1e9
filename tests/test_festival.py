"""festival synthesis with word and phoneme times from its utterance relations."""

import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

from simul.corpus.mini import festival
from simul.corpus.mini.festival import Festival, FestivalError, FestivalVoice
from tests.audio_checks import speech_end_ms, speech_start_ms

pytestmark = pytest.mark.skipif(shutil.which("festival") is None, reason="no festival")

TEXT = ("Well, the dogs, the cats and the birds ate bread. "
        "Then my brother, who lives in the city, sang a song?")
WORDS = [re.sub(r"[.,?]", "", t) for t in TEXT.split()]


@pytest.fixture(scope="module")
def fest():
    with Festival() as f:
        yield f


@pytest.mark.parametrize("voice", [
    FestivalVoice("kal_diphone"),
    FestivalVoice("ked_diphone", rate=1.2, pitch_cents=300),
    FestivalVoice("cmu_us_slt_arctic_hts", rate=0.85, pitch_cents=-250),
])
def test_word_times_cover_the_speech(fest, voice):
    utt = fest.synthesize(TEXT, voice)
    assert utt.audio.dtype == np.int16 and utt.audio.size > 16000
    assert [w for w, _, _ in utt.words] == WORDS
    assert all(s < e for _, s, e in utt.words)
    assert all(a[2] <= b[1] for a, b in zip(utt.words, utt.words[1:], strict=False))
    assert abs(utt.words[-1][2] - speech_end_ms(utt.audio)) <= 100
    assert utt.words[-1][2] <= utt.duration_ms
    # 10 % of the peak: the diphone voices' leading pause carries a hum at about 3 %
    assert abs(utt.words[0][1] - speech_start_ms(utt.audio, share=0.1)) <= 100
    # phonemes tile each word: the first starts it, the last ends it
    assert utt.phonemes[0][1] == utt.words[0][1] and utt.phonemes[-1][2] == utt.words[-1][2]
    assert "pau" not in {p for p, _, _ in utt.phonemes}


def test_rate_changes_duration_and_pitch_keeps_it(fest):
    base = fest.synthesize(TEXT, FestivalVoice("kal_diphone"))
    fast = fest.synthesize(TEXT, FestivalVoice("kal_diphone", rate=1.2))
    slow_hts = fest.synthesize(TEXT, FestivalVoice("cmu_us_slt_arctic_hts", rate=0.85))
    hts = fest.synthesize(TEXT, FestivalVoice("cmu_us_slt_arctic_hts"))
    # Duration_Stretch = 1/rate scales phone durations (pauses too): ≈ 1/1.2 the length
    assert 0.75 < fast.duration_ms / base.duration_ms < 0.9
    assert 1.1 < slow_hts.duration_ms / hts.duration_ms < 1.3
    high = fest.synthesize(TEXT, FestivalVoice("kal_diphone", pitch_cents=300))
    assert high.audio.size == base.audio.size and high.words == base.words
    assert not np.array_equal(high.audio, base.audio)


def test_pitch_shift_keeps_length_and_timing():
    t = np.arange(16000) / 16000
    audio = np.zeros(16000, np.float32)
    audio[8000:9600] = 0.5 * np.sin(2 * np.pi * 200 * t[8000:9600])  # a 100 ms tone at 0.5 s
    out = festival.pitch_shift(audio, 400)
    assert out.size == audio.size
    loud = np.nonzero(np.abs(out) > 0.05)[0]
    assert abs(loud[0] - 8000) < 160 and abs(loud[-1] - 9600) < 160  # within 10 ms


def test_same_utterance_whatever_was_spoken_before(fest):
    voice = FestivalVoice("cmu_us_slt_arctic_hts", rate=1.1, pitch_cents=100)
    after_others = fest.synthesize(TEXT, voice)
    with Festival() as fresh:
        alone = fresh.synthesize(TEXT, voice)
    assert np.array_equal(after_others.audio, alone.audio) and after_others.words == alone.words


def test_unknown_voice_is_refused(fest):
    with pytest.raises(FestivalError, match="no festival voice 'nosuch'"):
        fest.synthesize("Hello.", FestivalVoice("nosuch"))


def test_a_failure_names_the_text_and_the_voice():
    # an error inside festival (a Scheme form that fails) must end the reply, not hang it
    with Festival() as fest:
        fest._select(FestivalVoice("kal_diphone"))
        fest._call('(define (SynthText x) (error "boom"))')
        with pytest.raises(FestivalError, match=r"festival failed on 'Hello there.' with voice "
                                                r"festival/kal_diphone_r1.00_p\+0"):
            fest.synthesize("Hello there.", FestivalVoice("kal_diphone"))


def test_version_and_process_ends_with_its_owner():
    assert festival.version().startswith("festival: Festival Speech Synthesis System")
    code = ("from simul.corpus.mini.festival import Festival; f = Festival(); "
            "print(f._proc.pid, flush=True)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    pid = int(out.stdout.split()[0])
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    pytest.fail("festival outlived the Python process that started it")


def test_a_phone_in_no_word_goes_to_the_word_before_it():
    # festival's post-lexical rules may add a linking "r" after a word, in no word's syllables
    lines = ["S pau 0.2 0", "S f 0.3 father", "S aa 0.4 father", "S r 0.45 0", "S pau 0.6 0",
             "S d 0.7 dog", "W father 0.2 0.4", "W dog 0.6 0.7", "@@simul-ok"]
    words, phones = festival._parse(lines)
    assert words == (("father", 200.0, 450.0), ("dog", 600.0, 700.0))
    assert phones == (("f", 200.0, 300.0), ("aa", 300.0, 400.0), ("r", 400.0, 450.0),
                      ("d", 600.0, 700.0))


def test_the_closing_pause_is_silence(fest):
    utt = fest.synthesize("When will the bad friend always sing?", FestivalVoice("kal_diphone"))
    end = int(np.ceil(utt.phonemes[-1][2] * 16))
    assert end < utt.audio.size - 1600  # festival's closing pause is there (> 100 ms) ...
    assert not utt.audio[end:].any()  # ... and silent
    assert np.abs(utt.audio[end - 800 : end]).max() > 0  # the last phone is not cut
