"""simul.papers.compare_policies: settings, Pareto fronts, costs and claims on hand-made data."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import yaml

from simul import sweep
from simul.analysis.claims import BLEU_MARGIN
from simul.analysis.tables import pareto_front
from simul.papers import compare_policies as compare
from simul.policies import registry
from simul.records import Record, write


@pytest.mark.parametrize("unit", ["bpe", "char"])
def test_every_policy_of_the_registry_runs_three_or_four_settings(unit):
    settings = sweep.expand(compare.policies(unit), "spec")  # each builds its policy
    counts = pd.Series([s.policy for s in settings]).value_counts().to_dict()
    # the policies of offline end-to-end models: not cascades, not mma (MMA models only)
    end_to_end = [n for n, c in registry().items() if c.runs_on == "st" and not c.needs_decoder]
    assert sorted(counts) == sorted(end_to_end) == sorted(compare.POLICIES)
    assert all(3 <= n <= 4 for p, n in counts.items() if p != "offline")
    assert counts["offline"] == 2


def test_a_quick_grid_keeps_each_policys_lowest_and_highest_latency():
    full, quick = compare.policies("bpe"), compare.policies("bpe", per_policy=2)
    by_policy = {p["policy"]: p for p in quick}
    assert by_policy["wait_k_words"]["grid"] == {"k": [2, 7]}
    assert by_policy["edatt"]["grid"] == {"alpha": [0.6, 0.1]}
    assert by_policy["offline"]["grid"] == {"beam": [1, 5]}  # offline: both beams
    assert [p["fixed"] for p in quick if "fixed" in p] == [p["fixed"] for p in full if "fixed" in p]
    assert compare.policies("bpe", per_policy=3) == full  # three a policy: the whole grid
    assert {p["policy"]: p["grid"] for p in compare.policies("char", per_policy=3)}[
        "wait_k_catchup"] == {"k": [8, 20, 40]}
    with pytest.raises(ValueError, match="per_policy must be 2 or more, got 1"):
        compare.policies("bpe", per_policy=1)


def test_policies_refuse_an_unknown_unit():
    with pytest.raises(ValueError, match="'word'"):
        compare.policies("word")


def test_spec_names_one_model_and_its_unit_settings():
    s = compare.spec("blstm_char_en-es", "char", "en-es", "tst-COMMON", "out", max_utterances=3)
    assert s["models"] == ["blstm_char_en-es"] and s["max_utterances"] == 3
    assert s["policies"] == compare.policies("char") and "corpus" not in s


@pytest.mark.parametrize("token_type, unit", [("char", "char"), ("bpe", "bpe")])
def test_unit_of_reads_the_config(tmp_path, token_type, unit):
    (tmp_path / "config.yaml").write_text(yaml.safe_dump({"token_type": token_type}))
    (tmp_path / "model.pth").write_bytes(b"")
    assert compare.unit_of(str(tmp_path)) == unit


def test_pareto_front_keeps_the_undominated_settings_of_each_policy():
    s = pd.DataFrame({
        "model": ["m"] * 7,
        "policy": ["a", "a", "a", "a", "a", "a", "b"],
        "setting": ["1", "2", "3", "4", "5", "6", "7"],
        # (1000, 10) kept; (1500, 9) beaten by (1000, 10); (2000, 15) kept;
        # (2000, 14) beaten by (2000, 15); (3000, 15) beaten by (2000, 15); NaN dropped;
        # b's only point kept although a's (1000, 10) would beat it
        "LAAL": [2000, 1000, 1500, 2000, 3000, math.nan, 1200],
        "BLEU": [15.0, 10.0, 9.0, 14.0, 15.0, 30.0, 8.0],
    })
    front = pareto_front(s)
    assert front[["policy", "setting"]].values.tolist() == [["a", "2"], ["a", "1"], ["b", "7"]]


def test_pareto_front_is_the_set_no_point_dominates_on_random_grids():
    """Against dominance checked pair by pair: a row stays when no row of its group has x
    no larger and y no smaller, one of them strictly (ties on a coarse grid included)."""
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = int(rng.integers(1, 25))
        s = pd.DataFrame({"model": rng.choice(["a", "b"], n), "policy": "p",
                          "setting": [str(i) for i in range(n)],
                          "LAAL": rng.integers(0, 6, n) * 100.0,
                          "BLEU": rng.integers(0, 6, n) * 5.0})
        s.loc[rng.random(n) < 0.1, "BLEU"] = np.nan
        expected = set()
        for i in s.dropna().index:
            a = s.loc[i]
            if not any(b.model == a.model and b.LAAL <= a.LAAL and b.BLEU >= a.BLEU
                       and (b.LAAL < a.LAAL or b.BLEU > a.BLEU)
                       for _, b in s.dropna().iterrows()):
                expected.add(a.setting)
        front = pareto_front(s)
        assert set(front.setting) == expected and len(front) == len(expected)
        assert front.equals(front.sort_values(["model", "policy", "LAAL"], kind="stable")
                            .reset_index(drop=True))


def test_pareto_front_keeps_equal_points_and_uses_the_given_latency():
    s = pd.DataFrame({"model": ["m"] * 3, "policy": ["a"] * 3, "setting": ["1", "2", "3"],
                      "LAAL": [1000, 1000, 900], "LAAL_CA": [1500, 1500, 2000],
                      "BLEU": [10.0, 10.0, 9.0]})
    assert pareto_front(s).setting.tolist() == ["3", "1", "2"]
    assert pareto_front(s, x="LAAL_CA").setting.tolist() == ["1", "2"]


def record(delays, elapsed, source_length):
    return Record(index=0, prediction=" ".join("w" * len(delays)), delays=delays,
                  elapsed=elapsed, prediction_length=len(delays), reference="r",
                  source_length=source_length, source=[])


@pytest.fixture
def outputs(tmp_path):
    # setting 1: compute 1400 − 1000 = 400 ms over 2000 ms, 350 − 300 = 50 ms over 1000 ms,
    # and a record without words (left out, with its 5000 ms); setting 2: 100 ms over 2000 ms
    write([record([500, 1000], [700, 1400], 2000), record([300], [350], 1000),
           record([], [], 5000)], tmp_path / "m" / "records" / "s1.jsonl")
    write([record([800], [900], 2000)], tmp_path / "m" / "records" / "s2.jsonl")
    return {"m": tmp_path / "m"}


def test_compute_per_audio_sums_compute_over_audio(outputs):
    assert compare.compute_per_audio([outputs["m"] / "records" / "s1.jsonl"]) == 450 / 3000
    assert math.isnan(compare.compute_per_audio([]))


def test_cost_table_one_row_per_model_and_policy(outputs):
    s = pd.DataFrame({"model": ["m", "m", "m"], "policy": ["a", "a", "offline"],
                      "records": ["records/s1.jsonl", "records/s2.jsonl", "records/s2.jsonl"],
                      "BLEU": [12.0, 14.0, 20.0], "LAAL": [1000.0, 2000.0, 3000.0],
                      "LAAL_CA": [1300.0, 2500.0, 3100.0]})
    t = compare.cost_table(s, outputs)
    assert list(t.columns) == ["model", "policy", "settings", "BLEU best", "compute / audio",
                               "LAAL_CA − LAAL (ms)"]
    # a: (450 + 100) / (3000 + 2000); overhead (300 + 500) / 2
    assert t.values.tolist() == [["m", "a", 2, 14.0, 0.11, 400.0],
                                 ["m", "offline", 1, 20.0, 0.05, 100.0]]


def summary(rows):
    return pd.DataFrame(rows, columns=["model", "policy", "setting", "BLEU", "LAAL", "LAAL_CA"])


def test_claims_hold_when_offline_is_best():
    s = summary([["m", "offline", "beam=1", 19.0, 5000, 5100],
                 ["m", "offline", "beam=5", 21.0, 5000, 5900],
                 ["m", "edatt", "alpha=0.1", 20.4, 2000, 2400],
                 ["m", "alignatt", "frames=2", 15.0, 900, 1000]])
    found = {c.id: c for c in compare.claims(s)}
    assert found["CMP-offline"].holds and set(found) == {"CMP-offline"}
    assert found["CMP-offline"].own
    assert found["CMP-offline"].evidence.effect == pytest.approx(21.0 - 20.4)
    assert found["CMP-offline"].detail == ("m: offline 21.0, best simultaneous 20.4 "
                                           "(edatt alpha=0.1)")
    assert found["CMP-offline"].needs_full_run


def test_claims_fail_when_a_setting_beats_offline():
    s = summary([["m", "offline", "beam=1", 20.0, 5000, 5100],
                 ["n", "offline", "beam=1", 20.0, 5000, 5100],
                 ["n", "edatt", "alpha=0.1", 21.5, 2000, 1990]])
    found = {c.id: c for c in compare.claims(s)}
    assert not found["CMP-offline"].holds
    assert found["CMP-offline"].detail == ("n: offline 20.0, best simultaneous 21.5 "
                                           "(edatt alpha=0.1)")


def test_offline_claim_is_non_inferiority_within_a_bleu():
    # a setting half a BLEU above offline: within the margin, so offline is "≥" it
    s = summary([["m", "offline", "beam=1", 20.0, 5000, 5100],
                 ["m", "edatt", "alpha=0.1", 20.5, 2000, 2100]])
    found = {c.id: c for c in compare.claims(s)}
    offline = found["CMP-offline"]
    assert (offline.kind, offline.evidence.margin) == ("non-inferiority", BLEU_MARGIN)
    assert offline.evidence.effect == pytest.approx(-0.5) and offline.holds
    assert "non-inferiority, margin 1" in offline.text


def pairs_summary():
    """Two models of one architecture on two pairs, two policies: a's settings 1 and 2
    (LAAL 800/900 and 1500/1700), b's one setting; the en-es model also ran a setting
    the en-de one did not (c 3, LAAL 100)."""
    rows = [["de", "a", "1", 10.0, 800, 0.30], ["es", "a", "1", 20.0, 900, 0.10],
            ["de", "a", "2", 15.0, 1500, 0.20], ["es", "a", "2", 25.0, 1700, 0.05],
            ["de", "b", "1", 12.0, 1000, 0.50], ["es", "b", "1", 22.0, 1200, 0.10],
            ["es", "c", "3", 5.0, 100, 0.90], ["de", "offline", "beam=1", 30.0, 5000, 0.0],
            ["es", "offline", "beam=1", 40.0, 5000, 0.0]]
    return pd.DataFrame(rows, columns=["model", "policy", "setting", "BLEU", "LAAL",
                                       "anticipation_rate"])


def test_lowest_latency_takes_each_policys_setting_that_both_ran():
    assert compare.lowest_latency(pairs_summary(), {"en-de": "de", "en-es": "es"}) == [
        ("a", "1"), ("b", "1")]


def test_reordering_table_puts_the_pairs_side_by_side():
    t = compare.reordering_table(pairs_summary(), {"en-de": "de", "en-es": "es"})
    assert list(t.columns) == ["policy", "setting", "BLEU en-de", "LAAL en-de",
                               "anticipation en-de", "BLEU en-es", "LAAL en-es",
                               "anticipation en-es"]
    assert t.values.tolist() == [["a", "1", 10.0, 800, 0.30, 20.0, 900, 0.10],
                                 ["b", "1", 12.0, 1000, 0.50, 22.0, 1200, 0.10]]


def test_anticipation_claim_is_the_mean_gap_over_policies():
    # a 1: 0.30 − 0.10; b 1: 0.50 − 0.10; mean (0.20 + 0.40) / 2 = 0.30
    found = compare.anticipation_claims(pairs_summary(), {"en-de": "de", "en-es": "es"})
    (claim,) = found
    assert claim.id == "CMP-anticipation" and claim.kind == "superiority"
    assert claim.evidence.effect == pytest.approx(0.30) and claim.holds
    assert claim.detail.startswith("en-de (de) vs en-es (es): a 1: 0.300 vs 0.100 (LAAL 800 vs "
                                   "900 ms)") and claim.own
    assert compare.anticipation_claims(pairs_summary(), {"en-de": "de"}) == []


def test_low_latency_table_takes_each_policys_best_under_each_bound():
    s = pd.DataFrame({
        "model": ["c", "c", "c", "c", "c", "m1", "m2"],
        "policy": ["alignatt", "alignatt", "edatt", "onlinization", "wait_k_words", "mma",
                   "mma"],
        "setting": ["a", "b", "e", "o", "w", "default", "default"],
        "LAAL": [900.0, 1400.0, 1600.0, 1200.0, 800.0, 950.0, 1300.0],
        "BLEU": [20.0, 25.0, 30.0, 22.0, 40.0, 18.0, 26.0],
    })
    t = compare.low_latency_table(s).set_index("policy")
    assert t.loc["alignatt", "BLEU, LAAL ≤ 1000"] == 20.0
    assert t.loc["alignatt", "BLEU, LAAL ≤ 1500"] == 25.0
    assert math.isnan(t.loc["edatt", "BLEU, LAAL ≤ 1500"])
    assert t.loc["edatt", "setting, ≤ 1500"] == "none"
    assert t.loc["LA-2 (onlinization)", "BLEU, LAAL ≤ 1500"] == 22.0
    assert t.loc["mma", "setting, ≤ 1500"] == "m2: default (1300 ms)"
    assert "wait_k_words" not in t.index


def test_mma_spec_decodes_each_model_on_its_own_triggers():
    s = compare.mma_spec(["m1", "m2"], "en-de", "tst-COMMON", "out", max_utterances=3)
    assert s["models"] == ["m1", "m2"] and s["policies"] == [{"policy": "mma"}]
