"""Claims as evidence: paired bootstrap effects, 95 % intervals and three-valued verdicts."""

import math

import pytest

from simul.analysis.claims import Evidence, bleu_difference, mean_difference

REFS = ["el gato negro duerme en la casa grande .",
        "mi hermano come una manzana roja hoy .",
        "los niños juegan en el parque por la tarde .",
        "ella escribe una carta larga a su madre .",
        "nosotros vivimos cerca del río desde enero ."]
WRONG = ["uno dos tres cuatro cinco seis siete ocho nueve"] * len(REFS)


def test_a_clear_win_holds():
    # B is the references (BLEU 100 on any resample), A shares no word with them (BLEU 0)
    e = bleu_difference(WRONG, REFS, REFS, claimed="greater")
    assert (e.effect, e.low, e.high) == pytest.approx((100.0, 100.0, 100.0)) and e.n == 5
    assert e.verdict == "holds" and e.segments_needed() is None


def test_a_clear_loss_is_contradicted():
    e = bleu_difference(REFS, WRONG, REFS, claimed="greater")
    assert (e.effect, e.low, e.high) == pytest.approx((-100.0, -100.0, -100.0))
    assert e.verdict == "contradicted"
    assert bleu_difference(REFS, WRONG, REFS, claimed="less").verdict == "holds"


def test_a_tie_is_undecided():
    e = bleu_difference(REFS, REFS, REFS, claimed="greater")
    assert (e.effect, e.low, e.high) == (0.0, 0.0, 0.0)
    assert e.verdict == "undecided" and e.segments_needed() is None


def test_latency_difference_of_a_constant_shift_is_exact():
    # every segment's AL is 150 ms larger under B: each resample's mean difference is 150
    a = [1000.0, 1200.0, 900.0, 1500.0]
    e = mean_difference(a, [x + 150 for x in a], claimed="greater")
    assert (e.effect, e.low, e.high, e.n) == (150.0, 150.0, 150.0, 4)
    assert e.verdict == "holds"


def test_a_noisy_difference_is_undecided_with_a_sample_size_to_decide_it():
    # differences +100, −100, +100, −100, +120: mean +24 ms, resamples straddle 0
    a = [1000.0] * 5
    b = [1100.0, 900.0, 1100.0, 900.0, 1120.0]
    e = mean_difference(a, b, claimed="greater", resamples=2000)
    assert e.effect == pytest.approx(24.0)
    assert e.low < 0 < e.high and e.verdict == "undecided"
    # the half-width shrinks as 1/√n: n·(half-width / effect)² segments
    half = (e.high - e.low) / 2
    assert e.segments_needed(power=0.5) == pytest.approx(5 * (half / 24.0) ** 2, abs=1)
    # at 80 % power: ((1.96 + 0.84) / 1.96)² = 2.043 times as many
    assert e.segments_needed() == pytest.approx(2.0432 * 5 * (half / 24.0) ** 2, abs=1)
    assert e.segments_needed() > 5


def test_verdict_table():
    cases = [((2.0, 1.0, 3.0), "greater", "holds"), ((2.0, 1.0, 3.0), "less", "contradicted"),
             ((-2.0, -3.0, -1.0), "less", "holds"), ((0.5, -1.0, 2.0), "greater", "undecided"),
             ((1.0, 0.0, 2.0), "greater", "undecided")]  # an interval touching 0 decides nothing
    for (effect, low, high), claimed, verdict in cases:
        assert Evidence(effect, low, high, 40, claimed).verdict == verdict


def test_non_inferiority_verdicts_against_the_margin():
    # "B ≥ A within 1 BLEU": holds once the interval clears −1, contradicted below it
    cases = [((-0.2, -0.8, +0.5), "greater", "holds"),  # a tie inside the margin holds
             ((+2.0, +1.0, +3.0), "greater", "holds"),  # better holds too
             ((-0.5, -1.8, +0.8), "greater", "undecided"),  # reaches below −1
             ((-2.0, -3.0, -1.5), "greater", "contradicted"),  # all of it below −1
             ((-1.0, -1.0, -0.5), "greater", "undecided"),  # touching −1 decides nothing
             # "B ≤ A within 1" (claimed less): the mirror image at +1
             ((+0.3, -0.5, +0.9), "less", "holds"),
             ((+0.5, -0.2, +1.4), "less", "undecided"),
             ((+2.0, +1.2, +2.8), "less", "contradicted")]
    for (effect, low, high), claimed, verdict in cases:
        e = Evidence(effect, low, high, 40, claimed, margin=1.0)
        assert (e.kind, e.verdict) == ("non-inferiority", verdict), (effect, low, high)


def test_equivalence_verdicts_against_the_margin():
    # "on par within ±1": the (90 %) interval inside (−1, 1) holds; wholly outside contradicts
    cases = [((0.1, -0.6, +0.7), "holds"),
             ((0.0, -1.2, +0.9), "undecided"),  # reaches below −1
             ((0.5, -0.3, +1.3), "undecided"),  # reaches above +1
             ((0.0, -2.0, +2.0), "undecided"),  # wider than the margin on both sides
             ((1.5, +1.1, +1.9), "contradicted"),  # all above +1
             ((-1.6, -2.2, -1.05), "contradicted"),  # all below −1
             ((1.0, +0.5, +1.0), "undecided")]  # touching +1 decides nothing
    for (effect, low, high), verdict in cases:
        e = Evidence(effect, low, high, 40, "within", margin=1.0)
        assert (e.kind, e.verdict) == ("equivalence", verdict), (effect, low, high)
    assert Evidence(0.0, -1.0, 1.0, 40, "greater").kind == "superiority"


def test_segments_needed_measures_the_distance_to_the_nearest_bound():
    # at even odds (power ½): non-inferiority at −1: effect −0.5 is 0.5 from −1, half-width
    # 1.3 → 40·(1.3/0.5)² = 270.4
    half = 0.5
    assert Evidence(-0.5, -1.8, +0.8, 40, "greater", margin=1.0).segments_needed(half) == 271
    # superiority of the same numbers: 0.5 from 0 as well
    assert Evidence(-0.5, -1.8, +0.8, 40, "greater").segments_needed(half) == 271
    # equivalence ±1: effect 0.2 is 0.8 from +1, half-width 1.0 → 40·(1/0.8)² = 62.5
    assert Evidence(0.2, -0.8, 1.2, 40, "within", margin=1.0).segments_needed(half) == 63
    # an effect outside the margin: to contradict, 0.5 from +1, half-width 1 → 160
    assert Evidence(1.5, 0.5, 2.5, 40, "within", margin=1.0).segments_needed(half) == 160
    # on a bound: no sample size moves it
    assert Evidence(-1.0, -2.0, 0.0, 40, "greater", margin=1.0).segments_needed() is None


@pytest.mark.parametrize("power, expected", [
    # 95 % interval (z 1.95996): 40·((1.95996 + z_power)/1.95996 · 1.3/0.5)²,
    # z_power 0.84162 (80 %) → 552.5, 1.28155 (90 %) → 739.4
    (0.8, 553), (0.9, 740),
])
def test_segments_needed_at_a_power(power, expected):
    e = Evidence(-0.5, -1.8, +0.8, 40, "greater")
    assert e.segments_needed(power) == expected
    with pytest.raises(ValueError, match="power"):
        e.segments_needed(1.0)


def test_an_equivalence_interval_is_the_90_percent_one():
    # differences 0..9 (each once): resampled means; the 90 % interval sits inside the 95 %
    a, b = [0.0] * 10, [float(i) for i in range(10)]
    wide = mean_difference(a, b, claimed="greater", margin=1.0, resamples=4000)
    narrow = mean_difference(a, b, claimed="within", margin=10.0, resamples=4000)
    assert wide.effect == narrow.effect == 4.5
    assert wide.low < narrow.low < 4.5 < narrow.high < wide.high
    assert narrow.level == 0.90 and wide.level == 0.95 and "(90%)" in narrow.text()
    assert narrow.verdict == "holds"  # 4.5 ± about 1.5 inside ±10


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="one of each per segment"):
        bleu_difference(REFS[:4], REFS, REFS, claimed="greater")
    with pytest.raises(ValueError, match="'greater' or 'less'"):
        mean_difference([1, 2], [2, 3], claimed="bigger")
    with pytest.raises(ValueError, match="needs a margin"):
        mean_difference([1, 2], [2, 3], claimed="within")
    with pytest.raises(ValueError, match="margin"):
        Evidence(0.0, -1.0, 1.0, 4, "greater", margin=-1.0)
    with pytest.raises(ValueError, match="at least 2 segments"):
        mean_difference([1], [2], claimed="greater")


# --- bootstrap over sweep rows: hand-made records of three settings on three segments ---

SOURCE_MS = [1000.0, 2000.0, 4000.0]
SENTENCES = ["el gato come pan", "mi perro bebe agua", "los niños leen libros"]


def _setting(tmp_path, name, fraction, predictions=SENTENCES):
    """Records whose four words are all written at ``fraction`` of the source. By hand,
    SimulEval's AL with |Y*| = 4: all at the end (fraction 1) stops at the first word, AL =
    |X|; all at d < |X|: AL = d − (0 + 1 + 2 + 3)/4 · |X|/4 = d − 3|X|/8."""
    from simul.records import Record, write

    records = [Record(index=i, prediction=p, delays=[fraction * ms] * 4, elapsed=[],
                      prediction_length=4, reference=ref, source_length=ms, source=[],
                      segment_id=f"seg{i}")
               for i, (p, ref, ms) in enumerate(zip(predictions, SENTENCES, SOURCE_MS,
                                                    strict=True))]
    return str(write(records, tmp_path / f"{name}.jsonl"))


@pytest.fixture
def rows(tmp_path):
    import pandas as pd

    wrong = ["uno dos tres cuatro"] * 3
    return pd.DataFrame([
        {"setting": "early", "param_k": 1, "param_s": 0, "records": _setting(tmp_path, "e", 0.5)},
        {"setting": "mid", "param_k": 2, "param_s": 0, "records": _setting(tmp_path, "m", 0.75)},
        {"setting": "late", "param_k": 3, "param_s": 0, "records": _setting(tmp_path, "l", 1.0)},
        {"setting": "wrong", "param_k": 4, "param_s": 1,
         "records": _setting(tmp_path, "w", 1.0, wrong)}])


def test_segments_rescore_the_rows_as_score_records_does(rows):
    from simul.analysis.claims import Segments
    from simul.metrics.score import score_records
    from simul.records import read

    scores = Segments(rows, metrics=("AL", "LAAL")).scores()
    for row in scores.itertuples():
        ref = score_records(read(row.records))
        assert (row.BLEU, row.AL, row.LAAL) == pytest.approx((ref["BLEU"], ref["AL"],
                                                              ref["LAAL"]))
    # AL by hand: |X|/8 at half the source, 3|X|/8 at three quarters, |X| at the end
    assert scores.AL.tolist()[:3] == pytest.approx([7000 / 24, 21000 / 24, 7000 / 3])
    assert scores.BLEU.tolist() == pytest.approx([100.0, 100.0, 100.0, 0.0])


def test_segments_of_two_pairs_score_each_against_its_own_references(tmp_path):
    """Two pairs decoded from the same source segments (en-de beside en-es): each setting's
    BLEU is against its own references, as sacrebleu scores it alone."""
    import pandas as pd
    import sacrebleu

    from simul.analysis.claims import Segments, bootstrap, difference
    from simul.records import Record, write

    german = ["eins zwei drei vier", "fünf sechs sieben acht", "neun zehn elf zwölf"]
    spanish = ["uno dos tres cuatro", "cinco seis siete ocho", "nueve diez once doce"]
    guesses = ["eins zwei drei fünf", "fünf sechs sieben acht", "neun zehn"]

    def setting(name, predictions, references):
        records = [Record(index=i, prediction=p, delays=[500.0] * len(p.split()), elapsed=[],
                          prediction_length=len(p.split()), reference=r, source_length=ms,
                          source=[], segment_id=f"seg{i}")
                   for i, (p, r, ms) in enumerate(zip(predictions, references, SOURCE_MS,
                                                      strict=True))]
        return str(write(records, tmp_path / f"{name}.jsonl"))

    rows = pd.DataFrame([{"setting": "de", "records": setting("de", guesses, german)},
                         {"setting": "es", "records": setting("es", spanish, spanish)}])
    scores = Segments(rows).scores()
    assert scores.BLEU.tolist() == pytest.approx(
        [sacrebleu.corpus_bleu(guesses, [german]).score, 100.0])
    e = bootstrap(rows, difference({"setting": "de"}, {"setting": "es"}), claimed="greater")
    assert e.effect == pytest.approx(100.0 - sacrebleu.corpus_bleu(guesses, [german]).score)


def test_bootstrap_of_a_difference_between_two_settings(rows):
    from simul.analysis.claims import bootstrap, difference

    e = bootstrap(rows, difference({"setting": "early"}, {"setting": "late"}, "AL"),
                  claimed="greater")
    # late − early = 7|X|/8 per segment: 875, 1750, 3500 ms; every resample's mean lies
    # between the smallest and the largest
    assert e.effect == pytest.approx((875 + 1750 + 3500) / 3) and e.n == 3
    assert 875 <= e.low <= e.effect <= e.high <= 3500 and e.verdict == "holds"
    e = bootstrap(rows, difference({"setting": "late"}, {"setting": "wrong"}), claimed="greater")
    assert (e.effect, e.low, e.high) == pytest.approx((-100.0, -100.0, -100.0))
    assert e.verdict == "contradicted"


def test_weakest_step_along_a_grid(rows):
    from simul.analysis.claims import bootstrap, weakest_step

    grid = rows[rows.setting != "wrong"]
    # AL steps from k=1 to 2 and 2 to 3: |X|/4 and 5|X|/8 per segment; the smallest is the
    # first, mean |X| / 4 = 583.3 ms on the full sample
    e = bootstrap(grid, weakest_step(by="param_s", along="param_k"), claimed="greater")
    assert e.effect == pytest.approx(7000 / 3 / 4) and e.verdict == "holds"
    e = bootstrap(grid, weakest_step(by="param_s", along="param_k", increasing=False),
                  claimed="less")
    assert e.effect == pytest.approx(7000 / 3 * 5 / 8) and e.verdict == "contradicted"


def test_resamples_computed_in_worker_processes_are_those_computed_here(rows, monkeypatch):
    """A slow bootstrap spreads its resamples over worker processes (the statistic, a
    closure, travels pickled); the values, in order, are those of this process alone. A
    statistic that cannot be pickled stays here."""
    import threading

    import numpy as np

    from simul.analysis import claims
    from simul.analysis.claims import resampling as boot

    data = claims.Segments(rows[rows.setting != "wrong"], metrics=("AL",))
    statistic = claims.weakest_step(by="param_s", along="param_k")
    resamples = boot.resamples_of(data.n, 50, seed=1)
    monkeypatch.setattr(boot, "WORKERS", 1)
    here = boot.on_resamples(statistic, data, resamples)
    assert len(set(here.tolist())) > 3  # the resamples differ

    pools = []
    started = boot.statistics_pool
    monkeypatch.setattr(boot, "statistics_pool", lambda n: pools.append(n) or started(n))
    monkeypatch.setattr(boot, "WORKERS", 3)
    monkeypatch.setattr(boot, "PARALLEL_MIN_S", 0.0)
    np.testing.assert_array_equal(boot.on_resamples(statistic, data, resamples), here)
    assert pools == [2]

    lock = threading.Lock()

    def locked(rows):
        with lock:
            return statistic(rows)
    np.testing.assert_array_equal(boot.on_resamples(locked, data, resamples), here)
    assert pools == [2]  # not sent: computed here
    monkeypatch.setattr(boot, "PARALLEL_MIN_S", 1e9)  # too quick to be worth the workers
    np.testing.assert_array_equal(boot.on_resamples(statistic, data, resamples), here)
    assert pools == [2]


def test_settings_on_other_segments_are_refused(rows, tmp_path):
    from simul.analysis.claims import Segments
    from simul.records import Record, write

    other = write([Record(index=0, prediction="a", delays=[10.0], elapsed=[],
                          prediction_length=1, reference="a", source_length=100.0, source=[],
                          segment_id="elsewhere")], tmp_path / "other.jsonl")
    bad = rows.copy()
    bad.loc[3, "records"] = str(other)
    with pytest.raises(ValueError, match="other.jsonl: not the segments"):
        Segments(bad)


def test_claims_table_has_verdicts(tmp_path):
    from simul.analysis.claims import Claim, Evidence, report

    table = report([Claim.measured("X-1", "B beats A", Evidence(2.0, -1.0, 5.0, 40, "greater")),
                    Claim("X-2", "CA ≥ NCA everywhere", False, "one setting below")], tmp_path)
    assert table.verdict.tolist() == ["undecided", "contradicted"]
    assert table.holds.tolist() == [False, False]
    # half-width 3 for an effect of 2: at 80 % power 40 · (1.4294 · 3/2)² = 183.9 segments
    # would decide it (90 at even odds)
    assert table.needs_more.tolist()[0] == 184 and table.n.tolist()[0] == 40
    assert (tmp_path / "claims.csv").is_file()


def test_curve_gap_within_a_latency_range():
    import pandas as pd

    from simul.analysis.claims import curve_gap

    a = pd.DataFrame({"AL": [0, 100], "BLEU": [10.0, 20.0]})
    b = pd.DataFrame({"AL": [0, 100], "BLEU": [10.0, 10.0]})
    # a − b grows linearly 0 → 10: mean 5 over 0–100 ms, 7.5 over 50–100 ms
    assert curve_gap(a, b) == pytest.approx(5.0)
    assert curve_gap(a, b, min_x=50) == pytest.approx(7.5)
    assert math.isnan(curve_gap(a, b, min_x=150))
    # up to a latency: 0 → 5 over 0–50 ms, mean 2.5; a window 20–40 ms: 2 → 4, mean 3
    assert curve_gap(a, b, max_x=50) == pytest.approx(2.5)
    assert curve_gap(a, b, min_x=20, max_x=40) == pytest.approx(3.0)
    assert math.isnan(curve_gap(a, b, min_x=60, max_x=40))


def test_nothing_to_compare_is_undecided():
    e = Evidence(math.nan, math.nan, math.nan, 40, "greater")
    assert e.verdict == "undecided" and e.segments_needed() is None


def test_a_quick_run_does_not_decide_what_needs_the_full_run(tmp_path):
    from simul.analysis.claims import QUICK_UNDECIDED, Claim, report

    found = [Claim.measured("X-AL", "AL grows with k", Evidence(-300.0, -500.0, -100.0, 4,
                                                                "greater"),
                            "s=10: AL 1776, 941", needs_full_run=True),
             Claim("X-CA", "CA ≥ NCA everywhere", True, "all settings")]
    quick = report(found, tmp_path, quick=True)
    # the 4 segments' interval says "contradicted": a quick run says it cannot decide
    assert quick.verdict.tolist() == [f"{QUICK_UNDECIDED}, n = 4", "holds"]
    assert quick.holds.tolist() == [False, True]
    # the numbers are still shown, and a property claim says why it has none
    assert quick.loc[0, ["effect", "low", "high"]].tolist() == [-300.0, -500.0, -100.0]
    assert quick.loc[0, "no_interval"] == "" and "property" in quick.loc[1, "no_interval"]
    md = (tmp_path / "claims.md").read_text()
    assert md.startswith("Quick run (4 segments): too few to decide")
    assert "not decided: quick run, n = 4" in md
    # the same claims on a full run: the interval decides
    full = report(found, tmp_path / "full")
    assert full.verdict.tolist() == ["contradicted", "holds"]
    assert not (tmp_path / "full" / "claims.md").read_text().startswith("Quick run")


def test_a_quick_run_measures_a_full_run_finding_by_its_effect_alone(rows, tmp_path,
                                                                    monkeypatch):
    """In a quick run a finding that needs the full run is not resampled: its effect on all
    segments and no interval (on a handful of segments a bootstrap has a few distinct
    resamples, its interval far too narrow), and the table says why. A finding that a few
    segments decide keeps its interval."""
    import pandas as pd

    from simul.analysis.claims import Finding, difference, report, resampling

    def finding(needs_full_run):
        return Finding(f"X-AL-{needs_full_run}", "simul", "a test", "made-up rows",
                       "AL late − early", "two settings", "superiority", claimed="greater",
                       needs_full_run=needs_full_run)

    late_minus_early = difference({"setting": "early"}, {"setting": "late"}, "AL")
    monkeypatch.setattr(resampling, "QUICK", True)
    with monkeypatch.context() as m:
        m.setattr(resampling, "on_resamples", lambda *a, **k: pytest.fail("resampled"))
        alone = finding(True).measure(rows, late_minus_early)
    e = alone.evidence
    # late − early = 7|X|/8 per segment: 875, 1750, 3500 ms
    assert e.effect == pytest.approx((875 + 1750 + 3500) / 3) and e.n == 3
    assert math.isnan(e.low) and math.isnan(e.high) and e.verdict == "undecided"
    assert e.segments_needed() is None and e.replay is not None
    decided = finding(False).measure(rows, late_minus_early)
    assert 875 <= decided.evidence.low <= decided.evidence.high <= 3500
    assert decided.verdict == "holds"
    table = report([alone, decided], tmp_path, quick=True)
    assert table.verdict.tolist() == ["not decided: quick run, n = 3", "holds"]
    assert table.no_interval[0].startswith("a quick run's effect alone")
    assert table.no_interval[1] == "" and pd.isna(table.needs_more[0])
    monkeypatch.setattr(resampling, "QUICK", False)  # a full run resamples it
    assert finding(True).measure(rows, late_minus_early).verdict == "holds"


def test_a_claims_table_says_why_an_interval_is_missing(tmp_path):
    import pandas as pd

    from simul.analysis.claims import Claim, evaluate, report

    point = evaluate(pd.DataFrame({"AL": [1.0, 3.0]}), lambda r: r.AL.diff().iloc[-1],
                     claimed="greater")  # rows without records: a point estimate
    table = report([Claim.measured("A", "a", point),
                    Claim.measured("B", "b", Evidence(math.nan, math.nan, math.nan, 4,
                                                      "greater")),
                    Claim("C", "c", True, "", no_interval="one record: nothing to resample"),
                    Claim.measured("D", "d", Evidence(2.0, 1.0, 3.0, 4, "greater"))])
    assert table.effect.tolist()[0] == 2.0 and table.n.tolist()[0] == 0
    assert "point estimate" in table.no_interval[0]
    assert "undefined" in table.no_interval[1]
    assert table.no_interval[2] == "one record: nothing to resample"
    assert table.no_interval[3] == ""


def test_the_run_summary_counts_what_a_quick_run_left_undecided(tmp_path):
    from simul.analysis.claims import Claim, report
    from simul.commands import reproduce

    report([Claim.measured("T-k", "AL grows with k", Evidence(-834.0, -1459.0, -100.0, 4,
                                                              "greater"),
                           needs_full_run=True),
            Claim("T-CA", "AL_CA ≥ AL", True, "")], tmp_path / "tutorial", quick=True)
    table = reproduce.claims_summary(tmp_path, ["tutorial"])
    assert table.verdict.tolist() == ["not decided: quick run, n = 4", "holds"]
    assert table["effect [95 % interval]"].tolist()[0] == "-834.0 [-1459.0, -100.0]"
    assert reproduce.verdict_counts(table) == ("1 hold, 0 contradicted, 0 undecided, "
                                               "1 not decided (quick run)")
