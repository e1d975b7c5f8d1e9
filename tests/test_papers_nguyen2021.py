"""simul.papers.nguyen2021: spec, Table 1 layout and claims on hand-made sweep summaries."""

import pandas as pd
import pytest

from simul.papers import nguyen2021 as n21
from simul.sweep import expand

NAN = float("nan")


def summary(al=None) -> pd.DataFrame:
    """Table 1's 12 settings on one split: AL = 10·k + 20·s − 100·N (grows with k and s,
    falls with N), BLEU = AL / 100; ``al`` overrides {(k, s, N): AL}; offline last."""
    rows = []
    for k in (100, 200):
        for s in (10, 20):
            for n in (1, 2, 3):
                latency = (al or {}).get((k, s, n), 10.0 * k + 20.0 * s - 100.0 * n)
                rows.append({"model": "c", "split": "tst-COMMON", "policy": "wait_k_frames",
                             "setting": f"k={k}_s={s}_n={n}", "param_k": k, "param_s": s,
                             "param_n": n, "BLEU": latency / 100, "AL": latency})
    rows.append({"model": "c", "split": "tst-COMMON", "policy": "offline", "setting": "default",
                 "param_k": NAN, "param_s": NAN, "param_n": NAN, "BLEU": 30.0, "AL": 5000.0})
    return pd.DataFrame(rows)


def by_id(claims):
    return {c.id: c for c in claims}


def test_spec_is_table1s_grid_and_offline():
    s = n21.spec(["blstm_char_en-es"], "en-es", ["tst-COMMON", "tst-HE"], "out",
                 max_utterances=40)
    assert s["policies"] == [
        {"policy": "wait_k_frames", "fixed": {"maxlenratio": 1.0},
         "grid": {"k": [100, 200], "s": [10, 20], "n": [1, 2, 3]}},
        {"policy": "offline"}]
    assert s["max_utterances"] == 40 and "corpus" not in s
    assert len(expand(s["policies"], "spec")) == 12 + 1


def test_spec_with_figure2s_settings_and_a_corpus():
    s = n21.spec(["a", "b"], "en-pt", ["tst-COMMON"], "out", settings=n21.FIGURE2_SETTINGS,
                 maxlenratio=1.6, corpus="/data/mustc")
    assert s["policies"][0] == {"policy": "wait_k_frames", "fixed": {"maxlenratio": 1.6},
                                "settings": n21.FIGURE2_SETTINGS}
    assert s["corpus"] == "/data/mustc" and s["models"] == ["a", "b"]


def test_spec_takes_a_smaller_grid():
    s = n21.spec(["m"], "en-es", ["tst-COMMON"], "out", ks=[100], strides=[10], ns=[1, 2])
    assert s["policies"][0]["grid"] == {"k": [100], "s": [10], "n": [1, 2]}


def test_table_sorts_by_al_and_puts_offline_last():
    t = n21.table(summary())
    assert list(t.columns) == ["setting", "k", "s", "N", "BLEU tst-COMMON", "AL tst-COMMON"]
    assert t.setting.tolist() == ["wait-k"] * 12 + ["offline"]
    assert t["AL tst-COMMON"].iloc[0] == 10 * 100 + 20 * 10 - 100 * 3  # k 100, s 10, N 3
    assert t["AL tst-COMMON"].iloc[-1] == 5000.0


def test_claims_hold_on_monotone_numbers():
    found = by_id(n21.claims(summary()))
    assert all(found[f"N21-AL-{x}"].holds for x in ("k", "s", "N"))
    assert found["N21-AL-k"].detail == "6 groups, all monotone"
    assert found["N21-BLEU-AL"].holds and found["N21-offline"].holds


@pytest.mark.parametrize("cell, al, claim, detail", [  # settings are floats beside offline's NaN
    ((200, 10, 1), 100.0, "N21-AL-k", "{'s': 10.0, 'N': 1.0}: AL 1100, 100"),
    ((100, 20, 2), 100.0, "N21-AL-s", "{'k': 100.0, 'N': 2.0}: AL 1000, 100"),
    ((100, 10, 3), 1050.0, "N21-AL-N", "{'k': 100.0, 's': 10.0}: AL 1100, 1000, 1050"),
])
def test_a_dip_fails_its_claim_and_names_its_group(cell, al, claim, detail):
    found = by_id(n21.claims(summary({cell: al})))
    assert not found[claim].holds and found[claim].detail == detail


def test_offline_below_the_best_setting_fails():
    table = summary()
    table.loc[table.policy == "offline", "BLEU"] = 20.0  # best wait-k: AL 2300 → BLEU 23
    found = by_id(n21.claims(table))
    assert not found["N21-offline"].holds
    assert found["N21-offline"].detail == "offline 20.0, best wait-k 23.0"


def test_offline_claim_is_superiority():
    table = summary()
    table.loc[table.policy == "offline", "BLEU"] = 22.5  # best wait-k 23: below it
    offline = by_id(n21.claims(table))["N21-offline"]
    assert (offline.kind, offline.evidence.margin) == ("superiority", 0.0)
    assert offline.evidence.effect == pytest.approx(-0.5)
    assert offline.verdict == "contradicted"
    assert by_id(n21.claims(summary()))["N21-offline"].evidence.effect == pytest.approx(7.0)


def test_n2s20_claims_by_hand():
    # (N=2, s=20) against (N=1, s=10): k=100 AL 1050 vs 1100 (−50), BLEU 10.5 vs 11 (−0.5);
    # k=200 AL 2070 vs 2100 (−30), BLEU 20.7 vs 21 (−0.3): the largest gaps −30 ms and −0.3
    found = by_id(n21.claims(summary({(100, 20, 2): 1050.0, (200, 20, 2): 2070.0})))
    al, bleu = found["N21-N2s20-AL"], found["N21-N2s20-BLEU"]
    assert al.evidence.effect == pytest.approx(-30.0) and al.holds
    assert bleu.evidence.effect == pytest.approx(-0.3) and bleu.holds
    assert al.kind == bleu.kind == "superiority" and al.evidence.claimed == "less"
    assert al.needs_full_run and bleu.needs_full_run
    assert al.detail.startswith("(N=2, s=20) vs (N=1, s=10): k=100: AL 1050 vs 1100")
    # the base summary: (N=2, s=20) is 100 ms later and 1 BLEU higher at each k
    found = by_id(n21.claims(summary()))
    assert found["N21-N2s20-AL"].evidence.effect == pytest.approx(100.0)
    assert found["N21-N2s20-AL"].verdict == "contradicted"
    assert found["N21-N2s20-BLEU"].evidence.effect == pytest.approx(1.0)
    assert found["N21-N2s20-BLEU"].verdict == "contradicted"


def test_n2s20_claims_need_both_settings():
    table = summary()
    table = table[table.param_n != 2]
    assert not {"N21-N2s20-AL", "N21-N2s20-BLEU"} & set(by_id(n21.claims(table)))


def figure2(char_b_bleu=20.0):
    """Char, BPE400 and BPE2K at two settings: char − BPE BLEU small a +2, b +1, large a +1,
    b −1 (mean +0.75); AL char − small +100, +100, − large +200, +200 (mean +150); small −
    large BLEU −1, −2 (mean −1.5), AL +100 (mean +100)."""
    return pd.DataFrame([
        {"model": m, "policy": "wait_k_frames", "setting": st, "AL": al, "BLEU": b}
        for m, st, al, b in (("blstm_char_en-pt", "a", 1000.0, 10.0),
                             ("blstm_char_en-pt", "b", 2000.0, char_b_bleu),
                             ("blstm_bpe-small_en-pt", "a", 900.0, 8.0),
                             ("blstm_bpe-small_en-pt", "b", 1900.0, 19.0),
                             ("blstm_bpe-large_en-pt", "a", 800.0, 9.0),
                             ("blstm_bpe-large_en-pt", "b", 1800.0, 21.0))])


def test_bpe_claims_are_mean_gaps_in_both_halves():
    found = by_id(n21.claims(summary(), figure2()))
    bleu, al = found["N21-BPE-BLEU"], found["N21-BPE"]
    assert bleu.evidence.effect == pytest.approx(0.75) and bleu.holds
    assert al.evidence.effect == pytest.approx(150.0) and al.holds
    assert (bleu.finding.half, al.finding.half) == ("quality", "latency")
    assert bleu.finding.sentence == al.finding.sentence
    # BPE400 against BPE2K: the same trend in the sentence, here only in AL
    assert found["N21-BPE-size-AL"].evidence.effect == pytest.approx(100.0)
    assert found["N21-BPE-size-AL"].holds
    assert found["N21-BPE-size-BLEU"].evidence.effect == pytest.approx(-1.5)
    assert found["N21-BPE-size-BLEU"].verdict == "contradicted"
    # char b now below both BPE models: mean (2 − 2 + 1 − 4) / 4
    claim = by_id(n21.claims(summary(), figure2(17.0)))["N21-BPE-BLEU"]
    assert claim.evidence.effect == pytest.approx(-0.75) and claim.verdict == "contradicted"


def test_known_gaps_name_claims_of_this_paper():
    assert n21.KNOWN_GAPS and all(claim.startswith("N21-") for claim in n21.KNOWN_GAPS)


def test_cascade_spec_is_the_cascade_policy_over_k():
    s = n21.cascade_spec("cascade_en-es", "en-es", "tst-COMMON", "out", ks=[1, 3],
                         chunk_ms=200, max_utterances=40)
    assert s["models"] == ["cascade_en-es"] and s["splits"] == ["tst-COMMON"]
    assert s["policies"] == [{"policy": "cascade", "grid": {"k": [1, 3]},
                              "fixed": {"chunk_ms": 200}}]
    assert len(expand(s["policies"], "spec")) == 2


def figure3_rows(e2e: dict, cascade: dict) -> pd.DataFrame:
    """{AL_orig: BLEU} of the e2e model's wait-k settings and of the cascade's k."""
    rows = [{"model": "char", "policy": "wait_k_frames", "setting": f"e{i}",
             "AL_orig": x, "BLEU": y} for i, (x, y) in enumerate(e2e.items())]
    rows += [{"model": "cascade", "policy": "cascade", "setting": f"k={i}",
              "AL_orig": x, "BLEU": y} for i, (x, y) in enumerate(cascade.items())]
    return pd.DataFrame(rows)


def test_figure3_e2e_curve_is_its_front_and_the_cascade_every_k():
    # e2e (1500, 18) is dominated by (1000, 20): left out; the cascade keeps all its points
    rows = figure3_rows({1000: 20.0, 1500: 18.0, 3000: 30.0}, {2500: 10.0, 2000: 12.0})
    c = n21.figure3_curves(rows)
    assert c[c.system == "e2e"].AL_orig.tolist() == [1000, 3000]
    assert c[c.system == "cascade"].AL_orig.tolist() == [2000, 2500]
    assert n21.latency_regimes(rows) == (2000.0, 2250.0, 2500.0)


def test_figure3_claims_hold_when_the_curves_cross_as_the_paper_says():
    # e2e: 20 → 30 BLEU over 1000–3000 ms; cascade: 10 → 40 over 1000–3000 ms. Common
    # range 1000–3000, middle 2000. e2e − cascade = 10 − 10·(x − 1000)/1000: +10 → 0 on
    # the low half (mean +5), 0 → −10 on the high half (mean −5); best BLEU 30 against 40
    rows = figure3_rows({1000: 20.0, 3000: 30.0}, {1000: 10.0, 3000: 40.0})
    claims = by_id(n21.figure3_claims(rows))
    low, high = claims["N21-e2e-low"], claims["N21-cascade-high"]
    assert low.evidence.effect == pytest.approx(5.0) and low.holds
    assert high.evidence.effect == pytest.approx(-5.0) and high.holds
    assert low.detail.startswith("1000–2000 ms") and high.detail.startswith("2000–3000 ms")
    comparable = claims["N21-cascade-comparable"]
    assert comparable.evidence.effect == pytest.approx(-10.0)
    assert comparable.verdict == "contradicted"
    # best settings 0.5 BLEU apart: comparable, within 1 BLEU
    near = by_id(n21.figure3_claims(figure3_rows({1000: 20.0, 3000: 39.5},
                                                 {1000: 10.0, 3000: 40.0})))
    assert near["N21-cascade-comparable"].verdict == "holds"


def test_figure3_claims_on_the_multipath_cascade_are_marked():
    rows = figure3_rows({1000: 20.0, 3000: 30.0}, {1000: 10.0, 3000: 40.0})
    claims = by_id(n21.figure3_claims(rows, multipath=True))
    assert set(claims) == {"N21-e2e-low-multipath", "N21-cascade-high-multipath",
                           "N21-cascade-comparable-multipath"}
    low = claims["N21-e2e-low-multipath"]
    assert "multi-path" in low.finding.settings and not low.own
    assert low.evidence.effect == pytest.approx(5.0) and low.holds


def test_figure3_claims_contradicted_when_the_cascade_is_better_everywhere():
    rows = figure3_rows({1000: 10.0, 3000: 20.0}, {1000: 20.0, 3000: 30.0})
    claims = by_id(n21.figure3_claims(rows))
    assert claims["N21-e2e-low"].evidence.verdict == "contradicted"
    assert claims["N21-cascade-high"].evidence.verdict == "holds"


def test_figure3_claims_without_a_common_latency_range_are_undecided():
    rows = figure3_rows({1000: 20.0, 1500: 25.0}, {2500: 10.0, 3000: 40.0})
    claims = n21.figure3_claims(rows)
    assert [c.verdict for c in claims[:2]] == ["undecided", "undecided"]
    assert "no common AL_orig range" in claims[0].detail


def test_every_claim_is_declared():
    found = [*n21.claims(summary(), figure2()),
             *n21.figure3_claims(figure3_rows({1000: 20.0, 3000: 30.0},
                                              {1000: 10.0, 3000: 40.0}))]
    assert {c.id for c in found} == set(n21.FINDINGS)
    assert all(c.finding is n21.FINDINGS[c.id] for c in found)
