"""The built mini corpus under data/mini (what `make test` builds first)."""

import random
import re
import subprocess
import sys

import numpy as np
import pytest
import sacrebleu
import yaml

from simul.corpus import DEFAULT_ROOT, load_list, manifest, mustc, stats
from simul.corpus.mini import build, translate
from simul.corpus.mini.build import BUILDER_VERSION, HELD_OUT_VARIANTS
from tests.audio_checks import speech_end_ms

pytestmark = pytest.mark.corpus
SPLITS = ("train", "dev", "tst-COMMON", "tst-HE")
#: The splits `make test` speaks; train has its text only until training needs its speech.
SPOKEN = build.EVAL_SPLITS


@pytest.fixture(scope="module")
def corpus():
    if not (DEFAULT_ROOT / "manifest.json").is_file():
        pytest.fail(f"no corpus at {DEFAULT_ROOT}: run `make corpus` (make test does)")
    manifest.verify(DEFAULT_ROOT, builder_version=BUILDER_VERSION)
    return {s: load_list(DEFAULT_ROOT, "en-es", s, with_audio=False) for s in SPOKEN}


@pytest.fixture(scope="module")
def texts(corpus):
    """Every split's (sources, targets), train's included: its text is there unspoken."""
    return {s: mustc.read_texts(DEFAULT_ROOT, "en-es", s) for s in SPLITS}


def test_sizes(texts):
    n = {s: len(sources) for s, (sources, _) in texts.items()}
    assert n["train"] >= 10_000
    assert n["dev"] >= 400 and n["tst-COMMON"] >= 400
    assert n["tst-HE"] >= 300


def test_no_sentence_shared_between_splits(texts):
    seen: dict[str, str] = {}
    for split, (sources, _) in texts.items():
        for source in sources:
            for sentence in re.findall(r"[^.?]+[.?]", source):
                assert sentence.strip() not in seen, sentence
                seen[sentence.strip()] = split
        assert len(set(sources)) == len(sources)


def test_lengths_and_durations(corpus, texts):
    """MuST-C-like: mean 5–8 s, a tail past 15 s, nothing above 30 s."""
    for split in SPOKEN:
        seconds = np.array([s.duration_ms / 1000 for s in corpus[split]])
        assert 5.0 <= seconds.mean() <= 8.0, split
        assert seconds.max() <= 30.0, split
    seconds = np.array([s.duration_ms / 1000 for split in SPOKEN for s in corpus[split]])
    assert (seconds >= 12).mean() > 0.01 and seconds.max() >= 15  # a tail of long segments
    for split, (sources, _) in texts.items():
        words = np.array([len(source.split()) for source in sources])
        assert words.min() >= 4 and words.max() <= 40, split


def test_segments_of_several_sentences_with_inner_punctuation(texts):
    for split, (sources, targets) in texts.items():
        n_sent = [stats.sentences(source) for source in sources]
        share = {k: n_sent.count(k) / len(n_sent) for k in (1, 2, 3)}
        assert set(n_sent) == {1, 2, 3}, split
        assert 0.4 <= share[1] <= 0.6 and 0.23 <= share[2] <= 0.43, (split, share)
        for source, target in zip(sources, targets, strict=True):
            # a target has as many sentence ends as its source
            assert stats.sentences(target) == stats.sentences(source), (source, target)
        inner = np.mean([stats.inner_punctuation(target) for target in targets])
        assert inner >= 0.6, split
    commas = np.mean(["," in target for target in texts["train"][1]])
    assert commas >= 0.3


def _yaml_entries(split):
    path = DEFAULT_ROOT / "en-es" / "data" / split / "txt" / f"{split}.yaml"
    return yaml.load(path.read_text(), Loader=yaml.CSafeLoader)


def test_who_speaks_what(texts):
    """Both engines in every split (festival about a third of train's talks); dev and
    tst-COMMON with voices heard in train; tst-HE with voices never heard in train. Train's
    voices are those of its talk plan, which depends on the seed and the number of segments
    per split alone (not their text: the spoken splits' yaml name the plan's voices)."""
    found = manifest.read(DEFAULT_ROOT)
    talks = build.plan_talks({s: [(source,) for source in texts[s][0]] for s in SPLITS},
                             seed=found["seed"])
    planned = {split: [t.voice.voice_id for t in talks if t.split == split
                       for _ in t.segments] for split in SPLITS}
    entries = {split: _yaml_entries(split) for split in SPOKEN}
    for split, es in entries.items():
        assert [e["voice"] for e in es] == planned[split], split
        assert {e["engine"] for e in es} == {"espeak-ng", "festival"}, split
    voices = {split: set(v) for split, v in planned.items()}
    train = [t for t in talks if t.split == "train"]
    assert 0.3 <= sum(t.voice.engine == "festival" for t in train) / len(train) <= 0.4
    assert len(voices["train"]) >= 50
    assert voices["dev"] <= voices["train"] and voices["tst-COMMON"] <= voices["train"]
    he = voices["tst-HE"]
    assert len(he) >= 5 and not he & voices["train"]
    assert all(v == "festival/ked_diphone" or v.split("+")[1] in HELD_OUT_VARIANTS for v in he)
    assert "festival/ked_diphone" in he


@pytest.mark.parametrize("split", SPOKEN)
def test_oracle_alignments(split):
    """Every source word has a span; spans ordered without overlap; the last word ends with
    the speech (within 100 ms, measured on the waveform). A festival diphone voice may end on
    a stop whose closure is quieter than the waveform check's 1 % threshold (measured: one
    of tst-HE's 121 ked_diphone segments, a final "g" at 0.2–0.5 % of the peak, 105.7 ms):
    festival's segments get 120 ms, and 99 % of all must be within 100 ms."""
    segs = load_list(DEFAULT_ROOT, "en-es", split)
    sample = random.Random(split).sample(segs, 120)
    gaps = []
    for s in sample:
        words = s.alignment.words
        assert [w.text for w in words] == [re.sub(r"[.,?]", "", t) for t in s.source.split()]
        assert all(w.start_ms < w.end_ms for w in words)
        assert all(a.end_ms <= b.start_ms for a, b in zip(words, words[1:], strict=False))
        assert words[-1].end_ms <= s.duration_ms
        gaps.append(abs(words[-1].end_ms - speech_end_ms(s.audio)))
        assert gaps[-1] <= (120 if s.speaker_id.startswith("festival/") else 100), s.id
        phonemes = s.alignment.phonemes
        assert words[0].start_ms == phonemes[0].start_ms
        assert words[-1].end_ms == phonemes[-1].end_ms
    assert np.mean(np.array(gaps) <= 100) >= 0.99


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
    """A row per pair and spoken split; a split not spoken yet (train, until training
    needs it) named with the command that speaks it."""
    # (its reordering figures: tests/test_reordering.py, on a corpus of their own)
    out = subprocess.run([sys.executable, "-m", "simul", "corpus", "info", "--no-reordering"],
                         capture_output=True, text=True, check=True).stdout
    spoken = build.built_splits(manifest.read(DEFAULT_ROOT))
    for pair in ("en-es", "en-pt"):
        for split in SPLITS:
            row = re.search(rf"{pair}\s+{split}\s+\d+", out)
            assert bool(row) == (split in spoken), (pair, split)
    if "train" not in spoken:
        assert ("split train is not built yet: `simul corpus build --splits train` (≈ "
                in out)
    for column in ("festival_%", "1_sent", "2_sent", "3+_sent", "sent/seg", "inner_punct_%"):
        assert column in out
