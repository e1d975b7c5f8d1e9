"""Claims as evidence: paired bootstrap effects, 95 % intervals and three-valued verdicts."""

import pytest

from simul.claims import Evidence, bleu_difference, mean_difference

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
    assert e.segments_needed() == pytest.approx(5 * (half / 24.0) ** 2, abs=1)
    assert e.segments_needed() > 5


def test_verdict_table():
    cases = [((2.0, 1.0, 3.0), "greater", "holds"), ((2.0, 1.0, 3.0), "less", "contradicted"),
             ((-2.0, -3.0, -1.0), "less", "holds"), ((0.5, -1.0, 2.0), "greater", "undecided"),
             ((1.0, 0.0, 2.0), "greater", "undecided")]  # an interval touching 0 decides nothing
    for (effect, low, high), claimed, verdict in cases:
        assert Evidence(effect, low, high, 40, claimed).verdict == verdict


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="one of each per segment"):
        bleu_difference(REFS[:4], REFS, REFS, claimed="greater")
    with pytest.raises(ValueError, match="'greater' or 'less'"):
        mean_difference([1, 2], [2, 3], claimed="bigger")
    with pytest.raises(ValueError, match="at least 2 segments"):
        mean_difference([1], [2], claimed="greater")
