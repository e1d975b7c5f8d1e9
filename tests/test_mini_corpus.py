"""The built mini corpus under data/mini (what `make test` builds first)."""

import random
import re
import subprocess
import sys

import numpy as np
import pytest
import sacrebleu

from simul.corpus import DEFAULT_ROOT, load_list, manifest
from simul.corpus.mini import translate
from simul.corpus.mini.build import BUILDER_VERSION, HELD_OUT_VARIANTS
from tests.audio_checks import speech_end_ms

pytestmark = pytest.mark.corpus
SPLITS = ("train", "dev", "tst-COMMON", "tst-HE")


@pytest.fixture(scope="module")
def corpus():
    if not (DEFAULT_ROOT / "manifest.json").is_file():
        pytest.fail(f"no corpus at {DEFAULT_ROOT}: run `make corpus` (make test does)")
    manifest.verify(DEFAULT_ROOT, builder_version=BUILDER_VERSION)
    return {s: load_list(DEFAULT_ROOT, "en-es", s, with_audio=False) for s in SPLITS}


def test_sizes(corpus):
    n = {s: len(segs) for s, segs in corpus.items()}
    assert n["train"] >= 10_000
    assert n["dev"] >= 400 and n["tst-COMMON"] >= 400
    assert n["tst-HE"] >= 300


def test_no_sentence_shared_between_splits(corpus):
    seen: dict[str, str] = {}
    for split, segs in corpus.items():
        for s in segs:
            assert s.source not in seen or seen[s.source] == split, s.source
            seen[s.source] = split
        assert len({s.source for s in segs}) == len(segs)


def test_lengths_and_durations(corpus):
    words = np.array([len(s.source.split()) for s in corpus["train"]])
    seconds = np.array([s.duration_ms / 1000 for s in corpus["train"]])
    assert words.min() >= 4 and 30 <= words.max() <= 40
    assert (words >= 25).mean() > 0.05  # a tail of long sentences
    assert 5.0 <= seconds.mean() <= 6.0  # MuST-C-like


def test_tst_he_voices_never_heard_in_train(corpus):
    train = {s.speaker_id.split("_r")[0] for s in corpus["train"]}
    he = {s.speaker_id.split("_r")[0] for s in corpus["tst-HE"]}
    assert len(train) >= 50 and len(he) >= 5
    assert not train & he
    assert all(v.split("+")[1] in HELD_OUT_VARIANTS for v in he)


@pytest.mark.parametrize("split", SPLITS)
def test_oracle_alignments(split):
    """Every source word has a span; spans ordered without overlap; the last word ends with
    the speech (within 100 ms, measured on the waveform)."""
    segs = load_list(DEFAULT_ROOT, "en-es", split)
    sample = random.Random(split).sample(segs, 120)
    for s in sample:
        words = s.alignment.words
        assert [w.text for w in words] == [re.sub(r"[.,?]", "", t) for t in s.source.split()]
        assert all(w.start_ms < w.end_ms for w in words)
        assert all(a.end_ms <= b.start_ms for a, b in zip(words, words[1:], strict=False))
        assert words[-1].end_ms <= s.duration_ms
        assert abs(words[-1].end_ms - speech_end_ms(s.audio)) <= 100, s.id
        phonemes = s.alignment.phonemes
        assert words[0].start_ms == phonemes[0].start_ms
        assert words[-1].end_ms == phonemes[-1].end_ms


@pytest.mark.apertium
@pytest.mark.parametrize(("pair", "lang"), [("en-es", "es"), ("en-pt", "pt")])
def test_target_line_i_is_the_translation_of_source_line_i(pair, lang):
    """Each sampled target is (nearly) the standalone translation of its own source line and
    not of its neighbour's. Not always identical: apertium's tagger carries context along a
    batch, so a word far into a long batch may be tagged differently (near: adj vs adv)."""
    segs = load_list(DEFAULT_ROOT, pair, "tst-COMMON", with_audio=False)
    picks = random.Random(pair).sample(range(len(segs) - 1), 15)
    alone = translate.translate([segs[i].source for i in picks], (lang,))[lang]
    identical = 0
    for i, ref in zip(picks, alone, strict=True):
        own = sacrebleu.sentence_chrf(segs[i].target, [ref]).score
        neighbour = sacrebleu.sentence_chrf(segs[i + 1].target, [ref]).score
        assert own >= 80 and own > neighbour + 30, (segs[i].source, segs[i].target, ref)
        identical += segs[i].target == ref
    assert identical >= len(picks) // 2  # most are word for word the same


def test_cli_info_prints_every_split_and_pair():
    out = subprocess.run([sys.executable, "-m", "simul", "corpus", "info"],
                         capture_output=True, text=True, check=True).stdout
    for pair in ("en-es", "en-pt"):
        for split in SPLITS:
            assert re.search(rf"{pair}\s+{split}\s+\d+", out), (pair, split)
