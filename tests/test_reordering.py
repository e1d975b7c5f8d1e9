"""Reordering figures (simul.corpus.reordering) and what `simul corpus info` prints of them."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from simul.commands import cli
from simul.corpus import reordering, stats
from simul.corpus.reordering import crossing_share, fit_eflomal, mean_wait, pooled

# "I met him at the station last week" / "Ich habe ihn letzte Woche am Bahnhof getroffen"
#  I0 met1 him2 at3 the4 station5 last6 week7 / Ich0 habe1 ihn2 letzte3 Woche4 am5 Bahnhof6
#  getroffen7; "met" → "habe ... getroffen", "at the" → "am".
MET_SRC = "I met him at the station last week"
MET_TGT = "Ich habe ihn letzte Woche am Bahnhof getroffen"
MET = [(0, 0), (1, 1), (2, 2), (6, 3), (7, 4), (3, 5), (4, 5), (5, 6), (1, 7)]
# Crossing, (i-i')*(j-j') < 0, pair by pair:
#   (2,2) x (1,7)                                  [(2-1)*(2-7) = -5]
#   (6,3) x (3,5) (4,5) (5,6) (1,7)                [(6-3)*(3-5) = -6, ...]
#   (7,4) x (3,5) (4,5) (5,6) (1,7)
#   (3,5) x (1,7); (4,5) x (1,7); (5,6) x (1,7)
#   (0,0) and (1,1) cross nothing ((1,1) and (1,7) share "met": no crossing)
# → 7 of the 9 links cross: 7/9.
MET_CROSSING = 7 / 9
# Mean wait, n_src = n_tgt = 8, so the diagonal after target word j is j + 1 source words;
# wait_j = max(0, max(S_j) + 1 - (j + 1)):
#   j=0 Ich {0}: 1-1=0     j=1 habe {1}: 2-2=0   j=2 ihn {2}: 3-3=0   j=3 letzte {6}: 7-4=3
#   j=4 Woche {7}: 8-5=3   j=5 am {3,4}: 5-6<0→0  j=6 Bahnhof {5}: 6-7<0→0
#   j=7 getroffen {1}: 2-8<0→0
# → (3 + 3) / 8 aligned target words = 0.75.
MET_WAIT = 6 / 8


def test_hand_worked_sentence():
    assert crossing_share(MET) == pytest.approx(MET_CROSSING)
    assert mean_wait(MET, len(MET_SRC.split()), len(MET_TGT.split())) == pytest.approx(MET_WAIT)


def test_monotone_alignment_has_no_crossing_and_no_wait():
    links = [(k, k) for k in range(6)]
    assert crossing_share(links) == 0.0
    assert mean_wait(links, 6, 6) == 0.0


def test_a_swap_crosses_both_links():
    # "red car" / "car red": (0,1) and (1,0) cross; car (j=0) waits for source word 1:
    # max(0, 1 + 1 - 1 * 2/2) = 1; red (j=1): max(0, 0 + 1 - 2) = 0 → mean 0.5.
    assert crossing_share([(0, 1), (1, 0)]) == 1.0
    assert mean_wait([(0, 1), (1, 0)], 2, 2) == pytest.approx(0.5)


def test_unequal_lengths_use_the_diagonal():
    # 4 source words, 2 target words: the diagonal after target word j is 2 (j + 1) words.
    # j=0 ← source 3: max(0, 4 - 2) = 2; j=1 ← source 0: max(0, 1 - 4) = 0 → mean 1.0.
    assert mean_wait([(3, 0), (0, 1)], 4, 2) == pytest.approx(1.0)
    # monotone, 2 source words per target word: no wait
    assert mean_wait([(0, 0), (1, 0), (2, 1), (3, 1)], 4, 2) == 0.0
    # unaligned target words count in neither sum: only j=1 ← 3, max(0, 4 - 2 * 4/3)
    assert mean_wait([(3, 1)], 4, 3) == pytest.approx(4 - 8 / 3)


def test_edge_cases():
    assert crossing_share([]) == 0.0 and mean_wait([], 3, 3) == 0.0
    assert crossing_share([(0, 0), (0, 0)]) == 0.0  # a duplicate link is one link
    with pytest.raises(ValueError, match="outside"):
        mean_wait([(3, 0)], 3, 3)


def test_pooled_over_segments():
    fig = pooled([MET, [(0, 1), (1, 0)], []], [MET_SRC, "red car", "x"],
                 [MET_TGT, "car red", "y"])
    assert (fig.segments, fig.links, fig.crossing, fig.aligned_target_words) == (3, 11, 9, 10)
    assert fig.crossing_share == pytest.approx(9 / 11)  # not the mean of 7/9 and 1
    assert fig.mean_wait == pytest.approx((6 + 1) / 10)


def test_pharaoh_and_readable():
    assert reordering.parse_pharaoh("0-0 2-1 1-1") == ((0, 0), (2, 1), (1, 1))
    assert reordering.pharaoh([(1, 7), (0, 0), (1, 1)]) == "0-0 1-1 1-7"
    assert reordering.readable([(1, 1), (0, 0)], "I met", "Ich traf") == "I→Ich met→traf"


# --------------------------------------------------------------------------- eflomal
def synthetic(n: int = 200, seed: int = 0):
    """Sentence pairs of a word-for-word dictionary (40 words), the source's second word
    moved to the end of the target (as a German participle is); and their gold links."""
    rng = random.Random(seed)
    vocab = [f"s{k}" for k in range(40)]
    dictionary = {w: f"t{k}" for k, w in enumerate(vocab)}
    sources, targets, gold = [], [], []
    for _ in range(n):
        words = rng.sample(vocab, rng.randint(4, 9))
        order = [0, *range(2, len(words)), 1]
        sources.append(" ".join(words))
        targets.append(" ".join(dictionary[words[i]] for i in order))
        gold.append({(i, j) for j, i in enumerate(order)})
    return sources, targets, gold


def test_eflomal_recovers_an_obvious_alignment():
    sources, targets, gold = synthetic()
    fitted = fit_eflomal(sources, targets)
    hits = sum(len(set(f) & g) for f, g in zip(fitted, gold, strict=True))
    recall = hits / sum(len(g) for g in gold)
    precision = hits / sum(len(f) for f in fitted)
    # measured: recall 0.845-0.871, precision 1.0 over 48 fits (eflomal takes no seed)
    assert recall >= 0.75 and precision >= 0.95, (recall, precision)


def test_eflomal_keeps_blank_lines_unaligned():
    sources, targets, _ = synthetic(50)
    fitted = fit_eflomal([*sources, ""], [*targets, "t1"])
    assert len(fitted) == 51 and fitted[-1] == ()


# --------------------------------------------------------------------------- a fake corpus
PLAIN = ("I see the dog", "Ich sehe den Hund", "0-0 1-1 2-2 3-3")
PERFECT = ("I met him at the station", "Ich habe ihn am Bahnhof getroffen",
           "0-0 1-1 2-2 3-3 4-3 5-4 1-5")
SUBORDINATE = ("I stay because it rains", "Ich bleibe, weil es regnet", "0-0 1-1 2-2 3-3 4-4")
CLAUSES = {3: PERFECT, 5: SUBORDINATE, 8: PERFECT, 12: SUBORDINATE, 14: PERFECT,
           17: SUBORDINATE}  # 6 of 20: only the first 5 are shown


def write_split(pair_dir: Path, split: str, rows: list[tuple[str, str, str | None]]) -> None:
    """A MuST-C layout split: one wav, one 0.5 s segment per row (source, target, links)."""
    wav, txt = pair_dir / "data" / split / "wav", pair_dir / "data" / split / "txt"
    wav.mkdir(parents=True)
    txt.mkdir()
    sf.write(wav / "talk_0.wav", np.zeros(8000 * len(rows), np.float32), 16000)
    (txt / f"{split}.yaml").write_text("".join(
        f"- {{duration: 0.5, offset: {0.5 * k}, speaker_id: spk_0, wav: talk_0.wav}}\n"
        for k in range(len(rows))))
    src, tgt = pair_dir.name.split("-")
    (txt / f"{split}.{src}").write_text("".join(f"{r[0]}\n" for r in rows))
    (txt / f"{split}.{tgt}").write_text("".join(f"{r[1]}\n" for r in rows))
    if rows[0][2] is not None:
        (txt / f"{split}.links").write_text("".join(f"{r[2]}\n" for r in rows))


@pytest.fixture
def fake_corpus(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv(reordering.ENV, str(tmp_path / "cache"))
    root = tmp_path / "corpus"
    write_split(root / "en-de", "dev", [CLAUSES.get(k, PLAIN) for k in range(20)])
    sources, targets, _ = synthetic(40, seed=1)
    rows = [(s, t, None) for s, t in zip(sources, targets, strict=True)]
    write_split(root / "en-xx", "train", rows[:30])
    write_split(root / "en-xx", "dev", rows[30:])
    (root / "notes").mkdir()
    return root


def test_pairs_on_disk(fake_corpus, tmp_path):
    assert stats.pairs_on_disk(fake_corpus) == ("en-de", "en-xx")
    assert stats.pairs_on_disk(fake_corpus / "en-de") == ("en-de",)
    deep = tmp_path / "deep"
    (deep / "MUSTC_v1.0" / "en-fr" / "data").mkdir(parents=True)
    assert stats.pairs_on_disk(deep) == ("en-fr",)


def test_verb_final_clause():
    assert stats.verb_final_clause("Ich habe ihn letzte Woche am Bahnhof getroffen.")
    assert stats.verb_final_clause("Sie ist nach Hause gegangen, und ich bleibe.")
    assert stats.verb_final_clause("Ich sehe den Hund, der im Garten spielt.")
    assert stats.verb_final_clause("Ich bleibe, weil es regnet.")
    assert not stats.verb_final_clause("Ich sehe den Hund.")
    assert not stats.verb_final_clause("Er ist gestern.")  # "gestern": no participle
    assert not stats.verb_final_clause("Ich gehe, und du bleibst.")


def test_gold_links_are_used_and_eflomal_is_cached(fake_corpus):
    gold = reordering.corpus_links(fake_corpus, "en-de", "dev")
    assert gold.alignment == "gold (grammar)"
    assert gold.links[3] == reordering.parse_pharaoh(PERFECT[2])
    first = reordering.corpus_links(fake_corpus, "en-xx", "dev")
    assert first.alignment == "eflomal (fitted on train+dev)" and not first.cached
    again = reordering.corpus_links(fake_corpus, "en-xx", "dev")
    assert again.cached and again.links == first.links
    # a changed corpus is another key
    txt = fake_corpus / "en-xx" / "data" / "train" / "txt" / "train.en"
    txt.write_text(txt.read_text().replace("s1 ", "s2 "))
    assert not reordering.corpus_links(fake_corpus, "en-xx", "dev").cached


def test_info_prints_figures_and_samples(fake_corpus, capsys):
    assert cli.main(["corpus", "info", "--corpus", str(fake_corpus)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    # the existing table, for every pair on disk
    assert any(line.split()[:3] == ["en-de", "dev", "20"] for line in lines)
    assert any(line.split()[:3] == ["en-xx", "train", "30"] for line in lines)
    # the reordering table. PERFECT (segments 3, 8, 14): 7 links, of which (1,5)
    # "met→getroffen" crosses (2,2) (3,3) (4,3) (5,4) [(1-2)*(5-2) = -3, ...]: 5 crossing;
    # SUBORDINATE (5 links) and PLAIN (4 links, 14 segments) are monotone:
    # 15 crossing of 3*7 + 3*5 + 14*4 = 92 links.
    row = next(line.split() for line in lines if line.startswith("en-de") and "gold" in line)
    assert row[:4] == ["en-de", "dev", "20", "92"]
    assert float(row[4]) == round(100 * 15 / 92, 1)
    # wait (6 source, 6 target words in PERFECT, diagonal j + 1): "am" (j=3) ← "the" (4):
    # 5 - 4 = 1; "Bahnhof" (j=4) ← "station" (5): 6 - 5 = 1; the others 0. 3 segments:
    # 6 over 3*6 + 3*5 + 14*4 = 89 aligned target words.
    assert float(row[5]) == round(6 / 89, 2)
    assert "gold (grammar)" in out and "eflomal (fitted on train+dev)" in out
    # the samples: the first 5 clause segments (*), then the first 10 others
    shown = [line for line in lines if line[:1] in "* " and " | " in line]
    assert len(shown) == 15
    assert [int(line[1:7]) for line in shown] == [3, 5, 8, 12, 14, 0, 1, 2, 4, 6, 7, 9, 10,
                                                  11, 13]
    assert all(line.startswith("*") == (k < 5) for k, line in enumerate(shown))
    assert ("I met him at the station | Ich habe ihn am Bahnhof getroffen | I→Ich met→habe "
            "him→ihn at→am the→am station→Bahnhof met→getroffen") in shown[0]


def test_info_without_reordering(fake_corpus, capsys):
    assert cli.main(["corpus", "info", "--corpus", str(fake_corpus), "--no-reordering"]) == 0
    out = capsys.readouterr().out
    assert "reordering" not in out and "en-xx" in out
    assert not (fake_corpus.parent / "cache").exists()


def test_the_cache_key_of_a_built_corpus_comes_from_its_manifest(fake_corpus):
    from simul.corpus import manifest

    texts = [fake_corpus / "en-xx" / "data" / s / "txt" / f"{s}.{lang}"
             for s in ("train", "dev") for lang in ("en", "xx")]
    manifest.write(fake_corpus, {})
    key = reordering._corpus_checksum(fake_corpus, texts)
    assert key.startswith("manifest-texts:")
    assert reordering._corpus_checksum(fake_corpus / "en-xx", texts) == key
    (fake_corpus / "en-yy" / "data").mkdir(parents=True)  # another pair: the same key
    (fake_corpus / "en-yy" / "data" / "x.txt").write_text("x")
    manifest.write(fake_corpus, {})
    assert reordering._corpus_checksum(fake_corpus, texts) == key
    texts[0].write_text(texts[0].read_text().upper())  # changed texts: another key
    manifest.write(fake_corpus, {})
    assert reordering._corpus_checksum(fake_corpus, texts) != key


def test_info_shows_its_progress_on_stderr(fake_corpus, capsys):
    assert cli.main(["corpus", "info", "--corpus", str(fake_corpus)]) == 0
    captured = capsys.readouterr()
    assert "reading the splits" in captured.err and "aligning dev" in captured.err
    assert "reading the splits" not in captured.out  # the tables alone on stdout
    assert cli.main(["corpus", "info", "--corpus", str(fake_corpus), "--quiet"]) == 0
    assert capsys.readouterr().err == ""
