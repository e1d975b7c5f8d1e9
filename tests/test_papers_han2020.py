"""simul.papers.han2020: spec, Table 6 / Table 7 layouts and claims on hand-made summaries."""

import math
from types import SimpleNamespace

import pandas as pd
import pytest

from simul.papers import han2020
from simul.sweep import expand

NAN = float("nan")
TRAINED = [(3, 300), (3, 400)]

# k, s (ms), c, BLEU, AL (ms); (3, 200, 0) is Table 6's kt/st − 100 for the pair 3/300
ROWS = [
    (2, 300.0, 0.0, 10.0, 600.0),
    (2, 400.0, 0.0, 12.0, 800.0),
    (3, 300.0, 0.0, 13.0, 900.0),
    (3, 400.0, 0.0, 16.0, 1200.0),
    (2, 300.0, 0.5, 9.0, 500.0),
    (2, 400.0, 0.5, 11.0, 700.0),
    (3, 300.0, 0.5, 12.5, 850.0),
    (3, 400.0, 0.5, 15.0, 1100.0),
    (3, 200.0, 0.0, 9.5, 650.0),
]


def summary(changes=None) -> pd.DataFrame:
    table = pd.DataFrame([
        {"model": "m", "split": "tst-COMMON", "policy": "wait_k_catchup",
         "setting": f"k={k}_stride_ms={s}_catchup={c}", "param_k": k, "param_stride_ms": s,
         "param_catchup": c, "BLEU": b, "AL": al}
        for k, s, c, b, al in ROWS
    ] + [{"model": "m", "split": "tst-COMMON", "policy": "offline", "setting": "default",
          "param_k": NAN, "param_stride_ms": NAN, "param_catchup": NAN, "BLEU": 20.0,
          "AL": 4000.0}])
    for (k, s, c), values in (changes or {}).items():
        mask = (table.param_k == k) & (table.param_stride_ms == s) & (table.param_catchup == c)
        for column, value in values.items():
            table.loc[mask, column] = value
    return table


def by_id(claims):
    return {c.id: c for c in claims}


def test_table6_settings_of_the_paper():
    cells = han2020.table6_settings()
    assert len(cells) == 15
    assert cells[:3] == [("kt/st", 3, 300.0, (3, 300.0)), ("kt − 1/st", 2, 300.0, (3, 300.0)),
                         ("kt/st − 100", 3, 200.0, (3, 300.0))]
    assert cells[-1] == ("kt/st − 100", 5, 700.0, (5, 800.0))


def test_table6_settings_leave_out_k_0_and_stride_0():
    assert han2020.table6_settings([(1, 100)]) == [("kt/st", 1, 100.0, (1, 100.0))]


def test_spec_lists_each_setting_once():
    spec = han2020.spec(["m"], "en-es", ["tst-COMMON"], "out", trained=[(3, 400)], ks=[3],
                        strides_ms=[300, 400], catchups=[0.0, 0.5], max_utterances=7,
                        on_eos_settings=[(3, 300, 0.5), (2, 200, 0.5)])
    policy, stop, offline = spec["policies"]
    assert offline == {"policy": "offline"}
    assert policy["settings"] == [
        {"k": 3, "stride_ms": 400.0, "catchup": 0.0},   # Table 6: kt/st
        {"k": 2, "stride_ms": 400.0, "catchup": 0.0},   # kt − 1/st
        {"k": 3, "stride_ms": 300.0, "catchup": 0.0},   # kt/st − 100, also in the grid
        {"k": 3, "stride_ms": 300.0, "catchup": 0.5},
        {"k": 3, "stride_ms": 400.0, "catchup": 0.5},
        {"k": 2, "stride_ms": 200.0, "catchup": 0.5},   # on_eos: read, beside its stop twin
    ]
    assert stop == {"policy": "wait_k_catchup", "fixed": {"on_eos": "stop"},
                    "settings": [{"k": 3, "stride_ms": 300.0, "catchup": 0.5},
                                 {"k": 2, "stride_ms": 200.0, "catchup": 0.5}]}
    assert spec["max_utterances"] == 7 and "corpus" not in spec
    assert len(expand(spec["policies"], "spec")) == 6 + 2 + 1  # no setting repeats


def test_on_eos_table_compares_the_two_rules_and_tables_use_read():
    table = summary()
    stop = table[(table.param_k == 3) & (table.param_stride_ms == 300.0)
                 & (table.param_catchup == 0.5)].assign(param_on_eos="stop", BLEU=11.0, AL=400.0)
    both = pd.concat([table, stop], ignore_index=True)
    t = han2020.on_eos_table(both)
    assert t.values.tolist() == [[3, 300.0, 0.5, 12.5, 850.0, 11.0, 400.0]]
    assert len(han2020.settings(both)) == len(ROWS)  # the "stop" twin is left out


def test_default_spec_expands():
    spec = han2020.spec(["m"], "en-es", ["tst-COMMON"], "out", corpus="/data/mustc")
    assert spec["corpus"] == "/data/mustc"
    # Table 6: 15 cells, 3/300 and 4/800 twice → 13 distinct (c = 0); the grid
    # 4 k × 5 s × 3 c = 60 holds 8 of them (2/300 3/300 3/200 2/400 3/400 3/800 4/800
    # 5/800); 2/200/c=0.5 (in the grid) again with on_eos=stop; offline
    assert len(expand(spec["policies"], "spec")) == 13 + 60 - 8 + 1 + 1


def test_table6_layout():
    t = han2020.table6(summary(), TRAINED)
    assert t.decode.tolist() == ["kt/st", "kt − 1/st", "kt/st − 100"]
    assert list(t.columns) == ["decode", "BLEU 3/300", "AL 3/300", "BLEU 3/400", "AL 3/400"]
    assert t["BLEU 3/300"].tolist() == [13.0, 10.0, 9.5]
    assert t["AL 3/300"].tolist() == [900.0, 600.0, 650.0]
    assert t["BLEU 3/400"].tolist() == [16.0, 12.0, 13.0]
    assert t["AL 3/400"].tolist() == [1200.0, 800.0, 900.0]


def test_table6_leaves_missing_decodes_empty():
    t = han2020.table6(summary(), [(3, 500)])  # only 3/400 (kt/st − 100) was decoded
    assert t["BLEU 3/500"].isna().tolist() == [True, True, False]
    assert t["BLEU 3/500"].iloc[2] == 16.0


def test_table7_best_setting_within_each_bound():
    t = han2020.table7(summary(), {"low": 1000, "medium": 2000, "none": 100},
                       {"low": (3, 300), "medium": (2, 400)})
    low, medium, none = (t.iloc[i] for i in range(3))
    assert (low.k, low["s (ms)"], low.c, low.BLEU, low.AL) == (3, 300.0, 0.0, 13.0, 900.0)
    assert (medium.k, medium["s (ms)"], medium.BLEU, medium.AL) == (3, 400.0, 16.0, 1200.0)
    assert low["paper k/s"] == "3/300" and low["BLEU at paper k/s"] == 13.0
    assert medium["paper k/s"] == "2/400" and medium["AL at paper k/s"] == 800.0
    assert pd.isna(none.k) and pd.isna(none.BLEU) and pd.isna(none["paper k/s"])


def test_table7_can_pick_a_catchup_setting():
    # (3, 400, 0.5) at 1100 ms is out of the low regime; at 990 ms with BLEU 15 it wins it
    t = han2020.table7(summary({(3, 400.0, 0.5): {"AL": 990.0}}), {"low": 1000}, {})
    assert (t.k.iloc[0], t["s (ms)"].iloc[0], t.c.iloc[0], t.BLEU.iloc[0]) == (
        3, 400.0, 0.5, 15.0)


def test_catchup_table_keeps_the_k_s_decoded_with_every_c():
    t = han2020.catchup_table(summary())
    assert list(zip(t.k, t.s, strict=True)) == [(2, 300.0), (2, 400.0), (3, 300.0), (3, 400.0)]
    assert t["AL c=0"].tolist() == [600.0, 800.0, 900.0, 1200.0]
    assert t["AL c=0.5"].tolist() == [500.0, 700.0, 850.0, 1100.0]
    assert t["BLEU c=0.5"].tolist() == [9.0, 11.0, 12.5, 15.0]


def test_claims_on_the_hand_made_summary():
    found = by_id(han2020.claims(summary(), TRAINED, {"low": 1000, "medium": 2000}))
    assert list(found) == ["H20-AL-k", "H20-BLEU-k", "H20-AL-s", "H20-BLEU-s", "H20-table6"]
    assert all(c.holds for c in found.values()), [c for c in found.values() if not c.holds]
    # at the paper's c = 0, mean steps: k 2 → 3 AL +300 (s 300), +400 (s 400), BLEU +3, +4;
    # s at k 2: AL +200, BLEU +2; at k 3: 200 → 300 → 400 ms, AL +250, +300, BLEU +3.5, +3
    effects = [found[c].evidence.effect for c in ("H20-AL-k", "H20-BLEU-k", "H20-AL-s",
                                                  "H20-BLEU-s")]
    assert effects == pytest.approx([350.0, 3.5, 250.0, 8.5 / 3])
    assert found["H20-AL-k"].detail == "c = 0: 2 groups, all monotone"
    assert [found[c].finding.half for c in ("H20-AL-k", "H20-BLEU-k")] == ["latency",
                                                                          "quality"]
    assert found["H20-table6"].detail == "4 smaller decodes, each below its (kt, st)"
    # 3/300 − 2/300 = 3.0, 3/300 − 3/200 = 3.5, 3/400 − 2/400 = 4.0, 3/400 − 3/300 = 3.0
    assert found["H20-table6"].evidence.effect == 3.0
    assert "H20-regimes" not in found  # nested regimes: a property by construction


def test_latency_claims_use_the_papers_catchup():
    # a dip along k at c = 0.5 counts only when the claims are checked at c = 0.5
    changed = summary({(3, 300.0, 0.5): {"AL": 0.0}})
    assert by_id(han2020.claims(changed, TRAINED))["H20-AL-k"].holds
    claim = by_id(han2020.claims(changed, TRAINED, catchup=0.4))["H20-AL-k"]
    # s 300: 500 → 0 (−500), s 400: 700 → 1100 (+400): a mean step of −50
    assert claim.verdict == "contradicted" and claim.detail.startswith("c = 0.5")
    assert han2020.paper_catchup(0.98) == 0.0 and han2020.paper_catchup(1.25) == 0.25


@pytest.mark.parametrize("rows", [
    [(900.0, 10.0), (1800.0, 15.0), (3500.0, 20.0)],
    [(900.0, 20.0), (1800.0, 15.0), (3500.0, 5.0)],  # the slower settings worse
    [(300.0, 1.0), (1100.0, 30.0), (1500.0, 2.0), (3900.0, 4.0)],
])
def test_nested_regimes_never_lose_bleu_by_construction(rows):
    # each regime's bound contains the previous one's settings: its best BLEU is at least
    # theirs, whatever the numbers (why "BLEU grows from regime to regime" is no claim)
    table = pd.DataFrame([{"model": "m", "split": "tst-COMMON", "policy": "wait_k_catchup",
                           "setting": f"s{i}", "param_k": 2 + i, "param_stride_ms": 300.0,
                           "param_catchup": 0.0, "BLEU": b, "AL": al}
                          for i, (al, b) in enumerate(rows)])
    bleu = han2020.table7(table, han2020.REGIMES_MS, {}).BLEU.dropna().tolist()
    assert bleu == sorted(bleu)


@pytest.mark.parametrize("changes, failing", [
    ({(3, 300.0, 0.0): {"AL": 100.0}}, "H20-AL-k"),  # s 300: 600 → 100; s 400 +400
    ({(3, 300.0, 0.0): {"BLEU": 2.0}}, "H20-BLEU-k"),  # s 300: 10 → 2; s 400 +4
    ({(2, 400.0, 0.0): {"AL": 0.0}, (3, 400.0, 0.0): {"AL": 300.0}}, "H20-AL-s"),
    ({(2, 400.0, 0.0): {"BLEU": 1.0}, (3, 400.0, 0.0): {"BLEU": 5.0}}, "H20-BLEU-s"),
    # a smaller decode above its (kt, st), by any amount: "not any improvement"
    ({(2, 400.0, 0.0): {"BLEU": 16.5}}, "H20-table6"),
])
def test_each_claim_fails_when_its_numbers_say_so(changes, failing):
    claim = by_id(han2020.claims(summary(changes), TRAINED, {"low": 1000}))[failing]
    assert claim.verdict == "contradicted"


def test_table6_claim_is_superiority_every_cell_below():
    claim = by_id(han2020.claims(summary({(2, 400.0, 0.0): {"BLEU": 16.5}}), TRAINED))[
        "H20-table6"]
    assert claim.evidence.effect == pytest.approx(-0.5)
    assert (claim.kind, claim.finding.margin) == ("superiority", 0.0)
    assert claim.detail == "2/400: 16.5 ≥ 3/400: 16.0"
    tie = by_id(han2020.claims(summary({(2, 400.0, 0.0): {"BLEU": 16.0}}), TRAINED))[
        "H20-table6"]
    assert tie.evidence.effect == 0.0 and tie.verdict == "undecided"


def test_emission_ratio_counts_words():
    segments = [SimpleNamespace(source="a b", target="x y z"),
                SimpleNamespace(source="c d", target="u v w")]
    assert han2020.emission_ratio(segments) == 1.5
    with pytest.raises(ValueError, match="no source words"):
        han2020.emission_ratio([SimpleNamespace(source="", target="x")])


def trained_rows(bleu: dict[str, dict[int, float]]) -> pd.DataFrame:
    return pd.DataFrame([{"model": m, "policy": "wait_k_words", "param_k": k,
                          "setting": f"k={k}", "BLEU": b, "AL": 100.0 * k}
                         for m, by_k in bleu.items() for k, b in by_k.items()])


def test_ktest_table_one_row_per_k_test_and_columns_per_trained_model():
    rows = trained_rows({"w3": {3: 20.0, 5: 22.0}, "w7": {3: 15.0, 7: 25.0}})
    t = han2020.ktest_table(rows, {"w3": 3, "w7": 7})
    assert t.k_test.tolist() == [3, 5, 7]
    assert t["BLEU w3 (k_train 3)"].tolist()[:2] == [20.0, 22.0]
    assert t["AL w7 (k_train 7)"].tolist()[0] == 300.0
    assert math.isnan(t["BLEU w7 (k_train 7)"].tolist()[1])


def test_ktest_claim_holds_when_no_smaller_k_does_better():
    # w3: 20 at k 3, nothing below; w7: 25 at k 7, best below 23 (k 5): smallest gap +2
    rows = trained_rows({"w3": {3: 20.0, 5: 22.0}, "w7": {3: 15.0, 5: 23.0, 7: 25.0}})
    (claim,) = han2020.ktest_claims(rows, {"w3": 3, "w7": 7})
    assert claim.evidence.effect == pytest.approx(2.0) and claim.holds
    assert "w7 (k_train 7): k=3 15.0, k=5 23.0, k=7 25.0" in claim.detail
    # a smaller k_test above k_train's, by any amount: contradicted
    for above in (1.5, 0.5):
        rows = trained_rows({"w7": {3: 15.0, 5: 25.0 + above, 7: 25.0}})
        (claim,) = han2020.ktest_claims(rows, {"w7": 7})
        assert claim.evidence.effect == pytest.approx(-above)
        assert claim.verdict == "contradicted"


def test_ktest_claim_leaves_out_a_multi_path_model():
    # mp would make the smallest gap 10 − 30 = −20 if its list were read as a k_train
    rows = trained_rows({"w7": {5: 23.0, 7: 25.0}, "mp": {3: 30.0, 5: 10.0, 7: 10.0}})
    (claim,) = han2020.ktest_claims(rows, {"w7": 7, "mp": [3, 5, 7]})
    assert claim.evidence.effect == pytest.approx(2.0)
    assert "mp" not in claim.detail


def test_ktest_claim_of_the_eos_alternative_is_simuls_own():
    rows = trained_rows({"w7": {5: 23.0, 7: 25.0}})
    (claim,) = han2020.ktest_claims(rows, {"w7": 7}, eos_allowed=True)
    assert claim.id == "H20-table6-trained-eos" and claim.own
    assert "not A.2's setting" in claim.finding.settings
    assert claim.evidence.effect == pytest.approx(2.0)
    (plain,) = han2020.ktest_claims(rows, {"w7": 7})
    assert not plain.own


# ------------------------------------------------------------ Table 6 on models trained per pair


def pair_rows(cells: dict[str, dict[tuple[int, float], float]]) -> pd.DataFrame:
    """wait_k_catchup rows (c = 0) of models: model → {(k, s): BLEU}; AL = k · s."""
    return pd.DataFrame([{"model": m, "split": "tst-COMMON", "policy": "wait_k_catchup",
                          "setting": f"k={k}_s={s}", "param_k": k, "param_stride_ms": s,
                          "param_catchup": 0.0, "BLEU": b, "AL": k * s}
                         for m, by in cells.items() for (k, s), b in by.items()])


def test_pair_spec_decodes_the_three_cells_and_offline():
    spec = han2020.pair_spec("m", 4, 350.0, "en-de", "tst-COMMON", "/tmp/out")
    (catchup, offline) = spec["policies"]
    assert [(s["k"], s["stride_ms"], s["catchup"]) for s in catchup["settings"]] == [
        (4, 350.0, 0.0), (3, 350.0, 0.0), (4, 250.0, 0.0)]
    assert offline == {"policy": "offline"} and spec["models"] == ["m"]


def test_pairs_table_and_claim():
    # 3/300: 13 at its own pair, 12 at k − 1, 7 at s − 100 → gap 1; 4/800: 18, 17.8, 17.9
    # → smallest gap 0.1 ≥ −1: no gain
    rows = pair_rows({"a": {(3, 300.0): 13.0, (2, 300.0): 12.0, (3, 200.0): 7.0},
                      "b": {(4, 800.0): 18.0, (3, 800.0): 17.8, (4, 700.0): 17.9}})
    trained = {"a": (3, 300.0), "b": (4, 800.0)}
    t = han2020.pairs_table(rows, trained)
    assert t.decode.tolist() == list(han2020.DECODES)
    assert t["BLEU 3/300"].tolist() == [13.0, 12.0, 7.0]
    assert t["AL 4/800"].tolist() == [3200.0, 2400.0, 2800.0]
    claim, drop = han2020.pairs_claims(rows, trained)
    assert claim.id == "H20-table6-pairs"
    assert claim.evidence.effect == pytest.approx(0.1) and claim.holds
    assert "4/800: 4/800 18.0, 3/800 17.8, 4/700 17.9" in claim.detail
    assert drop.id == "H20-k5-drop" and drop.verdict == "not measured"
    # a smaller decode above its trained pair: contradicted
    rows = pair_rows({"a": {(3, 300.0): 13.0, (2, 300.0): 14.5}})
    claim, _ = han2020.pairs_claims(rows, {"a": (3, 300.0)})
    assert claim.evidence.effect == pytest.approx(-1.5)
    assert claim.evidence.verdict == "contradicted"


@pytest.mark.parametrize("bleu_5, verdict", [(17.4, "holds"), (18.5, "contradicted")])
def test_bleu_drops_from_k_4_to_5_at_800_ms(bleu_5, verdict):
    rows = pair_rows({"b": {(4, 800.0): 18.0}, "c": {(5, 800.0): bleu_5}})
    _, drop = han2020.pairs_claims(rows, {"b": (4, 800), "c": (5, 800)})
    assert drop.evidence.effect == pytest.approx(bleu_5 - 18.0)
    assert drop.verdict == verdict


# ------------------------------------------------------------ Table 4: text, k_test vs k_train


def text_rows(bleu: dict[str, dict[int, float]]) -> pd.DataFrame:
    """wait_k_text rows: model → {k: BLEU}; AL = k − 0.5 (source words)."""
    return pd.DataFrame([{"model": m, "split": "tst-COMMON", "policy": "wait_k_text",
                          "setting": f"k={k}", "param_k": k, "BLEU": b, "AL": k - 0.5}
                         for m, by in bleu.items() for k, b in by.items()])


def test_text_spec_adds_the_offline_k():
    spec = han2020.text_spec(["t3", "t4"], "en-de", "tst-COMMON", "/o", ks=[3, 1, 2])
    (policy,) = spec["policies"]
    assert policy == {"policy": "wait_k_text", "grid": {"k": [1, 2, 3, 1000]}}
    assert spec["models"] == ["t3", "t4"]


def test_table4_layout_and_the_larger_k_claim():
    # H20's Table 4 pattern: trained 8 decoded at 7 (29.1) beats trained 7 at 7 (28.6),
    # trained 4 at 3 (20.5) beats trained 3 at 3 (20.0): smallest gain +0.5
    bleu = {"t3": {3: 20.0, 2: 18.0}, "t4": {4: 22.0, 3: 20.5, 1: 12.0},
            "t7": {7: 28.6, 6: 28.0, 4: 24.0}, "t8": {8: 29.5, 7: 29.1, 5: 26.0},
            "mp": {3: 40.0, 7: 40.0}}
    trained = {"t3": 3, "t4": 4, "t7": 7, "t8": 8, "mp": [1, 3, 5]}
    rows = text_rows(bleu)
    t = han2020.table4(rows, trained)
    assert t["decode k"].tolist() == ["kt", "kt − 1", "kt − 3"]
    assert t["BLEU 4"].tolist() == [22.0, 20.5, 12.0]
    assert t["AL 8"].tolist() == [7.5, 6.5, 4.5]
    assert math.isnan(t["BLEU 3"].tolist()[2])  # k = 0 is no decode
    assert "BLEU [1, 3, 5]" not in " ".join(t.columns)  # the multi-path model has no kt
    (claim,) = han2020.table4_claims(rows, trained)
    assert claim.id == "H20-table4"
    # every pair of k_train decoded at the smaller k: 4 → 3 +0.5, 7 → 4 +2.0, 8 → 7 +0.5
    assert claim.evidence.effect == pytest.approx(0.5) and claim.holds
    assert claim.detail == ("k = 3: trained 4 20.5, trained 3 20.0; k = 4: trained 7 24.0, "
                            "trained 4 22.0; k = 7: trained 8 29.1, trained 7 28.6")
    # one pair the other way round: the smallest gain is negative, not superiority
    rows = text_rows({**bleu, "t4": {4: 22.0, 3: 19.0}})
    (claim,) = han2020.table4_claims(rows, trained)
    assert claim.evidence.effect == pytest.approx(-1.0) and not claim.holds
    wide = han2020.text_ktest_table(rows, trained)
    assert wide.k_test.tolist() == [2, 3, 4, 5, 6, 7, 8]
    assert wide["BLEU mp (k_train [1, 3, 5])"].tolist()[1] == 40.0


# --- Table 7 with meta-learning ---

META = {"woMT": "m_wo", "wMT": "m_w", "control": "m_mt"}


def meta_summary(bleu: dict[str, list[float]]) -> pd.DataFrame:
    """Per model, three settings at AL 900, 1800 and 3500 ms with the given BLEU."""
    rows = []
    for model, values in bleu.items():
        for (k, s, al), b in zip([(2, 300.0, 900.0), (3, 400.0, 1800.0), (4, 800.0, 3500.0)],
                                 values, strict=True):
            rows.append({"model": model, "split": "tst-COMMON", "policy": "wait_k_catchup",
                         "setting": f"k={k}", "param_k": k, "param_stride_ms": s,
                         "param_catchup": 0.0, "BLEU": b, "AL": al})
    return pd.DataFrame(rows)


def test_meta_table7_takes_each_systems_best_within_each_regime():
    table = han2020.meta_table7(
        meta_summary({"m_wo": [10, 14, 13], "m_w": [12, 15, 20], "m_mt": [11, 16, 19]}),
        META, {"low": 1000, "medium": 2000, "high": 4000})
    # the high regime allows all three settings: the best, not the last
    assert table["BLEU woMT"].tolist() == [10, 14, 14]
    assert table["BLEU wMT"].tolist() == [12, 15, 20]
    assert table["k/s/c woMT"].tolist() == ["2/300/0", "3/400/0", "3/400/0"]
    assert table["AL woMT"].tolist() == [900, 1800, 1800]
    assert table["k/s/c control"].tolist() == ["2/300/0", "3/400/0", "4/800/0"]


def test_meta_claims_smallest_gain_by_hand():
    regimes = {"low": 1000, "medium": 2000, "high": 4000}
    claims = {c.id: c for c in han2020.meta_claims(
        meta_summary({"m_wo": [10, 14, 13], "m_w": [12, 15, 20], "m_mt": [11, 16, 19]}),
        META, regimes)}
    # wMT − woMT per regime: 2, 1, 6 → 1; wMT − control: 1, −1, 1 → −1
    assert claims["H20-meta"].evidence.effect == 1.0
    assert claims["H20-meta-control"].evidence.effect == -1.0
    assert claims["H20-meta-control"].own and not claims["H20-meta"].own
    assert "low: wMT 12.0, woMT 10.0" in claims["H20-meta"].detail
    # a regime no setting of a system fits: no effect
    claims = han2020.meta_claims(meta_summary({"m_wo": [10, 14, 13], "m_w": [12, 15, 20],
                                               "m_mt": [11, 16, 19]}), META, {"tight": 500})
    assert all(math.isnan(c.evidence.effect) for c in claims)
    only_two = han2020.meta_claims(meta_summary({"m_wo": [1, 2, 3], "m_w": [2, 3, 4]}),
                                   {"woMT": "m_wo", "wMT": "m_w"}, regimes)
    assert [c.id for c in only_two] == ["H20-meta"]
