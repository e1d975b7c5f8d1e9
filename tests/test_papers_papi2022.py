"""simul.papers.papi2022: spec, table layouts and claims on hand-made summaries (no model)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pandas as pd
import pytest
import torch

from simul import sweep
from simul.analysis.claims import BLEU_MARGIN
from simul.papers import papi2022 as p22


def seg(duration_ms, source):
    return SimpleNamespace(duration_ms=duration_ms, source=source)


def test_mean_word_ms_is_total_duration_over_total_words():
    # 1000 + 500 ms over 4 + 2 words
    assert p22.mean_word_ms([seg(1000, "a b c d"), seg(500, " e  f ")]) == 250.0


def test_mean_word_ms_refuses_segments_without_words():
    with pytest.raises(ValueError, match="no source words"):
        p22.mean_word_ms([seg(1000, "  ")])


def test_label_is_the_shipped_name_or_the_directory_name():
    assert p22.label("conformer_bpe_en-es") == "conformer_bpe_en-es"
    assert p22.label("/tmp/models/my_model") == "my_model"


def test_spec_runs_both_detections_for_every_k_and_offline_greedy_and_beam():
    s = p22.spec("conformer_bpe_en-es", "en-es", "tst-COMMON", "runs/x", word_ms=343.3,
                 ks=[3, 5], max_utterances=7)
    assert s["models"] == ["conformer_bpe_en-es"] and s["splits"] == ["tst-COMMON"]
    assert s["max_utterances"] == 7 and "corpus" not in s
    fixed, adaptive, offline = s["policies"]
    assert fixed["grid"] == {"k": [3, 5]} and adaptive["grid"] == {"k": [3, 5]}
    # A.2: the Conformer used avoid_eos_while_reading with both detections
    assert fixed["fixed"] == {"detection": "fixed", "word_ms": 343.0, "chunk_ms": 343.0,
                              "force_finish": True, "avoid_eos_while_reading": True}
    assert adaptive["fixed"] == {"detection": "adaptive", "chunk_ms": 343.0,
                                 "force_finish": True, "avoid_eos_while_reading": True}
    assert offline == {"policy": "offline", "grid": {"beam": [1, 5]}}
    settings = sweep.expand(s["policies"], "spec")  # every setting builds a policy
    assert [x.policy for x in settings] == ["wait_k_words"] * 4 + ["offline"] * 2
    assert p22.spec("conformer_bpe_en-es", "en-es", "tst-COMMON", "o", word_ms=280,
                    corpus="/c")["corpus"] == "/c"


def test_fixed_detection_avoids_eos_as_the_paper_set_it_per_architecture():
    # A.1: the Transformer's fixed detection without avoid_eos_while_reading ("it degrades")
    fixed = p22.spec("transformer_bpe_en-es", "en-es", "tst-COMMON", "o",
                     word_ms=280)["policies"][0]["fixed"]
    assert fixed["avoid_eos_while_reading"] is False
    assert p22.spec("transformer_bpe_en-es", "en-es", "tst-COMMON", "o", word_ms=280,
                    avoid_eos_fixed=True)["policies"][0]["fixed"]["avoid_eos_while_reading"]
    assert p22.encoder_type("conformer_bpe_en-es") == "conformer"
    with pytest.raises(ValueError, match="not a shipped model"):
        p22.encoder_type("/nonexistent/model")


def row(model, detection, k, laal, bleu, *, ca=300.0, length_diff=0.0):
    return {"model": model, "split": "tst-COMMON", "policy": "wait_k_words",
            "setting": f"{detection}_k={k}", "param_k": k, "param_detection": detection,
            "param_beam": math.nan, "BLEU": bleu, "LAAL": laal, "LAAL_CA": laal + ca,
            "AL": laal - 100, "AL_CA": laal - 100 + ca, "length_diff": length_diff}


def offline(model, beam, bleu):
    return {"model": model, "split": "tst-COMMON", "policy": "offline",
            "setting": f"beam={beam}", "param_k": math.nan, "param_detection": math.nan,
            "param_beam": beam, "BLEU": bleu, "LAAL": 5000.0, "LAAL_CA": 5600.0,
            "AL": 4900.0, "AL_CA": 5500.0, "length_diff": 0.0}


def curves(model, shift=0.0):
    """fixed: (900, 10) (1500, 14) (2500, 16); adaptive: (1200, 13) (2000, 17) (3000, 18);
    BLEU + shift."""
    return [row(model, "fixed", 3, 900, 10 + shift, length_diff=-1.0),
            row(model, "fixed", 5, 1500, 14 + shift, length_diff=-0.5),
            row(model, "fixed", 7, 2500, 16 + shift, length_diff=0.25),
            row(model, "adaptive", 3, 1200, 13 + shift, length_diff=0.5),
            row(model, "adaptive", 5, 2000, 17 + shift, length_diff=0.75),
            row(model, "adaptive", 7, 3000, 18 + shift, length_diff=1.0)]


def summary(*parts):
    return pd.DataFrame([r for part in parts for r in part])


def by_id(found):
    return {c.id: c for c in found}


def test_table1_has_greedy_and_beam_bleu_per_model():
    s = summary(curves("T"), [offline("T", 1, 20.0), offline("T", 5, 21.5)],
                [offline("C", 5, 23.0), offline("C", 1, 22.0)])
    t = p22.table1(s)
    assert list(t.columns) == ["model", "BLEU greedy", "BLEU beam-5"]
    assert t.values.tolist() == [["T", 20.0, 21.5], ["C", 22.0, 23.0]]


def test_table2_lists_length_diff_then_bleu_per_k():
    t = p22.table2(summary(curves("C"), [offline("C", 1, 22.0)]))
    assert list(t.columns) == ["model", "detection", "k=3", "k=5", "k=7",
                               "BLEU k=3", "BLEU k=5", "BLEU k=7"]
    assert t.values.tolist() == [["C", "fixed", -1.0, -0.5, 0.25, 10, 14, 16],
                                 ["C", "adaptive", 0.5, 0.75, 1.0, 13, 17, 18]]


def test_offline_bleu_names_the_dashed_lines():
    s = summary([offline("T", 1, 20.0), offline("T", 5, 21.5), offline("C", 1, 9.0)])
    assert p22.offline_bleu(s, "T") == {"offline greedy": 20.0, "offline beam-5": 21.5}


@pytest.mark.parametrize("min_x, expected", [
    # upper (1000, 20) (2000, 24); lower (1500, 19) (2500, 21)
    # upper's 2000 inside lower's range: lower(2000) = 20 → +4
    # lower's 1500 inside upper's range: upper(1500) = 22 → +3
    (0.0, [(1500.0, 3.0), (2000.0, 4.0)]),
    (1600.0, [(2000.0, 4.0)]),
    (3000.0, []),
])
def test_curve_gaps_interpolate_the_other_curve(min_x, expected):
    upper = pd.DataFrame({"LAAL": [2000, 1000], "BLEU": [24.0, 20.0]})
    lower = pd.DataFrame({"LAAL": [1500, 2500], "BLEU": [19.0, 21.0]})
    assert p22.curve_gaps(upper, lower, min_x=min_x) == expected


def test_curve_gaps_of_disjoint_curves_are_empty():
    a = pd.DataFrame({"LAAL": [100, 200], "BLEU": [1.0, 2.0]})
    b = pd.DataFrame({"LAAL": [300, 400], "BLEU": [3.0, 4.0]})
    assert p22.curve_gaps(a, b) == []


def test_claims_on_two_models():
    # adaptive − fixed at LAAL ≥ 1000: +1 (1200), +0.5 (1500), +2 (2000), +1.5 (2500)
    s = summary(curves("T"), curves("C", shift=1.0),
                [offline("T", 1, 20.0), offline("T", 5, 21.0),
                 offline("C", 1, 22.0), offline("C", 5, 23.0)])
    found = by_id(p22.claims(s, transformer="T", conformer="C"))
    assert set(found) == {"P22-adaptive", "P22-fixed-low", "P22-fixed-far",
                          "P22-adaptive-reach", "P22-conformer-offline", "P22-conformer-simul",
                          "P22-conformer-latency", "P22-conformer-high", "P22-CA-overhead"}
    assert found["P22-adaptive"].verdict == "holds"
    assert "+1.0 at 1200 ms" in found["P22-adaptive"].detail
    assert "+0.5 at 1500 ms" in found["P22-adaptive"].detail
    assert found["P22-conformer-offline"].detail == ("offline greedy: 22.0 vs 20.0; "
                                                     "offline beam-5: 23.0 vs 21.0")
    assert found["P22-conformer-offline"].verdict == "holds"
    assert found["P22-conformer-simul"].verdict == "holds"
    # the same LAAL at every (detection, k): within a word
    assert found["P22-conformer-latency"].evidence.effect == 0.0
    assert found["P22-conformer-latency"].verdict == "holds"
    # fixed at k 7: T 16 − 20, C 17 − 22: at least 4 BLEU below offline greedy ("far": the
    # largest, −4 + 1 = −3, below 0); adaptive at k 7: 18 − 20, 19 − 22: −3, beyond "almost"
    assert found["P22-fixed-far"].evidence.effect == pytest.approx(-3.0)
    assert found["P22-fixed-far"].verdict == "holds"
    assert found["P22-adaptive-reach"].evidence.effect == pytest.approx(-3.0)
    assert found["P22-adaptive-reach"].verdict == "contradicted"
    assert (found["P22-fixed-far"].finding.half,
            found["P22-adaptive-reach"].finding.half) == ("first", "second")
    # fixed detection is not above adaptive at the lower half of their shared LAAL
    # (1200–1850 ms): −1 at 1200, −0.5 at 1500
    assert found["P22-fixed-low"].evidence.effect == pytest.approx(-0.75)
    assert found["P22-CA-overhead"].verdict == "not measured"
    assert "CAAT" in found["P22-CA-overhead"].needs
    assert found["P22-adaptive"].needs_full_run
    assert not any(c.own for c in found.values())


def test_claim_kinds():
    s = summary(curves("T"), curves("C", shift=1.0),
                [offline("T", 1, 20.0), offline("C", 1, 22.0)])
    found = by_id(p22.claims(s, transformer="T", conformer="C"))
    assert {cid: (c.kind, c.finding.margin) for cid, c in found.items()
            if c.kind != "superiority"} == {
        "P22-adaptive-reach": ("non-inferiority", BLEU_MARGIN),
        "P22-conformer-latency": ("equivalence", p22.WORD_MS)}
    for c in found.values():
        assert c.finding is p22.FINDINGS[c.id]


def test_fixed_detection_better_at_lower_latency_by_hand():
    # shared LAAL 1000–3000, middle 2000: fixed − adaptive +2 at 1000, 0 at 2000: +1
    s = summary([row("C", "fixed", 3, 1000, 15), row("C", "fixed", 5, 2000, 17),
                 row("C", "fixed", 7, 3000, 18), row("C", "adaptive", 3, 1000, 13),
                 row("C", "adaptive", 5, 2000, 17), row("C", "adaptive", 7, 3000, 20)])
    claim = by_id(p22.claims(s))["P22-fixed-low"]
    assert claim.evidence.effect == pytest.approx(1.0) and claim.verdict == "holds"


@pytest.mark.parametrize("c_shift_ms, latency_verdict", [(0, "holds"), (400, "contradicted")])
def test_conformer_gains_grow_with_latency_without_affecting_it(c_shift_ms, latency_verdict):
    # Conformer − Transformer +1 at 1000, +2 at 2000, +3 at 3000 ms: +2.5 on the upper
    # half (2000–3000), +1.5 on the lower (1000–2000), a gain 1 larger; its LAAL shifted by
    # c_shift_ms at every k (beyond one word at 400 ms)
    t = [row("T", "fixed", k, x, b) for k, x, b in ((3, 1000, 10), (5, 2000, 12),
                                                    (7, 3000, 14))]
    c = [row("C", "fixed", k, x, b) for k, x, b in ((3, 1000, 11), (5, 2000, 14),
                                                    (7, 3000, 17))]
    found = by_id(p22.claims(summary(t, c), transformer="T", conformer="C"))
    assert found["P22-conformer-high"].evidence.effect == pytest.approx(1.0)
    assert found["P22-conformer-high"].verdict == "holds"
    shifted = [{**r, "LAAL": r["LAAL"] + c_shift_ms} for r in c]
    found = by_id(p22.claims(summary(t, shifted), transformer="T", conformer="C"))
    assert found["P22-conformer-latency"].evidence.effect == pytest.approx(c_shift_ms)
    assert found["P22-conformer-latency"].verdict == latency_verdict


def test_adaptive_below_fixed_fails():
    s = summary([row("C", "fixed", 3, 1200, 15), row("C", "fixed", 5, 2000, 18),
                 row("C", "adaptive", 3, 1200, 14), row("C", "adaptive", 5, 2000, 17)])
    assert by_id(p22.claims(s))["P22-adaptive"].verdict == "contradicted"


def test_low_latency_points_do_not_count_for_the_adaptive_claim():
    # below 1000 ms adaptive is far worse; from 1000 ms on it is 1 BLEU better
    s = summary([row("C", "fixed", 3, 500, 12), row("C", "fixed", 5, 1000, 14),
                 row("C", "fixed", 7, 2000, 16),
                 row("C", "adaptive", 3, 500, 2), row("C", "adaptive", 5, 1000, 15),
                 row("C", "adaptive", 7, 2000, 17)])
    assert by_id(p22.claims(s))["P22-adaptive"].holds


def test_curves_without_common_latency_are_undecided_and_say_so():
    s = summary([row("C", "fixed", 3, 1200, 15), row("C", "fixed", 5, 1400, 16),
                 row("C", "adaptive", 3, 2000, 17), row("C", "adaptive", 5, 2400, 18)])
    claim = by_id(p22.claims(s))["P22-adaptive"]
    assert claim.verdict == "undecided" and "no common latency range" in claim.detail


def test_conformer_below_transformer_fails():
    s = summary(curves("T"), curves("C", shift=-0.5),
                [offline("T", 1, 20.0), offline("C", 1, 19.0)])
    found = by_id(p22.claims(s, transformer="T", conformer="C"))
    assert found["P22-conformer-simul"].verdict == "contradicted"
    assert found["P22-conformer-offline"].verdict == "contradicted"
    assert found["P22-conformer-offline"].detail == "offline greedy: 19.0 vs 20.0"


def test_conformer_claims_need_both_models():
    found = by_id(p22.claims(summary(curves("C")), transformer="T", conformer="C"))
    assert set(found) == {"P22-adaptive", "P22-fixed-low", "P22-CA-overhead"}


def test_trained_spec_decodes_every_model_on_the_trained_schedule():
    s = p22.trained_spec(["off", "w3"], "en-es", "tst-COMMON", "o", word_ms=280.4, ks=[3, 7])
    assert s["models"] == ["off", "w3"]
    waitk, offline = s["policies"]
    assert waitk == {"policy": "wait_k_words", "grid": {"k": [3, 7]},
                     "fixed": {"detection": "fixed", "word_ms": 280.0, "chunk_ms": 280.0,
                               "force_finish": True, "avoid_eos_while_reading": True}}
    assert offline == {"policy": "offline"}
    assert len(sweep.expand(s["policies"], "spec")) == 3


def test_trained_spec_shows_the_eos_alternative_on_request():
    s = p22.trained_spec(["off"], "en-es", "tst-COMMON", "o", word_ms=280.0, ks=[3],
                         avoid_eos=False)
    assert s["policies"][0]["fixed"]["avoid_eos_while_reading"] is False
    assert s["policies"][0]["fixed"]["force_finish"] is True


EOS_BUMP = 4.0  # cancels make_tiny_model's −4: the tiny model then ends sentences while reading


@pytest.mark.slow
def test_both_eos_rules_in_one_sweep_give_what_two_sweeps_give(tmp_path):
    """The notebooks decode A.2's rule and its alternative in one sweep: split by rule, its
    rows and hypotheses are those of a sweep of each rule alone (and the rules differ)."""
    from simul.records import read
    from tests.conftest import make_tiny_model
    from tests.test_mustc import PAIR, SPLIT, make_corpus

    model = make_tiny_model(tmp_path / "tiny", "transformer")
    state = torch.load(model / "model.pth")
    state["decoder.output_layer.bias"][-1] += EOS_BUMP  # <sos/eos> is the last unit: it
    torch.save(state, model / "model.pth")               # now comes while reading too
    make_corpus(tmp_path / "corpus" / PAIR)

    def run(name, rule):
        spec = p22.trained_spec([str(model)], PAIR, SPLIT, str(tmp_path / name), word_ms=150.0,
                                ks=[1, 2], corpus=str(tmp_path / "corpus"), avoid_eos=rule)
        return sweep.run(spec, workers=1, progress=False, store=False)

    def hypotheses(rows):
        return {r.setting: [x.prediction for x in read(r.records)] for r in rows.itertuples()}

    both = p22.by_avoid_eos(run("both", (True, False)))
    assert set(both) == {True, False}
    columns = ["model", "policy", "setting", "param_k", "BLEU", "AL", "LAAL", "length_diff"]
    for rule in (True, False):
        alone = run(f"alone_{rule}", rule)
        pd.testing.assert_frame_equal(both[rule][columns], alone[columns])
        assert hypotheses(both[rule]) == hypotheses(alone)
    waitk = {rule: list(hypotheses(rows[rows.policy == "wait_k_words"]).values())
             for rule, rows in both.items()}
    assert waitk[True] != waitk[False]


def test_by_avoid_eos_refuses_a_summary_without_the_rule():
    with pytest.raises(ValueError, match="avoid_eos_while_reading"):
        p22.by_avoid_eos(pd.DataFrame({"policy": ["offline"]}))


def trained_rows(curves: dict[str, dict[int, tuple[float, float]]]) -> pd.DataFrame:
    """{model: {k: (LAAL, BLEU)}} as fixed-detection wait-k rows."""
    return pd.DataFrame([{"model": m, "policy": "wait_k_words", "param_k": k,
                          "param_detection": "fixed", "setting": f"k={k}", "LAAL": x,
                          "BLEU": y} for m, pts in curves.items() for k, (x, y) in pts.items()])


@pytest.mark.parametrize("w3_low, effect, verdict", [
    # offline − w3: low regime (500 ms) 10 − w3_low, medium (1500) +2, high (2500) +4
    (8.0, 2.0, "holds"), (16.0, -6.0, "contradicted"),
])
def test_offline_outperforms_trained_at_every_latency_regime(w3_low, effect, verdict):
    rows = trained_rows({"off": {3: (500, 10.0), 5: (1500, 30.0), 7: (2500, 40.0)},
                         "w3": {3: (500, w3_low), 5: (1500, 28.0), 7: (2500, 36.0)}})
    claims = by_id(p22.trained_claims(rows, "off", ["w3"]))
    high = claims["P22-offline-vs-trained"]
    assert high.evidence.effect == pytest.approx(effect) and high.verdict == verdict
    assert high.kind == "superiority" and not high.own
    assert "low " + f"{10 - w3_low:+.1f}" in high.detail and "high +4.0" in high.detail
    # simul's own question, apart: trained − offline below 1000 ms
    low = claims["P22-trained-low"]
    assert low.own and low.evidence.effect == pytest.approx(w3_low - 10.0)


def test_trained_claims_take_the_worst_trained_model():
    rows = trained_rows({"off": {3: (500, 10.0), 5: (1500, 30.0), 7: (2500, 40.0)},
                         "w3": {3: (500, 8.0), 5: (1500, 28.0), 7: (2500, 36.0)},
                         "w7": {3: (500, 9.0), 5: (1500, 32.0), 7: (2500, 42.0)}})
    claims = by_id(p22.trained_claims(rows, "off", ["w3", "w7"]))
    assert claims["P22-offline-vs-trained"].evidence.effect == pytest.approx(-2.0)
    assert claims["P22-offline-vs-trained"].verdict == "contradicted"
    # low latency: w3 − off = −2, w7 − off = −1: the largest is −1
    assert claims["P22-trained-low"].evidence.effect == pytest.approx(-1.0)


def test_trained_claims_leave_k_train_to_the_grid():
    # the Conformers trained at k_train 3 and 7: the offline comparison and simul's own
    # low-latency question; k_train's effect is P22's grid's (tests/test_papi2022_grid.py)
    rows = trained_rows({"off": {3: (500, 10.0), 5: (1500, 30.0)},
                         "w3": {3: (1000, 16.0), 5: (2000, 28.0)},
                         "w7": {3: (800, 18.0), 5: (1800, 30.0)}})
    found = by_id(p22.trained_claims(rows, "off", ["w3", "w7"]))
    assert set(found) == {"P22-offline-vs-trained", "P22-trained-low"}


def test_trained_claims_of_the_eos_alternative_are_simuls_own():
    rows = trained_rows({"off": {3: (500, 10.0), 5: (1500, 30.0), 7: (2500, 40.0)},
                         "w3": {3: (500, 16.0), 5: (1500, 28.0), 7: (2500, 36.0)}})
    plain = by_id(p22.trained_claims(rows, "off", ["w3"]))
    marked = by_id(p22.trained_claims(rows, "off", ["w3"], eos_allowed=True))
    assert set(marked) == {f"{cid}-eos" for cid in plain}
    for claim_id, claim in marked.items():
        assert claim.own and "not A.2's setting" in claim.finding.settings
        before = plain[claim_id.removesuffix("-eos")]
        if claim.evidence is not None:
            assert claim.evidence.effect == before.evidence.effect


def test_trained_table_puts_the_offline_model_first_with_ratios_to_its_offline_bleu():
    rows = trained_rows({"w3": {3: (900, 24.0), 7: (1900, 30.0)},
                         "off": {3: (1000, 20.0), 7: (2000, 32.0)}})
    offline = pd.DataFrame([{"model": "w3", "policy": "offline", "BLEU": 36.0},
                            {"model": "off", "policy": "offline", "BLEU": 40.0}])
    table = p22.trained_table(pd.concat([rows, offline], ignore_index=True), "off", {"w3": 3})
    assert list(table.model) == ["off", "w3"] and list(table.k_train) == ["offline", "3"]
    assert list(table["/ offline model"]) == pytest.approx([1.0, 0.9])  # 36 / 40
    assert list(table["BLEU k=3"]) == [20.0, 24.0] and list(table["LAAL k=7"]) == [2000, 1900]
    multipath = p22.trained_table(pd.concat([rows, offline], ignore_index=True), "off",
                                  {"w3": [1, 3, 5]})
    assert multipath.k_train.iloc[1] == "1, 3, 5"


def test_figure_trained_draws_nca_and_ca_panels_with_the_medium_latency_line():
    import matplotlib

    matplotlib.use("Agg")
    rows = trained_rows({"off": {3: (500, 10.0), 5: (1500, 30.0)},
                         "w3": {3: (600, 16.0), 5: (1600, 28.0)}})
    rows["LAAL_CA"] = rows.LAAL + 250.0
    fig = p22.figure_trained(rows, "title")
    left, right = fig.axes
    assert left.get_xlabel().startswith("LAAL")
    assert left.get_legend() is None and right.get_legend() is not None
    # one curve per model (LAAL left, LAAL_CA right), and the line at 1000 ms in each
    for ax, shift in ((left, 0.0), (right, 250.0)):
        xs = sorted(tuple(line.get_xdata()) for line in ax.lines)
        assert (1000.0, 1000.0) in xs
        assert (500.0 + shift, 1500.0 + shift) in xs and (600.0 + shift, 1600.0 + shift) in xs
    assert fig._suptitle.get_text() == "title"


PAIRS = {"en-de": {"transformer": "T-de", "conformer": "C-de"},
         "en-es": {"transformer": "T-es", "conformer": "/somewhere/C-es"}}


def test_pair_claims_take_the_smallest_gap_over_architectures_and_detections():
    # en-es − en-de: Transformer curves +3 (both detections), Conformer curves +1 (fixed,
    # adaptive: curves("C-es", 1) over curves("C-de")); offline greedy +2 and +0.5, beam-5 +4
    s = summary(curves("T-de"), curves("T-es", shift=3.0), curves("C-de"),
                curves("C-es", shift=1.0),
                [offline("T-de", 1, 18.0), offline("T-es", 1, 20.0), offline("T-de", 5, 18.0),
                 offline("T-es", 5, 22.0), offline("C-de", 1, 21.0), offline("C-es", 1, 21.5)])
    found = by_id(p22.pair_claims(s, PAIRS))
    assert set(found) == {"P22-pair-offline", "P22-pair-simul"}
    assert found["P22-pair-offline"].evidence.effect == pytest.approx(0.5)
    assert found["P22-pair-simul"].evidence.effect == pytest.approx(1.0)
    assert all(c.kind == "superiority" and c.needs_full_run for c in found.values())
    assert "offline beam-5: T-es 22.0 vs T-de 18.0" in found["P22-pair-offline"].detail
    # en-de better on one architecture: the smallest gap is negative, contradicted here
    worse = summary(curves("T-de", shift=2.0), curves("T-es"),
                    [offline("T-de", 1, 18.0), offline("T-es", 1, 20.0)])
    found = by_id(p22.pair_claims(worse, {"en-de": {"transformer": "T-de"},
                                          "en-es": {"transformer": "T-es"}}))
    assert found["P22-pair-simul"].evidence.effect == pytest.approx(-2.0)
    assert found["P22-pair-simul"].verdict == "contradicted"
    assert found["P22-pair-offline"].verdict == "holds"
    # one pair's models missing from the summary: nothing to compare
    assert p22.pair_claims(summary(curves("T-de")), PAIRS) == []


def test_claims_of_one_pair_of_several_carry_the_pair():
    s = summary(curves("T"), curves("C", shift=1.0), [offline("T", 1, 20.0),
                                                      offline("C", 1, 22.0)])
    plain = by_id(p22.claims(s, transformer="T", conformer="C"))
    found = by_id(p22.claims(s, transformer="T", conformer="C", pair="en-de"))
    assert set(found) == {f"{cid}@en-de" for cid in plain}
    assert found["P22-adaptive@en-de"].text.startswith("en-de: adaptive − fixed")
    assert found["P22-adaptive@en-de"].finding.id == "P22-adaptive@en-de"
    assert p22.panel(0, "en-de") == "(a) en-de" and p22.panel(1, "en-es") == "(b) en-es"


def test_the_notebook_silences_the_runaway_warning_it_asks_for(monkeypatch):
    """P22's A.2 setting runs away on purpose: silence_runaway_warning quiets its warning in
    this process and in processes started afterwards (the sweep workers), where it is
    otherwise given once per process; the notebook calls it before its runs."""
    import json
    import os
    import subprocess
    import sys
    import warnings
    from pathlib import Path

    from simul.policies import make, word_detection

    runaway = {"detection": "fixed", "avoid_eos_while_reading": "true"}
    code = ("from simul.policies import make; "
            f"make('wait_k_words', {runaway!r})")
    root = Path(__file__).resolve().parents[1]

    def worker_stderr() -> str:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              cwd=root, check=True).stderr

    monkeypatch.delenv("PYTHONWARNINGS", raising=False)
    assert "RunawaySettingWarning" in worker_stderr()  # what a worker prints unsilenced
    monkeypatch.setattr(word_detection, "_WARNED", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        p22.silence_runaway_warning()
        make("wait_k_words", runaway)
    assert not [w for w in caught if w.category is word_detection.RunawaySettingWarning]
    assert worker_stderr() == ""
    p22.silence_runaway_warning()  # twice: one entry
    assert os.environ["PYTHONWARNINGS"] == p22.RUNAWAY_FILTER
    cells = json.loads((root / "notebooks" / "papi2022.ipynb").read_text())["cells"]
    runs = next(i for i, c in enumerate(cells) if "nb.sweep(" in "".join(c["source"]))
    assert "p22.silence_runaway_warning()" in "".join(cells[runs]["source"])


def test_every_public_name_of_the_package_imports_from_papi2022():
    # the package's modules (offline, trained, common) define what the notebook, the tests
    # and the benchmarks import from simul.papers.papi2022: each public name is re-exported,
    # as the very object its module defines
    import ast
    from pathlib import Path

    from simul.papers.papi2022 import common, offline, trained

    where = {}
    for module in (common, offline, trained):
        for node in ast.parse(Path(module.__file__).read_text()).body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.AnnAssign):
                names = [node.target.id]
            else:
                continue
            where.update({n: module for n in names if not n.startswith("_")})
    assert sorted(p22.__all__) == sorted([*where, "KNOWN_GAPS"])
    assert all(getattr(p22, name) is getattr(module, name) for name, module in where.items())
    assert where["spec"] is offline and where["grid_claims"] is trained
    assert where["FINDINGS"] is common and len(p22.__all__) == 41
