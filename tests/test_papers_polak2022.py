"""simul.papers.polak2022: spec, table layouts and claims on hand-made summaries."""

import math

import pandas as pd
import pytest

from simul.claims import BLEU_MARGIN, RATIO_MARGIN, curve_gap
from simul.papers import polak2022 as k22
from simul.records import Record
from simul.records import write as write_records
from simul.sweep import expand


def row(rule, n, chunk, al, bleu, wait=None, **extra):
    return {"model": "m", "split": "tst-COMMON", "policy": "onlinization",
            "setting": f"{rule}{n}-{chunk}-{wait}", "param_beam": 5, "param_rule": rule,
            "param_n": n, "param_chunk_ms": chunk,
            "param_initial_wait_ms": math.nan if wait is None else wait,
            "BLEU": bleu, "AL": al, "AL_K22": extra.pop("al_k22", al), "AP": 0.7,
            "DAL": al + 1000, "length_diff": 0.0, "n": 10, **extra}


def offline(bleu=31.0, al=5000.0):
    return {"model": "m", "split": "tst-COMMON", "policy": "offline", "setting": "beam=5",
            "param_beam": 5, "BLEU": bleu, "AL": al, "AL_K22": al, "AP": 1.0, "DAL": al,
            "length_diff": 0.0, "n": 10}


@pytest.mark.parametrize("label, parsed, name", [
    ("LA-2", ("la", 2), "LA-2"), ("hold-12", ("hold", 12), "Hold-12"),
    ("SP1", ("sp", 1), "SP-1"), (" Hold-6 ", ("hold", 6), "Hold-6"),
])
def test_rule_names(label, parsed, name):
    assert k22.parse_rule(label) == parsed
    assert k22.rule_label(*parsed) == name


@pytest.mark.parametrize("label", ["wait-3", "LA", "LA-x", ""])
def test_bad_rule_names_are_refused(label):
    with pytest.raises(ValueError, match="rule"):
        k22.parse_rule(label)


def test_spec_grid_initial_wait_and_offline():
    spec = k22.spec(["m"], "en-es", ["tst-COMMON"], "out", rules=["LA-2", "Hold-6"],
                    chunks_ms=[250, 2000], beam=3, max_utterances=7)
    settings = expand(spec["policies"], "spec")
    got = [(s.policy, dict(s.params)) for s in settings]
    assert got == [
        ("onlinization", {"beam": 3, "rule": "la", "n": 2, "chunk_ms": 250}),
        ("onlinization", {"beam": 3, "rule": "la", "n": 2, "chunk_ms": 2000}),
        ("onlinization", {"beam": 3, "rule": "hold", "n": 6, "chunk_ms": 250}),
        ("onlinization", {"beam": 3, "rule": "hold", "n": 6, "chunk_ms": 2000}),
        # the initial wait only where the first chunk would otherwise be shorter
        ("onlinization", {"beam": 3, "rule": "la", "n": 2, "chunk_ms": 250,
                          "initial_wait_ms": 2000}),
        ("offline", {"beam": 3}),
    ]
    assert spec["max_utterances"] == 7 and "corpus" not in spec


def test_spec_without_initial_wait_or_offline():
    spec = k22.spec(["m"], "en-es", ["tst-COMMON"], "out", rules=["SP-1"], chunks_ms=[500],
                    initial_wait_ms=None, offline=False, corpus="/data/mustc")
    assert [len(expand([p], "spec")) for p in spec["policies"]] == [1]
    assert spec["corpus"] == "/data/mustc"


def test_settings_names_rules_and_fills_the_initial_wait():
    summary = pd.DataFrame([row("hold", 6, 500, 900, 20), row("la", 2, 250, 700, 18, 2000),
                            offline()])
    got = k22.settings(summary)
    assert got.rule.tolist() == ["Hold-6", "LA-2"]
    assert got.chunk_ms.tolist() == [500.0, 250.0]
    assert got.initial_wait_ms.tolist() == [0.0, 2000.0]


def test_curves_keep_the_order_of_the_rules_and_drop_the_initial_wait():
    summary = pd.DataFrame([row("la", 2, 1000, 1500, 25), row("sp", 2, 500, 800, 20),
                            row("la", 2, 500, 900, 22), row("la", 2, 500, 1300, 23, 2000),
                            row("hold", 6, 500, 950, 21)])
    got = k22.curves(summary, ["SP-2", "LA-2"])
    assert list(zip(got.rule, got.chunk_ms, strict=True)) == [("SP-2", 500), ("LA-2", 500),
                                                               ("LA-2", 1000)]


def test_table1_pairs_with_and_without_the_initial_wait():
    summary = pd.DataFrame([
        row("la", 2, 500, 800, 25.4), row("la", 2, 250, -36, 16.3),
        row("la", 2, 250, 358, 16.6, 2000), row("la", 2, 1000, 1660, 30.3),  # no waited twin
        row("hold", 6, 250, 900, 20, 2000),  # another rule
        offline()])
    got = k22.table1(summary)
    assert list(got.columns) == ["Initial wait (ms)", "Chunk size (ms)", "BLEU", "AL", "AP",
                                 "DAL"]
    assert got[["Initial wait (ms)", "Chunk size (ms)", "BLEU", "AL"]].values.tolist() == [
        [0.0, 250.0, 16.3, -36.0], [2000.0, 250.0, 16.6, 358.0]]


def test_negative_al_sorts_by_al_and_names_the_columns():
    summary = pd.DataFrame([row("la", 2, 500, 700, 25, al_k22=800),
                            row("la", 2, 250, -36, 16, al_k22=300), offline()])
    got = k22.negative_al(summary)
    assert got.AL.tolist() == [-36, 700]
    assert got["AL max-length (eq. 6)"].tolist() == [300, 800]
    assert "|Y| − |Y*| (words)" in got


def record(index, delays, reference, source_ms=1000.0):
    words = " ".join(f"w{i}" for i in range(len(delays)))
    return Record(index=index, prediction=words, delays=delays, elapsed=list(delays),
                  prediction_length=len(delays), reference=reference,
                  source_length=source_ms, source=["x.wav", f"s{index}"],
                  segment_id=f"s{index}")


def hand_records():
    return [
        # 4 words for a 2-word reference, 1000 ms: ideal delays 0, 500, 1000, 1500 →
        # AL = (400 + (400−500) + (400−1000) + (1000−1500)) / 4 = −200;
        # max-length ideal 0, 250, 500, 750 → (400 + 150 − 100 + 250) / 4 = 175
        record(0, [400.0, 400.0, 400.0, 1000.0], "a b"),
        # one word at the end: τ = 1, AL = 1000 = max-length AL
        record(1, [1000.0], "a b c"),
        record(2, [], "a b"),  # no output: no latency, left out
    ]


def test_utterance_al_by_hand():
    got = k22.utterance_al(hand_records())
    assert got["index"].tolist() == [0, 1]
    assert got.AL.tolist() == pytest.approx([-200.0, 1000.0])
    assert got.AL_K22.tolist() == pytest.approx([175.0, 1000.0])
    assert got.hyp_words.tolist() == [4, 1]
    assert got.ref_words.tolist() == [2, 3]


def test_negative_utterances_counts_and_minima():
    got = k22.negative_utterances({"LA-2, 250 ms": k22.utterance_al(hand_records())})
    first = got.iloc[0]
    assert first.setting == "LA-2, 250 ms"
    assert (first.utterances, first["AL < 0"], first["of which |Y| > |Y*|"]) == (2, 1, 1)
    assert first["min AL"] == pytest.approx(-200.0)
    assert first["min AL max-length"] == pytest.approx(175.0)


def test_read_utterances_from_the_sweep_records(tmp_path):
    write_records(hand_records(), tmp_path / "records" / "a.jsonl")
    summary = pd.DataFrame([row("la", 2, 250, 400, 16, 2000, records="records/a.jsonl"),
                            offline()])
    got = k22.read_utterances(summary, tmp_path)
    assert list(got) == ["LA-2, 250 ms, wait 2000 ms"]
    assert got["LA-2, 250 ms, wait 2000 ms"].AL.tolist() == pytest.approx([-200.0, 1000.0])


def test_regimes_best_bleu_within_each_limit():
    summary = pd.DataFrame([
        row("la", 2, 250, 800, 20.0), row("la", 2, 250, 950, 22.0, 2000),
        row("la", 2, 500, 1500, 25.0), row("la", 2, 1000, 2500, 27.0),
        row("la", 2, 2000, 4500, 29.0),  # beyond every limit
        row("hold", 6, 250, 900, 30.0),  # another rule
        offline(31.0, 5000.0)])
    got = k22.regimes(summary)
    assert got["Latency regime"].tolist() == ["low", "medium", "high", "offline"]
    assert got.BLEU.tolist() == [22.0, 25.0, 27.0, 31.0]
    assert got.AL.tolist() == [950.0, 1500.0, 2500.0, 5000.0]
    assert got["Initial wait (ms)"].tolist()[:3] == [2000.0, 0.0, 0.0]
    assert got["Chunk size (ms)"].tolist()[:3] == [250.0, 500.0, 1000.0]
    any_rule = k22.regimes(summary, {"low": 1000}, rule=None)
    assert (any_rule.Rule.iloc[0], any_rule.BLEU.iloc[0]) == ("Hold-6", 30.0)
    none = k22.regimes(summary, {"tiny": 100})
    assert math.isnan(none.BLEU.iloc[0]) and none["AL limit (ms)"].iloc[0] == 100


@pytest.mark.parametrize("a, b, gap", [
    ([(0, 10), (100, 20)], [(0, 8), (100, 18)], 2.0),
    # overlap 50..100: a goes 15 → 20 (mean 17.5), b stays 10
    ([(0, 10), (100, 20)], [(50, 10), (150, 10)], 7.5),
    ([(0, 10), (100, 20)], [(200, 10), (300, 10)], math.nan),
])
def test_curve_gap(a, b, gap):
    frame = lambda pts: pd.DataFrame(pts, columns=["AL", "BLEU"])  # noqa: E731
    got = curve_gap(frame(a), frame(b))
    assert got == pytest.approx(gap, nan_ok=True)


def paper_like():
    """LA-2 above the others, SP-1 lowest, AL grows with the chunk, the initial wait adds
    latency at 250 ms, one setting with a negative AL (max-length AL positive)."""
    rows = []
    for rule, n, shift, penalty in (("la", 2, 0, 0.0), ("hold", 6, 200, 1.0),
                                    ("sp", 2, 300, 1.5), ("sp", 1, -100, 8.0)):
        for chunk, al, bleu in ((250, 100, 20.0), (500, 600, 24.0), (1000, 1400, 27.0),
                                (2000, 2600, 29.0)):
            rows.append(row(rule, n, chunk, al + shift, bleu - penalty,
                            al_k22=al + shift + 100))
    rows[-4]["AL"] = -36.0  # SP-1 at 250 ms: AL -36, max-length AL 100
    rows.append(row("la", 2, 250, 500, 20.3, 2000, al_k22=600))
    # offline: half a BLEU above LA-2 at 2000 ms (29.0), AL 8000 ms (3.08 × its 2600)
    return pd.DataFrame([*rows, offline(29.5, 8000.0)])


def by_id(found):
    return {c.id: c for c in found}


def test_claims_hold_on_a_paper_like_summary():
    found = by_id(k22.claims(paper_like()))
    assert set(found) == {"K22-chunk-AL", "K22-chunk-dominates", "K22-LA2-best",
                          "K22-SP1-worst", "K22-initial-wait", "K22-AL-max-length",
                          "K22-offline-par", "K22-3x"}
    assert all(c.holds for c in found.values()), [c for c in found.values() if not c.holds]
    assert found["K22-chunk-AL"].detail == "4 rules, all monotone"
    # Figure 1 rules: AL ranges 2500 (each rule over chunks) vs 300 (rules at one chunk)
    assert "2500 ms" in found["K22-chunk-dominates"].detail
    assert "300 ms" in found["K22-chunk-dominates"].detail
    assert "AL without / with: 100, 500" == found["K22-initial-wait"].detail
    assert found["K22-AL-max-length"].detail.startswith("1 settings with AL < 0")
    assert not found["K22-chunk-AL"].needs_full_run
    assert found["K22-LA2-best"].needs_full_run and found["K22-SP1-worst"].needs_full_run


def test_claims_fail_where_the_numbers_say_so():
    summary = paper_like()
    la2 = (summary.param_rule == "la") & summary.param_initial_wait_ms.isna()
    summary.loc[la2 & (summary.param_chunk_ms == 2000), "AL"] = 1000.0  # AL falls at 2000 ms
    summary.loc[la2, "BLEU"] -= 10.0  # LA-2 now below hold-6, SP-2 and SP-1
    summary.loc[summary.param_initial_wait_ms == 2000, "AL"] = 50.0  # the wait lowers AL
    summary.loc[summary.AL < 0, "AL_K22"] = -5.0
    found = by_id(k22.claims(summary))
    assert not found["K22-chunk-AL"].holds
    assert found["K22-chunk-AL"].detail == "LA-2: AL 100, 600, 1400, 1000"
    assert not found["K22-LA2-best"].holds
    assert not found["K22-SP1-worst"].holds  # LA-2's mean BLEU is now the lowest
    assert not found["K22-initial-wait"].holds
    assert not found["K22-AL-max-length"].holds


def test_negative_al_claim_uses_the_utterances():
    utts = k22.negative_utterances({"a": k22.utterance_al(hand_records())})
    claim = by_id(k22.claims(paper_like(), utts))["K22-AL-negative-long"]
    # one negative-AL decode (longer than its reference) cannot show a tendency
    assert claim.verdict == "undecided" and claim.detail.startswith("1 utterance decodes")
    # the share of longer hypotheses among 10 negative-AL decodes, minus ½: all of them
    # (+0.5 on every resample), none of them (−0.5)
    for longer, verdict in ((10, "holds"), (0, "contradicted")):
        utts.loc[0, ["AL < 0", "of which |Y| > |Y*|"]] = [10, longer]
        claim = by_id(k22.claims(paper_like(), utts))["K22-AL-negative-long"]
        assert claim.verdict == verdict
        assert (claim.evidence.effect, claim.evidence.low, claim.evidence.high) == \
            pytest.approx((longer / 10 - 0.5,) * 3)


def test_claims_of_rules_that_did_not_run_are_left_out():
    only_la2 = paper_like()
    only_la2 = only_la2[(only_la2.param_rule == "la") | (only_la2.policy == "offline")]
    found = by_id(k22.claims(only_la2))
    assert set(found) == {"K22-chunk-AL", "K22-initial-wait", "K22-AL-max-length",
                          "K22-offline-par", "K22-3x"}
    assert all(c.holds for c in found.values())
    without_offline = only_la2[only_la2.policy != "offline"]
    assert set(by_id(k22.claims(without_offline))) == {
        "K22-chunk-AL", "K22-initial-wait", "K22-AL-max-length"}


def test_claim_kinds():
    found = by_id(k22.claims(paper_like()))
    assert {cid: (c.kind, c.evidence.margin if c.evidence else None)
            for cid, c in found.items()} == {
        "K22-chunk-AL": ("superiority", 0.0), "K22-chunk-dominates": ("superiority", 0.0),
        "K22-LA2-best": ("superiority", 0.0), "K22-SP1-worst": ("superiority", 0.0),
        "K22-initial-wait": ("superiority", 0.0), "K22-AL-max-length": ("property", None),
        "K22-offline-par": ("non-inferiority", BLEU_MARGIN),
        "K22-3x": ("non-inferiority", RATIO_MARGIN)}


def test_offline_par_and_3x_by_hand():
    # the online system is fixed in advance: LA-2 without initial wait at the largest chunk
    # (2000 ms: BLEU 29.0, AL 2600); offline 29.5 BLEU at AL 8000 ms
    found = by_id(k22.claims(paper_like()))
    par, speed = found["K22-offline-par"], found["K22-3x"]
    assert par.evidence.effect == pytest.approx(-0.5) and par.holds
    assert speed.evidence.effect == pytest.approx(8000 / 2600 - 3) and speed.holds
    assert speed.evidence.claimed == "greater"
    assert "LA-2, 2000 ms" in par.text and "margin 1 BLEU" in par.text
    assert "margin 1" in speed.text
    assert par.detail == "BLEU LA-2, 2000 ms 29.0, offline 29.5"
    assert speed.detail == "AL LA-2, 2000 ms 2600 ms, offline 8000 ms"
    assert par.needs_full_run and speed.needs_full_run
    # offline 1.5 BLEU above, AL only 1.9 × the online's: both contradicted
    worse = paper_like()
    worse.loc[worse.policy == "offline", ["BLEU", "AL"]] = [30.5, 5000.0]
    found = by_id(k22.claims(worse))
    assert found["K22-offline-par"].evidence.effect == pytest.approx(-1.5)
    assert found["K22-offline-par"].verdict == "contradicted"
    assert found["K22-3x"].evidence.effect == pytest.approx(5000 / 2600 - 3)
    assert found["K22-3x"].verdict == "contradicted"
    # 2.3 × is within the ratio's margin of 3: holds; without the offline AL, no ratio
    worse.loc[worse.policy == "offline", "AL"] = 6000.0
    assert by_id(k22.claims(worse))["K22-3x"].holds
    worse.loc[worse.policy == "offline", "AL"] = math.nan
    assert "K22-3x" not in by_id(k22.claims(worse))


def lines(curves: dict[tuple[str, int], list[tuple[float, float]]], model="m"):
    """Rules' curves {(rule, n): [(AL, BLEU), …]}, one chunk size per point."""
    return [row(rule, n, 250 * 2 ** i, al, bleu, model=model)
            for (rule, n), points in curves.items() for i, (al, bleu) in enumerate(points)]


BASE = [(500, 20.0), (1500, 24.0), (2500, 28.0)]
"""BLEU = 18 + AL / 250 at chunk sizes 250, 500, 1000 ms."""


def shifted(by: float, start: float = 500.0):
    """A curve of BASE's slope, ``by`` BLEU above it, from AL ``start`` on."""
    return [(al, 18 + al / 250 + by) for al in (start, start + 1000, start + 2000)]


@pytest.mark.parametrize("d, effect, verdict", [
    (1.0, 0.5, "holds"), (-1.6, -0.8, "holds"), (5.0, 2.5, "contradicted"),
])
def test_hold_n_equivalence_by_hand(d, effect, verdict):
    # Hold-6 across chunks (the chunk curve): BLEU = 20 + (AL − 500) / 250. Raising n at
    # the smallest chunk: Hold-6 (500, 20) to Hold-12 (2000, 26 + d), d above the chunk
    # curve there: over AL 500–2000 the n curve is (AL − 500)·d/1500 above it, a mean gap of
    # d/2. Hold-12's larger chunks lie beyond (no AL shared with Hold-6's curve); Hold-3 far
    # below is the paper's exception (n ≤ 3) and left out.
    hold12 = [(2000, 26.0 + d), (2600, 27.0 + d), (3000, 30.0 + d)]
    summary = pd.DataFrame(lines({("hold", 6): BASE, ("hold", 12): hold12,
                                  ("hold", 3): shifted(-5)}))
    claim = by_id(k22.claims(summary))["K22-hold-n"]
    assert claim.evidence.effect == pytest.approx(effect, abs=1e-9)
    assert claim.verdict == verdict
    assert (claim.kind, claim.evidence.margin) == ("equivalence", BLEU_MARGIN)
    assert "margin 1 BLEU" in claim.text and claim.needs_full_run
    assert claim.detail == ("n-curve − chunk-curve, mean BLEU over the shared AL range: "
                            f"{effect:+.2f}")


@pytest.mark.parametrize("la3, la4, effect, verdict", [
    (0.4, -0.8, -0.8, "holds"),  # the widest gap, with its sign
    (0.4, -1.5, -1.5, "contradicted"), (1.5, 0.2, 1.5, "contradicted"),
])
def test_la_n_line_equivalence_by_hand(la3, la4, effect, verdict):
    summary = pd.DataFrame(lines({("la", 2): BASE, ("la", 3): shifted(la3, 700),
                                  ("la", 4): shifted(la4, 900)}))
    claim = by_id(k22.claims(summary))["K22-LA-n-line"]
    assert claim.evidence.effect == pytest.approx(effect) and claim.verdict == verdict
    assert (claim.kind, claim.evidence.margin) == ("equivalence", BLEU_MARGIN)
    assert "margin 1 BLEU" in claim.text and claim.needs_full_run
    assert claim.detail == ("rule − LA-2, mean BLEU over the shared AL range: "
                            f"LA-3 {la3:+.2f}, LA-4 {la4:+.2f}")


def test_hold_n_and_la_n_claims_need_their_rules():
    found = by_id(k22.claims(pd.DataFrame(lines({("hold", 6): BASE, ("la", 2): BASE}))))
    assert not {"K22-hold-n", "K22-LA-n-line"} & set(found)


def model_rows(model, la2, offline_bleu):
    off = {**offline(offline_bleu), "model": model}
    return pd.DataFrame([*lines({("la", 2): la2}, model=model), off])


@pytest.mark.parametrize("weaker_online, weaker_offline, effect, verdict", [
    # offline gap 1.5, online gap 2 (weaker LA-2 2 BLEU lower): the smaller, 1.5
    (-2.0, 28.5, 1.5, "holds"),
    # the weaker model better online by 1: −1
    (1.0, 28.5, -1.0, "contradicted"),
])
def test_better_offline_by_hand(weaker_online, weaker_offline, effect, verdict):
    grid = model_rows("m", BASE, 30.0)
    weaker = model_rows("w", shifted(weaker_online), weaker_offline)
    (claim,) = k22.better_offline_claims(grid, weaker, "m", "models/w", "LA-2")
    assert claim.id == "K22-better-offline"
    assert claim.evidence.effect == pytest.approx(effect) and claim.verdict == verdict
    assert (claim.kind, claim.evidence.claimed) == ("superiority", "greater")
    assert claim.needs_full_run
    assert claim.detail.startswith(f"offline BLEU m 30.0, w {weaker_offline:.1f}; LA-2 m − w")


def test_better_offline_without_a_weaker_model():
    grid = model_rows("m", BASE, 30.0)
    assert k22.better_offline_claims(grid, None, "m", None) == []
    assert k22.better_offline_claims(grid, grid.iloc[:0], "m", "w") == []


def test_new_claims_read_only_the_rows_their_statistic_needs():
    summary = pd.DataFrame([*lines({("la", 2): BASE, ("la", 3): shifted(0.4, 700),
                                    ("hold", 6): BASE}), row("la", 2, 250, 400, 16, 2000),
                            offline()])
    pair = k22._rows(summary, ["LA-2"], offline=True, chunk_ms=1000.0)
    assert pair.policy.tolist() == ["onlinization", "offline"]
    assert pair.param_chunk_ms.iloc[0] == 1000
    la = k22._rows(summary, ["LA-2", "LA-3"])
    assert len(la) == 6 and set(la.param_rule) == {"la"}  # the initial wait left out
