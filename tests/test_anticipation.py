"""Anticipation rate: hand-worked records, and ``simul score`` (main_score) with and without
gold links.

Every expected value is worked out by hand in the comment above it, never with the code
under test. The running example:

    source  I      met    him    last    week          (end ms: 200 600 900 1300 1800)
    target  Ich    habe   ihn    letzte  Woche  getroffen
    links   0-0    1-1    2-2    3-3     4-4    1-5   (getroffen and habe both ← met)

A linked hypothesis word anticipates when one of its source words ends after its delay; a
word ending exactly at the delay was heard.
"""

import json
import math
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from simul import records
from simul.corpus import Alignment, Segment, Word
from simul.metrics.anticipation import (
    PER_SEGMENT,
    POOLED,
    Counts,
    corpus_anticipation,
    linked_segments,
    linked_words,
    record_counts,
    sentence_anticipation,
    sentence_counts,
)
from simul.metrics.score import main_score, score_records
from simul.records import Record

SOURCE = "I met him last week"
TARGET = "Ich habe ihn letzte Woche getroffen"
ENDS = [200.0, 600.0, 900.0, 1300.0, 1800.0]
STARTS = [0.0, 250.0, 650.0, 950.0, 1350.0]
LINKS = ((0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (1, 5))


def _segment(links=LINKS, *, index=0, target=TARGET, alignment=True) -> Segment:
    words = tuple(Word(w, s, e) for w, s, e in zip(SOURCE.split(), STARTS, ENDS, strict=True))
    return Segment(index=index, id=f"ted_1_{index}", talk="ted_1", wav=Path("ted_1.wav"),
                   offset_ms=0.0, duration_ms=2000.0, speaker_id="spk.1", source=SOURCE,
                   target=target, audio=None,
                   alignment=Alignment(words, ()) if alignment else None, links=links)


def _record(prediction, delays, *, index=0, reference=TARGET, elapsed=None) -> Record:
    return Record(index=index, prediction=prediction, delays=list(delays),
                  elapsed=list(delays) if elapsed is None else list(elapsed),
                  prediction_length=len(delays), reference=reference, source_length=2000.0,
                  source=[f"{index}.wav"])


def _rate(prediction, delays, links=LINKS):
    return sentence_anticipation(prediction.split(), delays, TARGET.split(), links, ENDS)


def test_all_words_heard_is_zero():
    # every word written after the whole source (2000 ≥ every end): 0 of 6 anticipate → 0
    assert sentence_counts(TARGET.split(), [2000] * 6, TARGET.split(), LINKS, ENDS) \
        == Counts(0, 6)
    assert _rate(TARGET, [2000] * 6) == 0


def test_verb_before_met_ended_anticipates():
    # Ich 300 (I ended 200: heard), habe 500 (met ends 600 > 500: ANTICIPATES),
    # ihn 900 (him ends 900: not > 900, heard), letzte 1400 (1300: heard),
    # Woche 1900 (1800: heard), getroffen 1900 (met 600: heard) → 1 of 6 = 1/6
    assert _rate(TARGET, [300, 500, 900, 1400, 1900, 1900]) == pytest.approx(1 / 6)


def test_word_with_two_source_words_anticipates_if_either_is_unheard():
    # letzte ← last (1300) and week (1800); written at 1400: last heard, week not → 1 of 1
    # among the linked words; the others all at 2000 (heard) → 1 of 6
    links = (*LINKS, (4, 3))
    assert _rate(TARGET, [2000, 2000, 2000, 1400, 2000, 2000], links) == pytest.approx(1 / 6)


def test_unmatched_hypothesis_word_is_not_counted():
    # hypothesis "Ich habe ihn gestern getroffen": the LCS with the reference matches
    # Ich habe ihn … getroffen (hyp 0 1 2 4 ↔ ref 0 1 2 5); "gestern" matches nothing.
    # Ich 300 heard; habe 500 < met 600: ANTICIPATES; ihn 1000 heard; gestern 1500 (would be
    # early for "week", but is not counted); getroffen 1900 heard → 1 of 4 = 0.25
    hyp = "Ich habe ihn gestern getroffen".split()
    assert [h for h, _ in linked_words(hyp, TARGET.split(), LINKS)] == [0, 1, 2, 4]
    assert _rate(" ".join(hyp), [300, 500, 1000, 1500, 1900]) == 0.25


def test_reference_word_without_links_is_not_counted():
    # the link 1-1 (habe ← met) removed: habe, written at 500 before met ended, is left out.
    # ihn 800 < him 900: ANTICIPATES; Ich 300, letzte 1400, Woche 1900, getroffen 1900 heard
    # → 1 of 5 = 0.2
    links = tuple(link for link in LINKS if link != (1, 1))
    counts = sentence_counts(TARGET.split(), [300, 500, 800, 1400, 1900, 1900],
                             TARGET.split(), links, ENDS)
    assert counts == Counts(1, 5) and counts.rate == 0.2


def test_no_linked_word_is_nan():
    # nothing matches the reference: 0 linked words, the rate is undefined
    assert math.isnan(_rate("Hallo Welt", [100, 200]))


def test_delays_not_elapsed():
    # habe's delay 500 < 600 anticipates; its elapsed (1500) would not: the metric reads the
    # delays, what had been heard when the word was written → 1 of 6
    rec = _record(TARGET, [300, 500, 900, 1400, 1900, 1900],
                  elapsed=[1300, 1500, 1900, 2400, 2900, 2900])
    assert record_counts(rec, _segment()) == Counts(1, 6)


def test_pooled_and_per_segment():
    # record 0: the verb case, 1 of 6.
    # record 1: "Ich habe" at 100, 700: Ich 100 < I 200: ANTICIPATES; habe 700 heard → 1 of 2.
    # record 2: empty output: 0 linked words (left out of the per-segment mean).
    # record 3: a segment without links (None): left out of both.
    # pooled: (1 + 1 + 0) / (6 + 2 + 0) = 2/8 = 0.25
    # per segment: mean(1/6, 1/2) = (1/6 + 3/6) / 2 = 1/3
    recs = [_record(TARGET, [300, 500, 900, 1400, 1900, 1900], index=0),
            _record("Ich habe", [100, 700], index=1),
            _record("", [], index=2),
            _record("Ich", [2000], index=3)]
    segments = [_segment(), _segment(), _segment(), _segment(links=None)]
    scores = corpus_anticipation(recs, segments)
    assert scores == {POOLED: 0.25, PER_SEGMENT: pytest.approx(1 / 3)}


def test_absent_without_links():
    recs = [_record(TARGET, [300, 500, 900, 1400, 1900, 1900])]
    assert corpus_anticipation(recs, [_segment(links=None)]) == {}
    assert corpus_anticipation(recs, [None]) == {}
    plain = score_records(recs)
    assert POOLED not in plain and PER_SEGMENT not in plain
    assert score_records(recs, [_segment(links=None)]) == plain
    linked = score_records(recs, [_segment()])
    # the new keys come after length_diff; nothing else changes
    assert list(linked) == [*list(plain)[:-3], POOLED, PER_SEGMENT, *list(plain)[-3:]]
    assert {k: v for k, v in linked.items() if k not in (POOLED, PER_SEGMENT)} == plain
    assert linked[POOLED] == pytest.approx(1 / 6)


def test_links_but_no_linked_word_is_nan():
    # the segment has links, but the output matches no reference word: NaN, not absent
    scores = corpus_anticipation([_record("Hallo", [500])], [_segment()])
    assert math.isnan(scores[POOLED]) and math.isnan(scores[PER_SEGMENT])


def test_refuses_a_record_of_another_target():
    with pytest.raises(ValueError, match="reference is not the segment's target"):
        record_counts(_record("Ich", [100], reference="Ich bin"), _segment())


# ------------------------------------------------------------------ through `simul score`

SR = 16000


def _split(tmp_path: Path, links: bool) -> Path:
    """A two-segment en-de dev split (MuST-C layout) of one 4 s talk; its wav folder.

    Segment 0 (0–2 s): the running example. Segment 1 (2–4 s): "Thank you" → "Danke",
    links 0-0 1-0, Thank ends 300, you 600."""
    split_dir = tmp_path / "en-de" / "data" / "dev"
    (split_dir / "wav").mkdir(parents=True)
    (split_dir / "txt").mkdir()
    sf.write(split_dir / "wav" / "ted_1.wav", np.zeros(4 * SR, dtype=np.float32), SR)
    txt = split_dir / "txt"
    (txt / "dev.yaml").write_text(
        "- {duration: 2.0, offset: 0.0, rW: 5, uW: 0, speaker_id: spk.1, wav: ted_1.wav}\n"
        "- {duration: 2.0, offset: 2.0, rW: 2, uW: 0, speaker_id: spk.1, wav: ted_1.wav}\n")
    (txt / "dev.en").write_text(f"{SOURCE}\nThank you\n")
    (txt / "dev.de").write_text(f"{TARGET}\nDanke\n")
    words0 = [[w, s, e] for w, s, e in zip(SOURCE.split(), STARTS, ENDS, strict=True)]
    words1 = [["Thank", 0.0, 300.0], ["you", 350.0, 600.0]]
    (txt / "dev.align.jsonl").write_text("".join(
        json.dumps({"words": w, "phonemes": []}) + "\n" for w in (words0, words1)))
    if links:
        (txt / "dev.links").write_text("0-0 1-1 2-2 3-3 4-4 1-5\n0-0 1-0\n")
    return split_dir / "wav"


def _simul_records(wav_dir: Path) -> list[Record]:
    """As simul writes them: segment_id and source = [wav path, segment id]."""
    recs = [_record(TARGET, [300, 500, 900, 1400, 1900, 1900], index=0),
            _record("Danke", [2000], index=1, reference="Danke")]
    for k, rec in enumerate(recs):
        rec.segment_id = f"ted_1_{k}"
        rec.source = [str(wav_dir / "ted_1.wav"), rec.segment_id]
    return recs


def test_main_score_prints_anticipation_for_linked_segments(tmp_path, capsys):
    # record 0: the verb case, 1 of 6; record 1: Danke at 2000 (Thank 300, you 600: heard),
    # 0 of 1. pooled: 1/7 = 0.142857… → "0.143"; per segment: (1/6 + 0)/2 = 1/12 = 0.0833…
    # → "0.083"
    recs = _simul_records(_split(tmp_path, links=True))
    assert [s.id for s in linked_segments(recs)] == ["ted_1_0", "ted_1_1"]
    path = records.write(recs, tmp_path / "records.jsonl")
    assert main_score(path, as_json=True) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed[POOLED] == pytest.approx(1 / 7)
    assert printed[PER_SEGMENT] == pytest.approx(1 / 12)
    assert main_score(path, as_json=False) == 0
    table = capsys.readouterr().out.splitlines()
    assert any(line.split() == [POOLED, "0.143", "(ratio)"] for line in table)
    assert any(line.split() == [PER_SEGMENT, "0.083", "(ratio)"] for line in table)
    assert any(line.strip().startswith(f"{POOLED}: share of the hypothesis words")
               for line in table)


def test_main_score_unchanged_without_links(tmp_path, capsys):
    # the same split without its links file: no anticipation key, and the output is what
    # score_records alone gives (the split is not even read)
    recs = _simul_records(_split(tmp_path, links=False))
    assert linked_segments(recs) is None
    path = records.write(recs, tmp_path / "records.jsonl")
    assert main_score(path, as_json=True) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == score_records(recs)
    assert main_score(path, as_json=False) == 0
    assert "anticipation" not in capsys.readouterr().out


def test_records_of_a_changed_corpus_get_no_segment(tmp_path, caplog):
    # a record whose reference is not its segment's target (the corpus changed since it
    # was decoded) is not paired with that segment's links
    recs = _simul_records(_split(tmp_path, links=True))
    recs[1].reference = recs[1].prediction = "Danke schön"
    recs[1].delays = recs[1].elapsed = [2000, 2000]
    recs[1].prediction_length = 2
    segments = linked_segments(recs)
    assert segments[0].id == "ted_1_0" and segments[1] is None
    assert "no segment of their id and reference" in caplog.text


def _fitted(monkeypatch, calls):
    """corpus_links as eflomal would give it, without eflomal: the running example's links."""
    from simul.corpus import reordering

    def corpus_links(root, pair, split, *, segments=None):
        calls.append((Path(root).name, pair, split))
        return reordering.SplitLinks(pair, split, [s.source for s in segments],
                                     [s.target for s in segments],
                                     [LINKS, ((0, 0), (1, 0))], "eflomal (test)")

    monkeypatch.setattr(reordering, "corpus_links", corpus_links)


def test_fitted_links_stand_in_for_gold_only_when_asked(tmp_path, monkeypatch):
    calls = []
    _fitted(monkeypatch, calls)
    recs = _simul_records(_split(tmp_path, links=False))
    assert linked_segments(recs) is None and calls == []  # simul score keeps to gold
    segments = linked_segments(recs, fitted=True)
    assert calls == [("en-de", "en-de", "dev")]
    assert [s.links for s in segments] == [LINKS, ((0, 0), (1, 0))]
    # the split with gold links keeps them and fits nothing
    calls.clear()
    gold = _simul_records(_split(tmp_path / "gold", links=True))
    assert linked_segments(gold, fitted=True)[1].links == ((0, 0), (1, 0)) and calls == []


def test_claims_segments_rescore_the_pooled_rate(tmp_path, monkeypatch):
    # the records of test_main_score_prints_anticipation_for_linked_segments: 1 of 6 and 0
    # of 1 anticipating, pooled 1/7; a second setting writes every word at 0 ms: all 6 + 1
    # anticipate (Danke's source words end at 300 and 600 ms), 7/7
    import pandas as pd

    from simul.analysis.claims import ANTICIPATION, Segments, bootstrap, difference

    _fitted(monkeypatch, [])
    wav_dir = _split(tmp_path, links=False)
    late = _simul_records(wav_dir)
    early = _simul_records(wav_dir)
    for rec in early:
        rec.delays = rec.elapsed = [0.0] * len(rec.delays)
    rows = pd.DataFrame([
        {"setting": "late", "records": str(records.write(late, tmp_path / "late.jsonl"))},
        {"setting": "early", "records": str(records.write(early, tmp_path / "early.jsonl"))}])
    from simul.corpus import mustc

    reads = []
    monkeypatch.setattr(mustc, "load_list",
                        lambda *a, **k: reads.append(a) or list(mustc.load(*a, **k)))
    scores = Segments(rows, metrics=("AL", ANTICIPATION)).scores()
    assert scores[ANTICIPATION].tolist() == pytest.approx([1 / 7, 1.0])
    assert len(reads) == 1  # the split read once for both settings
    # resampling segment 0 twice: 2 of 12 and 12 of 12
    assert Segments(rows, metrics=(ANTICIPATION,)).scores(np.array([0, 0]))[
        ANTICIPATION].tolist() == pytest.approx([2 / 12, 1.0])
    e = bootstrap(rows, difference({"setting": "late"}, {"setting": "early"}, ANTICIPATION),
                  claimed="greater", metrics=(ANTICIPATION,))
    assert e.effect == pytest.approx(6 / 7) and e.verdict == "holds"
