"""Latency metrics: hand-worked cases, and SimulEval 1.1's own scorers on the same records.

Every expected value below is worked out by hand in the comment above its case; none is
computed with the formula under test. Notation: |X| source ms, R reference words,
|Y| hypothesis words, 1/γ the ideal ms per word.
"""

import json
import math

import numpy as np
import pytest

from simul.metrics.latency import (
    COMPUTATION_AWARE,
    LATENCY,
    PAPER_METRICS,
    SIMULEVAL_METRICS,
    al_n21_steps,
    corpus_latency,
    sentence_latency,
    steps_from_delays,
)

# (case id, delays, |X|, R, {metric: expected})
CASES = [
    # A. one word per second, |X| = 3000, R = |Y| = 3, so 1/γ = 1000 for every AL variant.
    #    AL: lags 1000−0, 2000−1000, 3000−2000 (τ = 3: d3 reaches |X|) → 3000/3 = 1000.
    #    DAL: d'_i = d_i (each ≥ previous + 1000) → same lags → 1000.
    #    AP: (1000 + 2000 + 3000) / (3000·3) = 6000/9000 = 2/3.
    #    ATD: source chunks 0–1000, 1000–2000, 2000–3000 make 300 ms tokens ending at
    #    300 600 900 1000 | 1300 1600 1900 2000 | 2300 ...; word t is paired with source
    #    token t (never more written than read): lags 1000−300, 2000−600, 3000−900
    #    = 700, 1400, 2100 → 1400.
    #    StartOffset 1000, EndOffset 3000−3000 = 0, RTF 3000/3000 = 1.
    ("A_one_word_per_second", [1000, 2000, 3000], 3000, 3,
     {"AL": 1000, "LAAL": 1000, "DAL": 1000, "AP": 2 / 3, "ATD": 1400,
      "StartOffset": 1000, "EndOffset": 0, "RTF": 1.0,
      "AL_N21": 1000, "AL_N21_orig": 1000, "AL_orig": 1000, "AL_M20": 1000, "AL_K22": 1000}),
    # B. a single word at 2500 ms, |X| = 4000, R = 5: no delay reaches |X|, τ = |Y| = 1.
    #    AL = LAAL = DAL = 2500 − 0 = 2500.  AP: 2500 / (4000·5) = 0.125.
    #    ATD: chunk 0–2500 = 8 tokens of 300 + one of 100; word 1 ↔ token 1 (ends 300):
    #    2500 − 300 = 2200.  StartOffset 2500, EndOffset 2500 − 4000 = −1500,
    #    RTF 2500/4000 = 0.625.
    ("B_single_word", [2500], 4000, 5,
     {"AL": 2500, "LAAL": 2500, "DAL": 2500, "AP": 0.125, "ATD": 2200,
      "StartOffset": 2500, "EndOffset": -1500, "RTF": 0.625,
      "AL_N21": 2500, "AL_N21_orig": 2500, "AL_orig": 2500, "AL_M20": 2500, "AL_K22": 2500}),
    # C. delays past the source length: [1200, 1500], |X| = 1000, R = 2.
    #    AL: d1 = 1200 > |X| → AL = d1 = 1200 (SimulEval's rule; τ = 1 says the same).
    #    DAL: 1/γ = 1000/2 = 500; d'1 = 1200, d'2 = max(1500, 1200 + 500) = 1700;
    #    lags 1200 − 0, 1700 − 500 → 1200.   AP: 2700 / (1000·2) = 1.35.
    #    ATD: chunk 1 = 0–1200 = 4 tokens (300 600 900 1200), chunk 2 = 1200–1500 = 1 token
    #    (1500). Word 1 ↔ token 1: 1200 − 300 = 900; word 2 (1 written, 4 read before its
    #    chunk) ↔ token 2: 1500 − 600 = 900 → 900.
    #    StartOffset 1200, EndOffset 1500 − 1000 = 500, RTF 1500/1000 = 1.5.
    ("C_delays_past_source", [1200, 1500], 1000, 2,
     {"AL": 1200, "LAAL": 1200, "DAL": 1200, "AP": 1.35, "ATD": 900,
      "StartOffset": 1200, "EndOffset": 500, "RTF": 1.5,
      "AL_N21": 1200, "AL_N21_orig": 1200, "AL_orig": 1200, "AL_M20": 1200, "AL_K22": 1200}),
    # D. hypothesis much longer than the reference (Polák et al. 2022 §5.4):
    #    |Y| = 6 words at 0, 200, ..., 1000 ms, |X| = 1000, R = 2.
    #    AL: 1/γ = 1000/2 = 500; lags 0−0, 200−500, 400−1000, 600−1500, 800−2000,
    #    1000−2500 = 0, −300, −600, −900, −1200, −1500 (τ = 6) → −4500/6 = −750 < 0.
    #    LAAL: 1/γ = 1000/max(6, 2) = 1000/6; lags 0, 200 − 1000/6, 400 − 2000/6, ...
    #    = i·(200 − 1000/6) for i = 0..5 = i·100/3 → (0+1+2+3+4+5)·100/3 / 6 = 500/6.
    #    DAL: |Y| = 6, 1/γ = 1000/6 < 200, so d'_i = d_i and DAL = LAAL = 500/6.
    #    AP: 3000 / (1000·2) = 1.5 (SimulEval divides by R, so AP exceeds 1).
    #    ATD: chunk 1 (0–0) has no source token; each later chunk is one token of 200 ms.
    #    Word 1 ↔ token 0 (time 0): 0; word t ↔ token t−1 (ends at 200(t−1) = d_t): 0 → 0.
    #    AL_N21 (R) = AL = −750 and AL_N21_orig (|Y|) = LAAL = 500/6: one word per step.
    ("D_long_hypothesis", [0, 200, 400, 600, 800, 1000], 1000, 2,
     {"AL": -750, "LAAL": 500 / 6, "DAL": 500 / 6, "AP": 1.5, "ATD": 0,
      "StartOffset": 0, "EndOffset": 0, "RTF": 1.0,
      "AL_N21": -750, "AL_N21_orig": 500 / 6, "AL_orig": 500 / 6, "AL_M20": -750,
      "AL_K22": 500 / 6}),
    # E. hypothesis shorter than the reference: [1000, 4000], |X| = 4000, R = 8.
    #    AL = LAAL: 1/γ = 4000/8 = 500; lags 1000, 4000 − 500 = 3500 → 2250.
    #    DAL (|Y| = 2): 1/γ = 2000; d'2 = max(4000, 3000) = 4000; lags 1000, 2000 → 1500.
    #    AP: 5000 / (4000·8) = 0.15625.
    #    ATD: chunk 1 = 4 tokens (300 600 900 1000), chunk 2 = 3000 ms = 10 tokens;
    #    word 1 ↔ token 1: 1000 − 300 = 700; word 2 ↔ token 2: 4000 − 600 = 3400 → 2050.
    #    AL_N21_orig: 1/γ = 4000/2 = 2000 → (1000 + 2000)/2 = 1500.
    ("E_short_hypothesis", [1000, 4000], 4000, 8,
     {"AL": 2250, "LAAL": 2250, "DAL": 1500, "AP": 0.15625, "ATD": 2050,
      "StartOffset": 1000, "EndOffset": 0, "RTF": 1.0,
      "AL_N21": 2250, "AL_N21_orig": 1500, "AL_orig": 1500, "AL_M20": 2250, "AL_K22": 2250}),
    # F. all writes at one step, after the whole source (offline): 4 × 3000, |X| = 3000, R = 4.
    #    AL: d1 reaches |X| → τ = 1 → 3000. DAL: 1/γ = 750; d' = 3000, 3750, 4500, 5250;
    #    lags 3000 − 0, 3750 − 750, 4500 − 1500, 5250 − 2250 = 3000 each → 3000.
    #    AP: 12000 / (3000·4) = 1.  ATD: one chunk of 10 tokens; word t ↔ token t (300t):
    #    2700, 2400, 2100, 1800 → 2250.
    #    AL_N21 (eq. 6 taken literally): one step, w1 = 4, τ = 1 → (3000 − 0)·4 / 1 = 12000;
    #    AL_orig (one term per word): τ = 1 → 3000.
    ("F_all_at_one_step", [3000, 3000, 3000, 3000], 3000, 4,
     {"AL": 3000, "LAAL": 3000, "DAL": 3000, "AP": 1.0, "ATD": 2250,
      "StartOffset": 3000, "EndOffset": 0, "RTF": 1.0,
      "AL_N21": 12000, "AL_N21_orig": 12000, "AL_orig": 3000, "AL_M20": 3000, "AL_K22": 3000}),
    # G. two words per step: [1000, 1000, 2000, 2000], |X| = 2000, R = |Y| = 4, 1/γ = 500.
    #    AL: lags 1000, 1000 − 500, 2000 − 1000 (τ = 3) → 2500/3.
    #    AL_N21: steps (1000, 2 words), (2000, 2 words), τ = 2:
    #    [(1000 − 0)·2 + (2000 − 500)·2] / 2 = 5000/2 = 2500.
    #    DAL: d' = 1000, max(1000, 1500) = 1500, 2000, max(2000, 2500) = 2500;
    #    lags 1000, 1000, 1000, 1000 → 1000.   AP: 6000 / (2000·4) = 0.75.
    #    ATD: chunk 1 = 0–1000 (4 tokens, token 2 ends 600), chunk 2 = 1000–2000 (4 tokens,
    #    ends 1300 1600 1900 2000). Words 1, 2 ↔ tokens 1, 2: 1000 − 300, 1000 − 600;
    #    words 3, 4 ↔ tokens 3, 4: 2000 − 900, 2000 − 1000 → (700+400+1100+1000)/4 = 800.
    ("G_two_words_per_step", [1000, 1000, 2000, 2000], 2000, 4,
     {"AL": 2500 / 3, "LAAL": 2500 / 3, "DAL": 1000, "AP": 0.75, "ATD": 800,
      "StartOffset": 1000, "EndOffset": 0, "RTF": 1.0,
      "AL_N21": 2500, "AL_N21_orig": 2500, "AL_orig": 2500 / 3, "AL_M20": 2500 / 3,
      "AL_K22": 2500 / 3}),
]

PARAMS = [pytest.param(delays, x, r, name, value, id=f"{case}-{name}")
          for case, delays, x, r, expected in CASES for name, value in expected.items()]


def test_every_case_covers_every_metric():
    for case, *_, expected in CASES:
        assert set(expected) == set(LATENCY) == set(SIMULEVAL_METRICS + PAPER_METRICS), case


@pytest.mark.parametrize("delays, source_length, reference_length, name, expected", PARAMS)
def test_hand_worked(delays, source_length, reference_length, name, expected):
    got = sentence_latency(name, delays, source_length, reference_length)
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-9)


@pytest.mark.parametrize("case, delays, source_length, reference_length, expected", CASES,
                         ids=[c[0] for c in CASES])
def test_k22_max_length_al_is_laal(case, delays, source_length, reference_length, expected):
    """Polák et al.'s eq. (6), written in time, is what SimulEval calls LAAL."""
    laal = sentence_latency("LAAL", delays, source_length, reference_length)
    k22 = sentence_latency("AL_K22", delays, source_length, reference_length)
    assert k22 == pytest.approx(laal, rel=1e-12, abs=1e-9)


def test_negative_al_but_not_laal():
    # case D: AL = −750 < 0 although every delay is ≥ 0; LAAL = 500/6 > 0
    delays, x, r = [0, 200, 400, 600, 800, 1000], 1000, 2
    assert sentence_latency("AL", delays, x, r) < 0
    assert sentence_latency("LAAL", delays, x, r) > 0


def test_empty_prediction():
    # no output word: a sentence has no latency ...
    for name in LATENCY:
        with pytest.raises(ValueError, match="no output word"):
            sentence_latency(name, [], 1000, 3)
    # ... and the corpus mean leaves it out, as SimulEval does: mean(1000 (case A), 2500
    # (case B)) = 1750, the empty utterance in between does not count
    assert corpus_latency("AL", [[1000, 2000, 3000], [], [2500]], [3000, 500, 4000],
                          [3, 2, 5]) == 1750
    assert math.isnan(corpus_latency("AL", [[], []], [1000, 1000], [1, 1]))


def test_corpus_is_mean_of_sentences():
    # AL of cases A (1000) and E (2250): (1000 + 2250) / 2 = 1625
    assert corpus_latency("AL", [[1000, 2000, 3000], [1000, 4000]], [3000, 4000],
                          [3, 8]) == 1625


# CA: compute time zero → elapsed = delays → CA = NCA.
@pytest.mark.parametrize("name", sorted(COMPUTATION_AWARE))
@pytest.mark.parametrize("case, delays, source_length, reference_length, expected", CASES,
                         ids=[c[0] for c in CASES])
def test_ca_equals_nca_without_compute(name, case, delays, source_length, reference_length,
                                       expected):
    nca = sentence_latency(name, delays, source_length, reference_length)
    ca = sentence_latency(name, delays, source_length, reference_length, elapsed=delays)
    assert ca == nca


# CA with compute: delays [1000, 2000, 3000] (case A: every NCA value is in CASES),
# |X| = 3000, R = 3, compute 100, 200, 300 ms before words 1, 2, 3, so
# elapsed = [1000+100, 2000+300, 3000+600] = [1100, 2300, 3600].
#   AL_CA = LAAL_CA: 1/γ = 1000; lags 1100, 2300 − 1000, 3600 − 2000 (τ = 3) → 4000/3.
#   DAL_CA: d' = 1100, max(2300, 2100) = 2300, max(3600, 3300) = 3600 → same 4000/3.
#   AP_CA: 7000 / 9000 = 7/9.
#   ATD_CA: compute per word 100, 200, 300; T1 = 1000 + 100 = 1100,
#   T2 = max(2000, 1100) + 200 = 2200, T3 = max(3000, 2200) + 300 = 3300; source tokens
#   as in case A (300, 600, 900): 800, 1600, 2400 → 1600 (NCA: 1400).
#   StartOffset_CA 1100, EndOffset_CA 600, RTF_CA 3600/3000 = 1.2.
#   AL_M20_CA: τ = 3 from the delays → same as AL_CA, 4000/3.
CA_DELAYS, CA_ELAPSED = [1000, 2000, 3000], [1100, 2300, 3600]
CA_EXPECTED = {"AL": 4000 / 3, "LAAL": 4000 / 3, "DAL": 4000 / 3, "AP": 7 / 9, "ATD": 1600,
               "StartOffset": 1100, "EndOffset": 600, "RTF": 1.2, "AL_M20": 4000 / 3}
NCA_CASE_A = CASES[0][4]


@pytest.mark.parametrize("name", sorted(CA_EXPECTED))
def test_ca_with_compute_is_larger(name):
    assert set(CA_EXPECTED) == set(COMPUTATION_AWARE)
    ca = sentence_latency(name, CA_DELAYS, 3000, 3, elapsed=CA_ELAPSED)
    assert ca == pytest.approx(CA_EXPECTED[name], rel=1e-12)
    assert ca > NCA_CASE_A[name]


def test_al_m20_ca_cuts_where_the_source_was_read():
    # delays [1000, 2000, 3000], elapsed [1100, 3100, 4600], |X| = 3000, R = 3, 1/γ = 1000.
    # SimulEval's AL_CA cuts at the first elapsed ≥ |X| (word 2): (1100 + 3100 − 1000)/2
    # = 1600. Ma et al. 2020 cut at the first word written after reading all (word 3):
    # (1100 + 2100 + 4600 − 2000)/3 = 5800/3.
    delays, elapsed = [1000, 2000, 3000], [1100, 3100, 4600]
    assert sentence_latency("AL", delays, 3000, 3, elapsed=elapsed) == 1600
    assert sentence_latency("AL_M20", delays, 3000, 3, elapsed=elapsed) == pytest.approx(
        5800 / 3, rel=1e-12)


def test_no_ca_for_step_and_max_length_variants():
    for name in ("AL_N21", "AL_N21_orig", "AL_orig", "AL_K22"):
        with pytest.raises(ValueError, match="no computation-aware form"):
            sentence_latency(name, [1000], 1000, 1, elapsed=[1000])


def test_n21_steps():
    # steps from word delays: runs of equal delays
    assert steps_from_delays([500, 500, 900, 1000, 1000, 1000]) == ([500, 900, 1000],
                                                                    [2, 1, 3])
    # eq. (6) with explicit steps, a step writing nothing included: |X| = 1000, target 2,
    # 1/γ = 500; steps (400, 1), (600, 0), (1000, 1): τ = 3,
    # [(400 − 0)·1 + (600 − 500)·0 + (1000 − 1000)·1] / 3 = 400/3
    assert al_n21_steps([400, 600, 1000], [1, 0, 1], 1000, 2) == pytest.approx(400 / 3)


@pytest.mark.parametrize("bad", [
    dict(source_length=0), dict(reference_length=0), dict(name="XL"),
])
def test_refused_inputs(bad):
    args = dict(name="AL", delays=[100], source_length=1000, reference_length=1) | bad
    with pytest.raises(ValueError):
        sentence_latency(**args)


# ---------------------------------------------------------------------------------------
# SimulEval's own scorers on the same records


def _simuleval_scores(log_path, names, computation_aware):
    scorers = pytest.importorskip("simuleval.evaluator.scorers.latency_scorer",
                                  reason="simuleval 1.1.4 (pip install --no-deps simuleval"
                                         "==1.1.4 textgrid) is not installed")
    from simuleval.evaluator.instance import LogInstance

    with open(log_path) as f:
        instances = {k: LogInstance(line) for k, line in enumerate(f)}
    return {name: scorers.LATENCY_SCORERS_DICT[name](
        computation_aware=computation_aware, use_ref_len=True)(instances) for name in names}


@pytest.mark.filterwarnings("ignore:The 'warn' method is deprecated:DeprecationWarning")
def test_same_as_simuleval(tmp_path):
    from simul.metrics.score import score_records
    from simul.records import read

    # the hand-worked cases, their references of R words, elapsed with some compute time,
    # and one empty prediction (both sides leave it out of the means)
    lines = []
    for k, (_case, delays, x, r, _expected) in enumerate(CASES):
        elapsed = [d + 37.5 * (i + 1) * (k + 1) for i, d in enumerate(delays)]
        lines.append(dict(index=k, prediction=" ".join(f"w{i}" for i in range(len(delays))),
                          delays=delays, elapsed=elapsed, prediction_length=len(delays),
                          reference=" ".join(["ref"] * r), source_length=x, source=["a.wav"]))
    lines.append(dict(index=len(lines), prediction="", delays=[], elapsed=[],
                      prediction_length=0, reference="ein Satz", source_length=2000.0,
                      source=["b.wav"]))
    log = tmp_path / "instances.log"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))

    ours = score_records(read(log))
    theirs = _simuleval_scores(log, SIMULEVAL_METRICS, computation_aware=False)
    theirs |= {f"{name}_CA": value for name, value in
               _simuleval_scores(log, SIMULEVAL_METRICS, computation_aware=True).items()}
    assert set(theirs) <= set(ours)
    for name, value in theirs.items():
        assert ours[name] == value, name

    from simuleval.evaluator.instance import LogInstance
    from simuleval.evaluator.scorers.quality_scorer import SacreBLEUScorer

    with open(log) as f:
        instances = {k: LogInstance(line) for k, line in enumerate(f)}
    assert ours["BLEU"] == SacreBLEUScorer()(instances)


def test_metric_lists_come_from_the_registry():
    # SimulEval's metrics, then the papers' variants, each in the order they are registered
    assert SIMULEVAL_METRICS == ("AL", "LAAL", "DAL", "AP", "ATD", "StartOffset", "EndOffset",
                                 "RTF")
    assert PAPER_METRICS == ("AL_N21", "AL_N21_orig", "AL_orig", "AL_M20", "AL_K22")


@pytest.mark.parametrize("seed", range(5))
def test_computation_aware_latency_is_never_below_its_ideal_form(seed):
    # by construction, not a paper's claim: a record whose elapsed time is below its delay
    # is refused (simul.records.check), and every latency metric grows with the times it is
    # given, so AL_CA ≥ AL, LAAL_CA ≥ LAAL … on any record simul accepts
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n = int(rng.integers(1, 8))
        source = float(rng.integers(500, 5000))
        delays = np.sort(rng.uniform(0, source, n))
        elapsed = np.maximum.accumulate(delays + rng.uniform(0, 800, n))
        reference = int(rng.integers(1, 10))
        for metric in ("AL", "LAAL", "DAL", "AP", "ATD"):
            ideal = sentence_latency(metric, list(delays), source, reference)
            aware = sentence_latency(metric, list(delays), source, reference, list(elapsed))
            assert aware >= ideal - 1e-9, (metric, list(delays), list(elapsed))
