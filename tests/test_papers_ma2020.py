"""simul.papers.ma2020: spec, table layouts and claims on hand-made sweep summaries."""

from types import SimpleNamespace

import pandas as pd
import pytest

from simul.corpus.mustc import Alignment, Word
from simul.papers import ma2020
from simul.sweep import expand

NAN = float("nan")


def summary(changes=None) -> pd.DataFrame:
    """A sweep summary of two fixed steps, word and phoneme triggers (k = 1, 2) and offline.

    CA − NCA: Δt 120 → 500 and 480 (mean 490); Δt 280 → 300 and 220 (mean 260).
    500 ms buckets of AL_M20: fixed 120 → 0, 0; fixed 280 → 500, 500; word → 0, 500;
    phoneme → 0, 0.
    """
    rows = [  # trigger, step_ms, k, BLEU, AL_M20, AL_M20_CA
        ("fixed", 120.0, 1, 2.0, 300.0, 800.0),
        ("fixed", 120.0, 2, 3.0, 420.0, 900.0),
        ("fixed", 280.0, 1, 8.0, 500.0, 800.0),
        ("fixed", 280.0, 2, 12.0, 780.0, 1000.0),
        ("word", NAN, 1, 10.0, 450.0, 700.0),
        ("word", NAN, 2, 15.0, 720.0, 950.0),
        ("phoneme", NAN, 1, 1.0, 200.0, 900.0),
        ("phoneme", NAN, 2, 2.0, 280.0, 1000.0),
    ]
    table = pd.DataFrame([
        {"model": "m", "split": "tst-COMMON", "policy": "predecision",
         "setting": f"{t}_{s}_{k}", "param_trigger": t, "param_step_ms": s, "param_k": k,
         "BLEU": b, "AL": al, "AL_M20": al, "AL_M20_CA": ca}
        for t, s, k, b, al, ca in rows
    ] + [{"model": "m", "split": "tst-COMMON", "policy": "offline", "setting": "default",
          "param_trigger": NAN, "param_step_ms": NAN, "param_k": NAN, "BLEU": 20.0,
          "AL": 3000.0, "AL_M20": 3000.0, "AL_M20_CA": 3100.0}])
    for (trigger, step, k), values in (changes or {}).items():
        mask = (table.param_trigger == trigger) & (table.param_k == k)
        if step is not None:
            mask &= table.param_step_ms == step
        for column, value in values.items():
            table.loc[mask, column] = value
    return table


def by_id(claims):
    return {c.id: c for c in claims}


def test_spec_has_the_fixed_grid_the_flexible_triggers_and_offline():
    spec = ma2020.spec(["m"], "en-es", ["tst-COMMON"], "out", steps_ms=[120, 280], ks=[1, 2],
                       triggers=["word"], max_utterances=5)
    assert spec["policies"] == [
        {"policy": "predecision", "fixed": {"trigger": "fixed"},
         "grid": {"step_ms": [120.0, 280.0], "k": [1, 2]}},
        {"policy": "predecision", "grid": {"trigger": ["word"], "k": [1, 2]}},
        {"policy": "offline"},
    ]
    assert "corpus" not in spec and spec["max_utterances"] == 5
    settings = expand(spec["policies"], "spec")
    assert [s.slug for s in settings] == [
        "trigger=fixed_step_ms=120.0_k=1", "trigger=fixed_step_ms=120.0_k=2",
        "trigger=fixed_step_ms=280.0_k=1", "trigger=fixed_step_ms=280.0_k=2",
        "trigger=word_k=1", "trigger=word_k=2", "default"]


def test_spec_without_flexible_triggers_and_with_a_corpus():
    spec = ma2020.spec(["m"], "en-es", ["dev"], "out", triggers=[], corpus="/data/mustc")
    assert [p["policy"] for p in spec["policies"]] == ["predecision", "offline"]
    assert spec["corpus"] == "/data/mustc"
    assert len(expand(spec["policies"], "spec")) == 5 * 10 + 1  # the paper's 50 and offline


def test_curves_label_and_order_the_settings():
    c = ma2020.curves(summary())
    assert c["pre-decision"].tolist() == [
        "fixed Δt = 120 ms", "fixed Δt = 120 ms", "fixed Δt = 280 ms", "fixed Δt = 280 ms",
        "oracle word boundaries", "oracle word boundaries",
        "oracle phoneme boundaries", "oracle phoneme boundaries"]
    assert c.k.tolist() == [1, 2] * 4
    assert c.step_ms.isna().tolist() == [False] * 4 + [True] * 4


def test_table_lists_every_point_then_offline():
    t = ma2020.table(summary())
    assert list(t.columns) == ["pre-decision", "k", "BLEU", "AL_M20", "AL_M20_CA", "CA − NCA"]
    assert len(t) == 9
    assert t["CA − NCA"].iloc[:4].tolist() == [500.0, 480.0, 300.0, 220.0]
    last = t.iloc[-1]
    assert last["pre-decision"] == "offline greedy" and last.BLEU == 20.0
    assert last.AL_M20 == 3000.0 and pd.isna(last.k)


def test_best_curves_pick_the_best_setting_per_500_ms_bucket():
    best = ma2020.best_curves(summary())
    got = list(zip(best.approach, best.bucket_ms, best.setting, best.BLEU, strict=True))
    assert got == [
        (ma2020.FIXED_BEST, 0.0, "Δt 120, k 2", 3.0),
        (ma2020.FIXED_BEST, 500.0, "Δt 280, k 2", 12.0),
        (ma2020.WORD, 0.0, "k 1", 10.0),
        (ma2020.WORD, 500.0, "k 2", 15.0),
        (ma2020.PHONEME, 0.0, "k 2", 2.0),
    ]


def test_best_curves_with_1000_ms_buckets():
    best = ma2020.best_curves(summary(), width_ms=1000)
    got = list(zip(best.approach, best.setting, best.BLEU, strict=True))
    assert got == [(ma2020.FIXED_BEST, "Δt 280, k 2", 12.0), (ma2020.WORD, "k 2", 15.0),
                   (ma2020.PHONEME, "k 2", 2.0)]


def test_ca_gap_per_step():
    gaps = ma2020.ca_gap(summary())
    assert gaps.step_ms.tolist() == [120.0, 280.0]
    assert gaps["CA − NCA (mean)"].tolist() == [490.0, 260.0]
    assert gaps["CA − NCA (min)"].tolist() == [480.0, 220.0]
    assert gaps["CA − NCA (max)"].tolist() == [500.0, 300.0]
    assert gaps["AL_M20 (mean)"].tolist() == [360.0, 640.0]
    assert gaps["BLEU (mean)"].tolist() == [2.5, 10.0]
    assert gaps.settings.tolist() == [2, 2]


def test_ca_gap_needs_the_ca_column():
    with pytest.raises(KeyError, match="AL_M20_CA"):
        ma2020.ca_gap(summary().drop(columns="AL_M20_CA"))


def test_claims_hold_on_the_hand_made_summary():
    found = by_id(ma2020.claims(summary()))
    assert list(found) == ["M20-AL-k", "M20-BLEU-k", "M20-AL-step", "M20-BLEU-step",
                           "M20-small-step", "M20-best-step", "M20-word", "M20-phoneme",
                           "M20-CA"]
    # Δt 280 ms shares no latency with Δt 120 ms: nothing to compare it with
    assert found.pop("M20-best-step").verdict == "undecided"
    assert all(c.holds for c in found.values()), [c for c in found.values() if not c.holds]
    # mean steps with k: AL 120, 280, 270, 80 (mean 187.5); BLEU 1, 4, 5, 1 (2.75);
    # with Δt at k 1, 2: AL 200, 360 (280); BLEU 6, 9 (7.5)
    assert [found[c].evidence.effect for c in ("M20-AL-k", "M20-BLEU-k", "M20-AL-step",
                                               "M20-BLEU-step")] == pytest.approx(
        [187.5, 2.75, 280.0, 7.5])
    assert [found[c].finding.half for c in ("M20-AL-k", "M20-BLEU-k")] == ["latency",
                                                                          "quality"]
    assert found["M20-AL-k"].detail == "4 curves, all monotone in AL_M20"
    assert found["M20-word"].detail == ("best per 500 ms bucket, word − fixed BLEU: "
                                        "0 ms +7.0, 500 ms +3.0")
    # at matched AL_M20 (450–720 ms) the word curve (10 → 15) lies above the fixed front
    # (3 → 8 over 420–500 ms, 8 → 12 over 500–780 ms) everywhere: +5.1 at 450 ms, +2.9 at
    # 500, +3.9 at 720; the mean gap lies between the smallest and the largest
    assert 2.93 < found["M20-word"].evidence.effect < 5.125
    assert found["M20-phoneme"].detail == "best BLEU over k: phoneme 2.0, word 15.0"
    assert "120 ms 490, 280 ms 260" in found["M20-CA"].detail


@pytest.mark.parametrize("changes, failing", [
    # latency falls a long way from k = 1 to k = 2 on the word curve: the mean step < 0
    ({("word", None, 2): {"AL_M20": -700.0}}, "M20-AL-k"),
    ({("word", None, 2): {"BLEU": 1.0}}, "M20-BLEU-k"),
    # Δt 280 reads less than Δt 120 at both k, and translates worse
    ({("fixed", 280.0, 1): {"AL_M20": 250.0}, ("fixed", 280.0, 2): {"AL_M20": 400.0}},
     "M20-AL-step"),
    ({("fixed", 280.0, 1): {"BLEU": 1.0}, ("fixed", 280.0, 2): {"BLEU": 2.0}},
     "M20-BLEU-step"),
    # the smallest step reaches the best quality
    ({("fixed", 120.0, 2): {"BLEU": 13.0}}, "M20-small-step"),
    # phoneme boundaries better than the best word setting
    ({("phoneme", None, 2): {"BLEU": 16.0}}, "M20-phoneme"),
    # the overhead grows with the step size
    ({("fixed", 280.0, 1): {"AL_M20_CA": 1100.0}, ("fixed", 280.0, 2): {"AL_M20_CA": 1300.0}},
     "M20-CA"),
])
def test_each_claim_fails_when_its_numbers_say_so(changes, failing):
    found = by_id(ma2020.claims(summary(changes)))
    assert found[failing].verdict == "contradicted"


@pytest.mark.parametrize("bleu_280, effect, verdict", [
    # Δt 200 (400 → 10, 800 → 14), 360 (11, 15): 280's curve 2 above 200's, 1 above 360's
    ((12.0, 16.0), 1.0, "holds"),
    # 280's curve 2 below 200's, 3 below 360's: beyond the 1-BLEU margin
    ((8.0, 12.0), -3.0, "contradicted"),
])
def test_best_step_by_hand(bleu_280, effect, verdict):
    rows = [("fixed", step, k, bleu, al) for step, b in ((200.0, (10.0, 14.0)),
                                                         (280.0, bleu_280),
                                                         (360.0, (11.0, 15.0)))
            for k, bleu, al in ((1, b[0], 400.0), (2, b[1], 800.0))]
    table = pd.DataFrame([{"model": "m", "split": "tst-COMMON", "policy": "predecision",
                           "setting": f"{t}_{s}_{k}", "param_trigger": t, "param_step_ms": s,
                           "param_k": k, "BLEU": b, "AL": al, "AL_M20": al}
                          for t, s, k, b, al in rows])
    claim = by_id(ma2020.claims(table))["M20-best-step"]
    assert claim.evidence.effect == pytest.approx(effect) and claim.verdict == verdict
    assert (claim.kind, claim.finding.margin) == ("non-inferiority", 1.0)


def with_step_440(gaps):
    """The summary plus Δt = 440 ms at k = 1, 2 with the given CA − NCA gaps."""
    table = summary()
    extra = [{"model": "m", "split": "tst-COMMON", "policy": "predecision",
              "setting": f"fixed_440_{k}", "param_trigger": "fixed", "param_step_ms": 440.0,
              "param_k": k, "BLEU": 14.0 + k, "AL": al, "AL_M20": al, "AL_M20_CA": al + gap}
             for k, al, gap in zip((1, 2), (800.0, 1200.0), gaps, strict=True)]
    return pd.concat([table, pd.DataFrame(extra)], ignore_index=True)


@pytest.mark.parametrize("gaps, verdict", [
    ((250.0, 250.0), "holds"),     # 490, 260, 250: largest − smallest Δt = −240 ms
    ((270.0, 290.0), "holds"),     # 490, 260, 280: a neighbour's rise, the trend still falls
    ((500.0, 520.0), "contradicted"),  # 490, 260, 510: the largest step costs the most
])
def test_ca_claim_compares_the_largest_step_with_the_smallest(gaps, verdict):
    claim = by_id(ma2020.claims(with_step_440(gaps)))["M20-CA"]
    assert claim.verdict == verdict
    assert claim.evidence.effect == pytest.approx(sum(gaps) / 2 - 490.0)
    assert claim.detail.startswith(f"mean CA − NCA per Δt: 120 ms 490, 280 ms 260, 440 ms "
                                   f"{sum(gaps) / 2:.0f}")


def test_word_claim_fails_when_fixed_steps_win_on_average():
    # bucket 0: word 4 vs fixed 3 (+1); bucket 500: word 8 vs fixed 12 (−4); at matched
    # latency (450–720 ms) the word curve (4 → 8) lies below the fixed front (≈ 5.2 → 11.1)
    table = summary({("word", None, 1): {"BLEU": 4.0}, ("word", None, 2): {"BLEU": 8.0}})
    claim = by_id(ma2020.claims(table))["M20-word"]
    assert claim.verdict == "contradicted"
    assert claim.detail.endswith("0 ms +1.0, 500 ms -4.0")


def test_word_claim_without_a_shared_bucket():
    # every word setting above 1000 ms, every fixed one below
    table = summary({("word", None, 1): {"AL_M20": 1100.0},
                     ("word", None, 2): {"AL_M20": 1200.0}})
    claim = by_id(ma2020.claims(table))["M20-word"]
    assert not claim.holds and claim.detail == "no latency bucket holds both"


def test_claims_without_flexible_triggers():
    table = summary()
    table = table[~table.param_trigger.isin(["word", "phoneme"])]
    found = by_id(ma2020.claims(table))
    assert set(found) == {"M20-AL-k", "M20-BLEU-k", "M20-AL-step", "M20-BLEU-step",
                          "M20-small-step", "M20-best-step", "M20-CA"}


def test_unit_durations_average_the_oracle_spans():
    aligned = SimpleNamespace(alignment=Alignment(
        words=(Word("a", 0.0, 200.0), Word("b", 200.0, 500.0)),
        phonemes=(Word("x", 0.0, 100.0), Word("y", 100.0, 200.0), Word("z", 200.0, 500.0))))
    durations = ma2020.unit_durations([aligned, SimpleNamespace(alignment=None)])
    assert durations["words"] == 250.0
    assert durations["phonemes"] == pytest.approx(500.0 / 3)


def test_unit_durations_need_an_alignment():
    with pytest.raises(ValueError, match="no segment has an alignment"):
        ma2020.unit_durations([SimpleNamespace(alignment=None)])


# ------------------------------------------------------------------ MMA
WEIGHTS = {"mma0": 0.0, "mma1": 0.01, "mma2": 0.1, "word0": 0.0, "word1": 0.1}


def mma_summary(changes=None) -> pd.DataFrame:
    """An MMA sweep: the fixed family (λ 0, 0.01, 0.1) at Δt 280, the word family (λ 0,
    0.1) on word and phoneme triggers."""
    rows = [  # model, trigger, step_ms, BLEU, AL_M20
        ("mma0", "fixed", 280.0, 18.0, 2000.0),
        ("mma1", "fixed", 280.0, 16.0, 1500.0),
        ("mma2", "fixed", 280.0, 13.0, 900.0),
        ("word0", "word", NAN, 19.0, 1800.0),
        ("word1", "word", NAN, 17.0, 700.0),
        ("word0", "phoneme", NAN, 16.0, 1700.0),
        ("word1", "phoneme", NAN, 14.0, 600.0),
    ]
    table = pd.DataFrame([
        {"model": m, "split": "tst-COMMON", "policy": "mma", "setting": f"{m}_{t}",
         "param_trigger": t, "param_step_ms": s, "BLEU": b, "AL": al, "AL_M20": al}
        for m, t, s, b, al in rows])
    for (model, trigger), values in (changes or {}).items():
        mask = (table.model == model) & (table.param_trigger == trigger)
        for column, value in values.items():
            table.loc[mask, column] = value
    return table


def test_mma_spec_decodes_fixed_steps_and_oracle_triggers():
    spec = ma2020.mma_spec(["mma0"], "en-de", ["tst-COMMON"], "out", steps_ms=[200, 280],
                           triggers=["word"])
    assert spec["policies"] == [
        {"policy": "mma", "fixed": {"trigger": "fixed"}, "grid": {"step_ms": [200.0, 280.0]}},
        {"policy": "mma", "grid": {"trigger": ["word"]}}]
    assert len(expand(spec["policies"], "spec")) == 3
    with pytest.raises(ValueError, match="steps_ms, triggers"):
        ma2020.mma_spec(["mma0"], "en-de", ["tst-COMMON"], "out")


def test_mma_curves_label_and_order_by_lambda():
    c = ma2020.mma_curves(mma_summary(), WEIGHTS)
    assert c["pre-decision"].tolist()[:3] == ["fixed Δt = 280 ms"] * 3
    assert c["λ"].tolist() == [0.0, 0.01, 0.1, 0.0, 0.1, 0.0, 0.1]
    with pytest.raises(ValueError, match="mma0"):
        ma2020.mma_curves(mma_summary(), {"mma1": 0.01})


def test_four_systems_best_per_bucket():
    best = ma2020.best_systems(summary(), mma_summary(), WEIGHTS, width_ms=500)
    assert list(dict.fromkeys(best.system)) == ma2020.SYSTEMS
    mma_word = best[best.system == ma2020.MMA_WORD]
    # word family on word triggers: λ 0.1 at 700 ms (bucket 500), λ 0 at 1800 (1500)
    assert mma_word[["bucket_ms", "setting", "BLEU"]].values.tolist() == [
        [500.0, "λ 0.1", 17.0], [1500.0, "λ 0", 19.0]]


def test_mma_claims_by_hand():
    claims = by_id(ma2020.mma_claims(summary(), mma_summary(), WEIGHTS))
    # AL_M20 at Δt 280: 2000 → 1500 → 900: the largest step is −500
    assert claims["M20-MMA-lambda"].holds and claims["M20-MMA-lambda"].evidence.effect == -500
    # best BLEU word − phoneme: wait-k 15 − 2 = 13, MMA 19 − 16 = 3: gap 10
    assert claims["M20-MMA-granularity"].holds
    assert claims["M20-MMA-granularity"].evidence.effect == pytest.approx(10.0)
    # MMA+word's front (700 → 17, 1800 → 19) is above every other front where they overlap
    assert claims["M20-MMA-word-best"].holds and claims["M20-MMA-word"].holds
    # one Δt only: the step findings need more decodes
    assert claims["M20-MMA-small-step"].verdict == "not measured"
    assert claims["M20-MMA-robust"].verdict == "not measured"


def with_mma_steps(bleu_440: float) -> pd.DataFrame:
    """mma_summary's fixed family also at Δt 120 ms (BLEU 5, 4, 3) and 440 ms (280's points,
    ``bleu_440`` BLEU higher)."""
    base = mma_summary()
    fixed = base[base.param_trigger == "fixed"]
    small = fixed.assign(param_step_ms=120.0, BLEU=[5.0, 4.0, 3.0],
                         setting=lambda d: d.model + "_120")
    large = fixed.assign(param_step_ms=440.0, BLEU=fixed.BLEU + bleu_440,
                         setting=lambda d: d.model + "_440")
    return pd.concat([base, small, large], ignore_index=True)


@pytest.mark.parametrize("bleu_440, verdict", [(0.5, "holds"), (3.0, "contradicted")])
def test_mma_poor_at_the_smallest_step_and_similar_at_the_others(bleu_440, verdict):
    claims = by_id(ma2020.mma_claims(summary(), with_mma_steps(bleu_440), WEIGHTS))
    # best over λ: 120 ms 5; 280 ms 18; 440 ms 18 + bleu_440: the lowest other − 5 = 13
    assert claims["M20-MMA-small-step"].evidence.effect == pytest.approx(13.0)
    assert claims["M20-MMA-small-step"].verdict == "holds"
    # 440's λ-curve is 280's, bleu_440 higher: within ±1 BLEU or not
    assert claims["M20-MMA-robust"].evidence.effect == pytest.approx(bleu_440)
    assert claims["M20-MMA-robust"].verdict == verdict


@pytest.mark.parametrize(("changes", "failing"), [
    ({("mma2", "fixed"): {"AL_M20": 1600.0}}, {"M20-MMA-lambda"}),  # λ 0.1 slower than 0.01
    ({("word0", "phoneme"): {"BLEU": 2.0}, ("word1", "phoneme"): {"BLEU": 1.0}},
     {"M20-MMA-granularity"}),  # MMA loses 17 BLEU from word to phoneme, wait-k 13
    ({("word1", "word"): {"BLEU": 5.0}, ("word0", "word"): {"BLEU": 6.0}},
     {"M20-MMA-word-best", "M20-MMA-word"}),
])
def test_each_mma_claim_fails_when_its_numbers_say_so(changes, failing):
    claims = by_id(ma2020.mma_claims(summary(), mma_summary(changes), WEIGHTS))
    assert {n for n, c in claims.items() if c.verdict == "contradicted"} == failing
    assert all(c.holds for n, c in claims.items()
               if n not in failing and c.verdict != "not measured")


def test_flexible_curves_join_wait_k_by_k_and_mma_by_lambda():
    f = ma2020.flexible(summary(), mma_summary(), WEIGHTS)
    assert sorted(set(f.curve)) == ["MMA, oracle phoneme boundaries", "MMA, oracle word boundaries",
                                    "wait-k, oracle phoneme boundaries",
                                    "wait-k, oracle word boundaries"]
    mma_word = f[f.curve == "MMA, oracle word boundaries"]
    assert mma_word.order.tolist() == [0.0, 0.1] and mma_word.BLEU.tolist() == [19.0, 17.0]
