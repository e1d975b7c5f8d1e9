"""The mini-corpus builder: determinism, atomicity and the manifest (on a tiny build)."""

import filecmp
import json

import pytest

from simul.corpus import CorpusError, check_built, load_list, manifest
from simul.corpus.mini import build
from simul.corpus.mini.festival import FestivalVoice
from simul.corpus.mini.speech import Voice

pytestmark = pytest.mark.long  # a minute or more (tests/conftest.py's order)

TINY = {"train": 60, "dev": 5, "tst-COMMON": 5, "tst-HE": 5}


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
    for pair, lang in (("en-es", "es"), ("en-pt", "pt"), ("en-de", "de")):
        for split, n in TINY.items():
            txt = tiny / pair / "data" / split / "txt"
            links = [f"{split}.links"] if pair == "en-de" else []  # gold links: en-de only
            assert sorted(p.name for p in txt.iterdir()) == sorted(
                [f"{split}.yaml", f"{split}.en", f"{split}.{lang}", f"{split}.align.jsonl",
                 *links]
            )
            segs = load_list(tiny, pair, split)
            assert len(segs) == n
            for s in segs:
                assert abs(s.audio.size - s.duration_ms * 16) <= 1
                assert len(s.alignment.words) == len(s.source.split())
                assert (s.links is not None) == (pair == "en-de")
    for s in load_list(tiny, "en-de", "train", with_audio=False):
        # every word of both sides is within the sentence pair, most are linked
        assert {i for i, _ in s.links} <= set(range(len(s.source.split())))
        assert len({j for _, j in s.links}) >= 0.8 * len(s.target.split())
    de = load_list(tiny, "en-de", "dev", with_audio=False)
    es = load_list(tiny, "en-es", "dev", with_audio=False)
    assert [s.source for s in de] == [s.source for s in es]
    for wav in (tiny / "en-de/data/dev/wav").iterdir():  # the same audio, hard-linked
        assert wav.samefile(tiny / "en-es/data/dev/wav" / wav.name)
    engines = {line.split("engine: ")[1].split(",")[0]
               for line in (tiny / "en-es/data/train/txt/train.yaml").read_text().splitlines()}
    assert engines == {"espeak-ng", "festival"}  # determinism is checked for both engines
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
    # German targets and gold links are checked on every load too
    for name in ("dev.de", "dev.links"):
        other = tmp_path / name
        shutil.copytree(tiny, other)
        text = other / "en-de" / "data" / "dev" / "txt" / name
        text.write_text(text.read_text().replace("1", "2", 1).replace("e", "a", 1))
        with pytest.raises(CorpusError, match=rf"{name}: checksum differs"):
            check_built(other)
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
    segments = build.plan_segments({"train": 900, "tst-HE": 400}, seed=0)
    talks = build.plan_talks(segments, seed=0)
    assert [s for t in talks for s in t.segments] == segments["train"] + segments["tst-HE"]
    seen = {t.voice.voice_id for t in talks if t.split == "train"}
    held = {t.voice.voice_id for t in talks if t.split == "tst-HE"}
    assert seen and held and not seen & held
    assert {"festival/kal_diphone", "festival/cmu_us_slt_arctic_hts"} <= seen
    assert "festival/ked_diphone" in held
    for split in ("train", "tst-HE"):  # both engines in every split, festival about 35 %
        engines = [t.voice.engine for t in talks if t.split == split]
        assert set(engines) == {"espeak-ng", "festival"}
        assert 0.3 <= engines.count("festival") / len(engines) <= 0.4
    assert all(isinstance(t.voice, Voice | FestivalVoice) for t in talks)
    assert all(len(t.gaps_ms) == len(t.segments) for t in talks)
    assert build.plan_talks(segments, seed=0) == talks


def test_segments_of_one_to_three_distinct_sentences():
    sizes = {"train": 3000, "dev": 200}
    segments = build.plan_segments(sizes, seed=5)
    assert {k: len(v) for k, v in segments.items()} == sizes
    train = segments["train"]
    share = {k: sum(len(s) == k for s in train) / len(train) for k in (1, 2, 3)}
    assert abs(share[1] - 0.5) < 0.04 and abs(share[2] - 0.33) < 0.04
    assert abs(share[3] - 0.17) < 0.03
    for seg in train:
        assert all(len(s.split()) <= build.MAX_SENTENCE_WORDS[len(seg)] for s in seg)
        assert all(s[-1] in ".?" and s[0].isupper() for s in seg)
    flat = [s for split in segments.values() for seg in split for s in seg]
    assert len(flat) == len(set(flat))  # no sentence twice, within or across splits
    small = {"train": 30, "dev": 5}  # the same seed, the same plan; another, another
    assert build.plan_segments(small, seed=5) == build.plan_segments(small, seed=5)
    assert build.plan_segments(small, seed=6) != build.plan_segments(small, seed=5)


@pytest.mark.espeak
@pytest.mark.apertium
def test_a_synthesizer_failure_names_sentence_and_voice_and_leaves_nothing(tmp_path,
                                                                         monkeypatch):
    # the talk plans travel to the workers, so a bad voice there fails inside the worker
    monkeypatch.setattr(build, "P_FESTIVAL", 1.0)
    monkeypatch.setattr(build, "HELD_OUT_FESTIVAL", ("nosuch_voice",))
    root = tmp_path / "mini"
    with pytest.raises(Exception, match=r"festival failed on '.+' with voice "
                                        r"festival/nosuch_voice_r.* \(talk_\d+, tst-HE\)"):
        build.build(root, seed=3, sizes={"train": 2, "dev": 1, "tst-COMMON": 1, "tst-HE": 2},
                    workers=1, progress=False)
    assert not root.exists() and not list(tmp_path.iterdir())


@pytest.mark.parametrize("text", ["train=0", "dev=x", "nosuch=3", "train"])
def test_bad_sizes_are_refused(text):
    with pytest.raises(ValueError, match="bad size"):
        build.parse_sizes(text)


def test_sizes_override_defaults():
    assert build.parse_sizes("train=200, dev=20") == {**build.SPLITS, "train": 200, "dev": 20}


@pytest.mark.parametrize(("text", "splits"), [
    ("", ("dev", "tst-COMMON", "tst-HE")), ("all", ("train", "dev", "tst-COMMON", "tst-HE")),
    ("train", ("train",)), ("tst-HE, dev", ("dev", "tst-HE")),
])
def test_splits_to_speak(text, splits):
    assert build.parse_splits(text) == splits


@pytest.mark.parametrize("text", ["nosuch", "train,all", "Train"])
def test_bad_splits_are_refused(text):
    with pytest.raises(ValueError, match="--splits: no split"):
        build.parse_splits(text)


TINY_OPTION = "train=60,dev=5,tst-COMMON=5,tst-HE=5"
SPEECH_OF_TRAIN = ("/data/train/wav/", "/data/train/txt/train.yaml",
                   "/data/train/txt/train.align.jsonl")


@pytest.fixture(scope="module")
def eval_only(tmp_path_factory):
    """TINY as `simul corpus build` builds by default: every split's text, the speech of
    the evaluation splits."""
    root = tmp_path_factory.mktemp("e") / "mini"
    assert build.main_build(root, seed=3, sizes=TINY_OPTION, workers=2, progress=False) == 0
    return root


def _files(root):
    return json.loads((root / "manifest.json").read_text())["files"]


@pytest.mark.espeak
@pytest.mark.apertium
def test_train_spoken_later_gives_the_files_of_a_build_with_all_splits(tiny, eval_only,
                                                                       tmp_path, capsys):
    import os
    import shutil

    from simul.commands import cli
    from simul.sweep.journal import corpus_checksum

    full, part = _files(tiny), _files(eval_only)
    # the same files as the full build but train's speech, byte for byte
    assert set(part) == {rel for rel in full if not any(s in rel for s in SPEECH_OF_TRAIN)}
    assert {rel for rel in part if "/train/" in rel} == {
        "en-es/data/train/txt/train.en", "en-es/data/train/txt/train.es",
        "en-pt/data/train/txt/train.en", "en-pt/data/train/txt/train.pt",
        "en-de/data/train/txt/train.en", "en-de/data/train/txt/train.de",
        "en-de/data/train/txt/train.links"}
    for rel in part:
        assert part[rel] == full[rel], rel
        assert filecmp.cmp(tiny / rel, eval_only / rel, shallow=False), rel
    found = manifest.verify(eval_only, builder_version=build.BUILDER_VERSION, deep=True)
    assert found["splits"] == ["dev", "tst-COMMON", "tst-HE"]
    assert check_built(eval_only) == found
    assert len(load_list(eval_only, "en-de", "dev")) == 5

    # reading train says how to speak it, in one line; the command line exits 2
    line = (f"{eval_only}: split train is not built yet: `simul corpus build --corpus "
            f"{eval_only} --seed 3 --sizes {TINY_OPTION} --splits train` (≈ 1 min)")
    with pytest.raises(CorpusError) as e:
        load_list(eval_only, "en-es", "train", with_audio=False)
    assert str(e.value) == line
    capsys.readouterr()
    assert cli.main(["corpus", "simuleval", "--corpus", str(eval_only), "--split", "train",
                     "--out", str(tmp_path / "se")]) == 2
    assert capsys.readouterr().err == f"simul: error: {line}\n"
    assert not (tmp_path / "se").exists()

    # that command adds train's speech, leaves every other file as it was
    root = tmp_path / "mini"
    shutil.copytree(eval_only, root)
    before = {rel: os.stat(root / rel) for rel in part}
    dev_key = corpus_checksum(root, "en-es", "dev")
    argv = ["corpus", "build", "--corpus", str(root), "--seed", "3", "--sizes", TINY_OPTION,
            "--workers", "2", "--quiet"]
    assert cli.main([*argv, "--splits", "train"]) == 0
    assert _files(root) == full
    for rel in full:
        assert filecmp.cmp(tiny / rel, root / rel, shallow=False), rel
    for rel, st in before.items():  # not rewritten: the same inode, not modified since
        now = os.stat(root / rel)
        assert (now.st_ino, now.st_mtime_ns) == (st.st_ino, st.st_mtime_ns), rel
    for wav in (root / "en-es/data/train/wav").iterdir():
        assert wav.samefile(root / "en-de/data/train/wav" / wav.name)
    found = manifest.verify(root, builder_version=build.BUILDER_VERSION, deep=True)
    assert found["splits"] == ["train", "dev", "tst-COMMON", "tst-HE"]
    assert len(load_list(root, "en-es", "train")) == 60
    assert corpus_checksum(root, "en-es", "dev") == dev_key  # dev's sweeps stay valid
    assert corpus_checksum(root, "en-es", "train") != dev_key
    assert not list(tmp_path.glob("mini.tmp-*")) and not list(tmp_path.glob(".mini.*"))
    capsys.readouterr()
    assert cli.main([*argv, "--splits", "all"]) == 0  # nothing left to add
    assert "up to date" in capsys.readouterr().out


@pytest.mark.espeak
@pytest.mark.apertium
def test_training_speaks_train_first(eval_only, tmp_path, capsys):
    import shutil

    from simul.models.training import prepare

    root = tmp_path / "mini"
    shutil.copytree(eval_only, root)
    assert prepare.export_split(root / "en-de", "en-de", "train", tmp_path / "train",
                                progress=False) == 60
    assert "split train is not built yet: building it first (≈ 1 min)" in (
        capsys.readouterr().err)
    assert len((tmp_path / "train" / "text").read_text().splitlines()) == 60
    assert build.built_splits(check_built(root)) == ("train", "dev", "tst-COMMON", "tst-HE")


@pytest.mark.espeak
@pytest.mark.apertium
def test_adding_a_split_is_refused_when_it_would_differ(eval_only, tmp_path, monkeypatch):
    import shutil

    root = tmp_path / "mini"
    shutil.copytree(eval_only, root)
    monkeypatch.setattr(build, "_espeak_version", lambda: "eSpeak NG text-to-speech: 0.0")
    with pytest.raises(CorpusError, match=r"manifest\.json: field 'espeak_ng' is .*, this "
                                          r"machine has 'eSpeak NG text-to-speech: 0\.0': "
                                          r"train would not sound like the other splits"):
        build.add_splits(root, ["train"])
    monkeypatch.undo()
    m = json.loads((root / "manifest.json").read_text())
    m["seed"] = 4  # the text is seed 3's
    (root / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(CorpusError, match=r"train\.en: not the English that seed 4 plans for "
                                          r"train"):
        build.add_splits(root, ["train"])
    assert not (root / "en-es/data/train/wav").exists()
    assert not list(tmp_path.glob("mini.tmp-*"))


@pytest.mark.espeak
@pytest.mark.apertium
def test_readers_of_train_text_and_statistics_on_a_corpus_without_its_speech(eval_only,
                                                                             monkeypatch,
                                                                             capsys):
    from simul.corpus import reordering, stats

    monkeypatch.setenv("SIMUL_ALIGNMENTS", "off")
    links = reordering.corpus_links(eval_only, "en-es", "dev")
    assert links.alignment == "eflomal (fitted on train+dev)" and len(links.links) == 5
    table = stats.info(eval_only, pairs=("en-es",))
    assert table["split"].tolist() == ["dev", "tst-COMMON", "tst-HE"]
    assert stats.main_info(eval_only) == 0  # the table, then the reordering of dev
    lines = capsys.readouterr().out.splitlines()
    assert (f"{eval_only}: split train is not built yet: `simul corpus build --corpus "
            f"{eval_only} --seed 3 --sizes {TINY_OPTION} --splits train` (≈ 1 min); its text "
            "is there") in lines
    assert sum("eflomal (fitted on train+dev)" in line for line in lines) == 2  # es, pt
