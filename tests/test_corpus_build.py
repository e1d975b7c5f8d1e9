"""The mini-corpus builder: determinism, atomicity and the manifest (on a tiny build)."""

import filecmp
import json

import pytest

from simul.corpus import CorpusError, check_built, load_list, manifest
from simul.corpus.mini import build
from simul.corpus.mini.speech import Voice

TINY = {"train": 16, "dev": 5, "tst-COMMON": 5, "tst-HE": 5}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("c") / "mini"
    build.build(root, seed=3, sizes=TINY, workers=2, progress=False)
    return root


@pytest.mark.espeak
@pytest.mark.apertium
def test_same_seed_gives_identical_files(tiny, tmp_path):
    again = tmp_path / "mini"
    build.build(again, seed=3, sizes=TINY, workers=1, progress=False)
    a = json.loads((tiny / "manifest.json").read_text())["files"]
    b = json.loads((again / "manifest.json").read_text())["files"]
    assert a.keys() == b.keys()
    for rel in a:  # text, yaml, alignments and audio alike
        assert filecmp.cmp(tiny / rel, again / rel, shallow=False), rel
    assert not list(tmp_path.glob("mini.tmp-*"))


@pytest.mark.espeak
@pytest.mark.apertium
def test_layout_and_reader(tiny):
    for pair, lang in (("en-es", "es"), ("en-pt", "pt")):
        for split, n in TINY.items():
            txt = tiny / pair / "data" / split / "txt"
            assert sorted(p.name for p in txt.iterdir()) == sorted(
                [f"{split}.yaml", f"{split}.en", f"{split}.{lang}", f"{split}.align.jsonl"]
            )
            segs = load_list(tiny, pair, split)
            assert len(segs) == n
            for s in segs:
                assert abs(s.audio.size - s.duration_ms * 16) <= 1
                assert len(s.alignment.words) == len(s.source.split())
    es = load_list(tiny, "en-es", "dev", with_audio=False)
    pt = load_list(tiny, "en-pt", "dev", with_audio=False)
    assert [s.source for s in es] == [s.source for s in pt]
    assert [s.target for s in es] != [s.target for s in pt]


@pytest.mark.espeak
@pytest.mark.apertium
def test_manifest_detects_damage_and_staleness(tiny, tmp_path):
    check_built(tiny)
    # a corpus with a changed text file
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(tiny, copy)
    en = copy / "en-es" / "data" / "dev" / "txt" / "dev.en"
    en.write_text(en.read_text().replace("a", "e", 1))
    with pytest.raises(CorpusError, match=r"dev\.en: checksum differs"):
        check_built(copy)
    en.unlink()
    with pytest.raises(CorpusError, match=r"dev\.en: listed in .*manifest\.json but missing"):
        check_built(copy)
    # built by another builder version
    m = json.loads((copy / "manifest.json").read_text())
    m["builder_version"] = -1
    (copy / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(CorpusError, match="builder_version"):
        check_built(copy)
    (copy / "manifest.json").unlink()
    with pytest.raises(CorpusError, match="manifest.json: missing"):
        manifest.verify(copy)


def test_talk_plan_voices():
    sents = {s: [f"s{s}{i}" for i in range(90)] for s in ("train", "tst-HE")}
    talks = build.plan_talks(sents, seed=0)
    assert [s for t in talks for s in t.sentences] == sents["train"] + sents["tst-HE"]
    seen = {t.voice.voice_id for t in talks if t.split == "train"}
    held = {t.voice.voice_id for t in talks if t.split == "tst-HE"}
    assert seen and held and not seen & held
    assert all(isinstance(t.voice, Voice) and len(t.gaps_ms) == len(t.sentences) for t in talks)
    assert build.plan_talks(sents, seed=0) == talks


@pytest.mark.parametrize("text", ["train=0", "dev=x", "nosuch=3", "train"])
def test_bad_sizes_are_refused(text):
    with pytest.raises(ValueError, match="bad size"):
        build.parse_sizes(text)


def test_sizes_override_defaults():
    assert build.parse_sizes("train=200, dev=20") == {**build.SPLITS, "train": 200, "dev": 20}
