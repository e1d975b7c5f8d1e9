"""simul.papers.tutorial: text of units, partial outputs, latency tables, timeline, claims."""

from types import SimpleNamespace

import matplotlib
import numpy as np
import pandas as pd
import pytest

from simul.analysis import plots
from simul.corpus import Alignment, Word
from simul.metrics import units as unit_text
from simul.papers import tutorial as tut
from simul.records import Record

matplotlib.use("Agg")

CHARS = ["h", "o", "l", "a", "<space>", "m", "u", "n", "d", "o"]
PIECES = ["▁ho", "la", "▁mun", "do"]


@pytest.mark.parametrize("units, text, spans", [
    (CHARS, "hola mundo", [(0, 3), (5, 9)]),
    (PIECES, "hola mundo", [(0, 1), (2, 3)]),
    (["▁", "El", "▁gato"], "El gato", [(1, 1), (2, 2)]),  # a lone ▁ only separates
    (["<space>", "a", "<space>", "<space>", "b"], "a b", [(1, 1), (4, 4)]),
    ([], "", []),
])
def test_text_and_word_spans(units, text, spans):
    assert unit_text.text(units) == text
    assert unit_text.word_spans(units) == spans


def record(**kw):
    base = dict(index=0, prediction="hola mundo", delays=[1000.0, 2000.0],
                elapsed=[1100.0, 2300.0], prediction_length=2, reference="hola mundo",
                source_length=2000.0, source=["x.wav", "s0"], units=list(PIECES),
                # READ to 500, 1000; WRITE 2 units; READ to 1500, 2000; WRITE 2 and finish
                trace=[(500.0, 0), (1000.0, 0), (1000.0, 2), (1500.0, 0), (2000.0, 0),
                       (2000.0, 2)],
                policy="wait_k_frames", settings={"k": 50, "s": 50.0, "n": 2,
                                                  "reuse_state": True})
    base.update(kw)
    return Record(**base)


def test_partial_outputs_after_each_write():
    got = tut.partial_outputs(record())
    assert got.read_ms.tolist() == [1000.0, 2000.0]
    assert got["READs before"].tolist() == [2, 2]
    assert got["new units"].tolist() == [["▁ho", "la"], ["▁mun", "do"]]
    assert got["units so far"].tolist() == [2, 4]
    assert got["text so far"].tolist() == ["hola", "hola mundo"]


def test_word_latency_is_elapsed_minus_delay():
    got = tut.word_latency(record())
    assert got.word.tolist() == ["hola", "mundo"]
    assert got.compute_ms.tolist() == [100.0, 300.0]


def test_metrics_table_by_hand():
    # one word at 1000 ms of a 2000 ms source, reference of one word:
    # AL = 1000 − 0; AP = 1000 / (2000 · 1) = 0.5; elapsed 1500 → AL_CA 1500, AP_CA 0.75
    one = record(prediction="hola", delays=[1000.0], elapsed=[1500.0], prediction_length=1,
                 reference="hola")
    got = tut.metrics_table(one).set_index("metric")
    assert got.loc["AL", "on delays"] == pytest.approx(1000.0)
    assert got.loc["AL", "on elapsed (computation-aware)"] == pytest.approx(1500.0)
    assert got.loc["AP", "on delays"] == pytest.approx(0.5)
    assert got.loc["AP", "on elapsed (computation-aware)"] == pytest.approx(0.75)
    assert got.loc["AP", "unit"] == "ratio" and got.loc["AL", "unit"] == "ms"
    assert list(got.index[:2]) == ["BLEU", "chrF"]


def test_settings_text():
    assert plots.settings_text(record(), ["k", "s", "n"]) == "k=50, s=50, n=2"
    assert plots.settings_text(record()).endswith("reuse_state=True")


def test_timeline_draws_reads_writes_words_and_source_words():
    words = (Word("hello", 100.0, 600.0), Word("world", 700.0, 1500.0))
    segment = SimpleNamespace(alignment=Alignment(words=words, phonemes=()))
    ax = plots.timeline(record(), segment)
    labels = [t.get_text() for t in ax.texts]
    assert labels == ["hola", "mundo"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["READ (4)", "WRITE (2)", "end of source"]
    assert ax.get_xlabel() == "source read (ms)"
    assert ax.get_ylabel() == "output units written"
    assert "k=50" in ax.get_title()
    top = ax.child_axes[0]  # the source words' axis
    assert [t.get_text() for t in top.get_xticklabels()] == ["hello", "world"]


def test_timeline_thins_the_word_labels():
    units = [u for i in range(10) for u in (f"▁w{i}",)]
    many = record(units=units, trace=[(100.0 * (i + 1), 1) for i in range(10)],
                  prediction=" ".join(f"w{i}" for i in range(10)),
                  delays=[100.0 * (i + 2) for i in range(10)], elapsed=[], prediction_length=10)
    ax = plots.timeline(many, max_labels=4)
    # every 3rd word (ceil(10 / 4)) and the last one
    assert [t.get_text() for t in ax.texts] == ["w0", "w3", "w6", "w9"]


def grid(als):
    return pd.DataFrame([{"policy": "wait_k_frames", "param_k": k, "param_s": s, "AL": al}
                         for (k, s), al in als.items()])


def test_claims_hold():
    (t_k,) = tut.claims(grid({(100, 10): 900, (200, 10): 1500, (100, 20): 1200,
                              (200, 20): 1800}))
    assert t_k.holds and t_k.detail == "2 strides, all monotone" and t_k.own


def test_claims_fail():
    (t_k,) = tut.claims(grid({(100, 10): 900, (200, 10): 800}))
    assert t_k.verdict == "contradicted" and t_k.detail == "s=10: AL 900, 800"


def test_spec_is_the_small_wait_k_sweep():
    s = tut.spec("conformer_bpe_en-es", "en-es", "tst-COMMON", "out", n=2, max_utterances=20)
    assert s == {"models": ["conformer_bpe_en-es"], "pair": "en-es", "splits": ["tst-COMMON"],
                 "output": "out", "max_utterances": 20,
                 "policies": [{"policy": "wait_k_frames", "grid": {"k": [100, 200],
                                                                   "s": [10, 20]},
                               "fixed": {"n": 2}}]}
    assert tut.spec("m", "en-es", "dev", "o", n=1, ks=[50], corpus="/c")["corpus"] == "/c"


def test_claims_measure_the_k_step_and_a_quick_run_leaves_it_undecided(tmp_path):
    from simul.analysis.claims import QUICK_UNDECIDED, report

    found = tut.claims(grid({(100, 10): 900, (200, 10): 1500, (100, 20): 1200,
                             (200, 20): 1800}))
    (t_k,) = report(found, tmp_path, quick=True).to_dict("records")
    # T-k: the weakest AL step as k grows (600 ms at s=20; here a point estimate: the
    # hand-made grid has no records to resample), needs the full run
    assert t_k["effect"] == 600.0 and t_k["needs_full_run"]
    assert t_k["verdict"].startswith(QUICK_UNDECIDED) and not t_k["holds"]
    assert report(found).verdict.tolist() == ["holds"]  # a full run decides


def test_replay_says_each_word_is_at_its_delay():
    # BPE: "hola" (▁ho la) is complete only when ▁mun is written, at 2000 ms; the timeline
    # puts it at 1000 ms, where its last unit was written, and the replay at its delay
    late = record(delays=[2000.0, 2000.0])
    fig = tut.live_replay(np.zeros(32000, np.float32), late, player=False)
    wave, out = fig.axes[:2]
    assert out.get_xlabel() == tut.REPLAY_XLABEL
    assert "at its delay" in out.get_xlabel() and "when it was complete" in out.get_xlabel()
    assert wave.get_title() == "2 words, each at its delay"
    assert out.get_ylabel() == "words complete"
    (mark,) = [line for line in out.get_lines() if line.get_marker() == "v"]
    assert list(mark.get_xdata()) == [2.0]  # seconds: both words at their delay
    ax = plots.timeline(late)
    assert [t.xy[0] for t in ax.texts] == [1000.0, 2000.0]  # ms: where the last unit went
    html = tut.replay_html(np.zeros(1600, np.float32), late)
    assert 'title="complete at 2.00 s of source"' in html and "written at" not in html


# ------------------------------------------------- the batch run (simul reproduce --quick)

def de_segment(source, target, links, ends=None):
    words = tuple(Word(w, 0.0, e) for w, e in zip(source.split(), ends or [0.0] * 99,
                                                  strict=False))
    return SimpleNamespace(id="s0", source=source, target=target, links=links,
                           alignment=Alignment(words=words, phonemes=()))


def test_ahead_of_order_by_hand():
    # "we met at the airport two days ago" → "wir sind vor zwei Tagen am Flughafen gereist":
    # "vor" (target 3 of 8) translates "ago" (source 8 of 8): 8/8 − 3/8 = 0.625, the largest
    s = de_segment("we met at the airport two days ago",
                   "wir sind vor zwei Tagen am Flughafen gereist",
                   ((0, 0), (1, 1), (7, 2), (5, 3), (6, 4), (2, 5), (3, 5), (4, 6), (1, 7)))
    assert tut.ahead_of_order(s) == pytest.approx(0.625)
    # monotone, one word each: 0
    assert tut.ahead_of_order(de_segment("a b", "x y", ((0, 0), (1, 1)))) == 0.0


def test_reordered_segment_takes_the_furthest_ahead_verb_final_one():
    monotone = de_segment("we have met him", "wir haben ihn getroffen",
                          ((0, 0), (1, 1), (3, 2), (2, 3)))        # 4/4 − 3/4 = 0.25
    fronted = de_segment("we traveled there yesterday", "wir sind gestern dorthin gereist",
                         ((0, 0), (1, 1), (3, 2), (2, 3), (1, 4)))  # 4/4 − 3/5 = 0.4
    no_verb_last = de_segment("yesterday he came", "gestern kam er",
                              ((0, 0), (2, 1), (1, 2)))
    assert tut.reordered_segment([no_verb_last, monotone, fronted]) is fronted
    with pytest.raises(ValueError, match="ends a clause in its verb"):
        tut.reordered_segment([no_verb_last])


def test_alignment_table_and_bars_on_the_timeline():
    # hola at 1000 ms translates "hello", which ends at 600: waited 400; mundo at 2000
    # translates "world", which ends at 2500: anticipated by 500
    seg = de_segment("hello world", "hola mundo", ((0, 0), (1, 1)), ends=[600.0, 2500.0])
    table = tut.alignment_table(record(), seg)
    assert table.values.tolist() == [[1, "hola", "hello", 600.0, 1000.0, "waited", 400.0],
                                     [2, "mundo", "world", 2500.0, 2000.0, "anticipated",
                                      -500.0]]
    # a reference word no output word matched: "cruel" (linked to "world") is not written
    cruel = de_segment("hello world", "hola mundo cruel", ((0, 0), (1, 1), (1, 2)),
                       ends=[600.0, 2500.0])
    last = tut.alignment_table(record(reference="hola mundo cruel"), cruel).iloc[-1]
    assert (last["#"], last["reference word"], last["heard at (ms)"], last.verdict) == (
        3, "cruel", 2500.0, "not written")
    assert np.isnan(last["written at (ms)"]) and np.isnan(last["wait (ms)"])
    ax = plots.timeline(record(), seg, links=True)
    bars = [line for line in ax.lines if line.get_label() in (
        "waited for its source", "written before its source was heard")]
    # each bar at the height of its word's last unit (2 and 4), from delay to heard
    assert [(list(b.get_xdata()), list(b.get_ydata())) for b in bars] == [
        ([1000.0, 600.0], [2, 2]), ([2000.0, 2500.0], [4, 4])]
