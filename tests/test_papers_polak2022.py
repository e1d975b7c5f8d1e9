"""simul.papers.polak2022: spec, table layouts and claims on hand-made summaries."""

import math

import pandas as pd
import pytest

from simul.analysis.claims import curve_gap
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
    """LA-2 above the others, SP-1 lowest, AL and BLEU grow with the chunk, the initial wait
    adds latency and 0.3 BLEU at 250 ms, one setting with a negative AL (max-length AL
    positive), offline 1 BLEU above LA-2 at 1 s and 3.2 × its AL."""
    rows = []
    for rule, n, shift, penalty in (("la", 2, 0, 0.0), ("hold", 6, 200, 1.0),
                                    ("sp", 2, 300, 1.5), ("sp", 1, -100, 8.0)):
        for chunk, al, bleu in ((250, 100, 20.0), (500, 600, 24.0), (1000, 1400, 27.0),
                                (2000, 2600, 29.0)):
            rows.append(row(rule, n, chunk, al + shift, bleu - penalty,
                            al_k22=al + shift + 100))
    rows[-4]["AL"] = -36.0  # SP-1 at 250 ms: AL -36, max-length AL 100
    rows.append(row("la", 2, 250, 500, 20.3, 2000, al_k22=600))
    # offline: 1 BLEU above LA-2 at 1000 ms (27.0), AL 4500 ms (3.21 × its 1400)
    return pd.DataFrame([*rows, offline(28.0, 4500.0)])


def by_id(found):
    return {c.id: c for c in found}


def test_claims_hold_on_a_paper_like_summary():
    found = by_id(k22.claims(paper_like()))
    assert set(found) == {"K22-chunk-AL", "K22-chunk-BLEU", "K22-chunk-dominates",
                          "K22-LA2-best", "K22-SP1-worst", "K22-initial-wait-BLEU",
                          "K22-initial-wait-AL", "K22-AL-max-length", "K22-offline-par",
                          "K22-3x"}
    assert all(c.holds for c in found.values()), [c for c in found.values() if not c.holds]
    assert found["K22-chunk-AL"].detail == "4 rules, all monotone"
    # every rule gains 4, 3, 2 BLEU from one chunk size to the next: a mean step of 3
    assert found["K22-chunk-BLEU"].evidence.effect == pytest.approx(3.0)
    # Figure 1 rules: AL ranges 2500 (each rule over chunks) vs 300 (rules at one chunk)
    assert "2500 ms" in found["K22-chunk-dominates"].detail
    assert "300 ms" in found["K22-chunk-dominates"].detail
    assert found["K22-initial-wait-AL"].detail == "250 ms chunks, AL without / with: 100, 500"
    assert found["K22-initial-wait-BLEU"].evidence.effect == pytest.approx(0.3)
    assert found["K22-AL-max-length"].detail.startswith("1 settings with AL < 0")
    assert not found["K22-chunk-AL"].needs_full_run
    assert found["K22-LA2-best"].needs_full_run and found["K22-SP1-worst"].needs_full_run
    assert {c.finding.half for c in found.values() if c.id.startswith("K22-initial")} == \
        {"quality", "latency"}


def test_claims_fail_where_the_numbers_say_so():
    summary = paper_like()
    la2 = (summary.param_rule == "la") & summary.param_initial_wait_ms.isna()
    summary.loc[la2 & (summary.param_chunk_ms == 2000), "AL"] = 1000.0  # AL falls at 2000 ms
    summary.loc[la2, "BLEU"] -= 10.0  # LA-2 now below hold-6, SP-2 and SP-1
    summary.loc[summary.param_initial_wait_ms == 2000, ["AL", "BLEU"]] = [50.0, 12.0]
    summary.loc[summary.AL < 0, "AL_K22"] = -5.0
    found = by_id(k22.claims(summary))
    assert found["K22-chunk-AL"].verdict == "contradicted"
    assert found["K22-chunk-AL"].detail == "LA-2: AL 100, 600, 1400, 1000"
    assert found["K22-LA2-best"].verdict == "contradicted"
    assert found["K22-SP1-worst"].verdict == "contradicted"  # LA-2 now the lowest
    assert found["K22-initial-wait-AL"].verdict == "contradicted"
    # the wait now gains 2 BLEU at 250 ms (LA-2 without it 10.0, with it 12.0): more than
    # a slight change
    assert found["K22-initial-wait-BLEU"].verdict == "contradicted"
    assert found["K22-AL-max-length"].verdict == "contradicted"


def test_offline_par_and_3x_read_the_papers_1_s_point():
    # LA-2 at 1000 ms (Table 2's medium regime): BLEU 27.0, AL 1400; offline 28.0 at 4500
    found = by_id(k22.claims(paper_like()))
    par, speed = found["K22-offline-par"], found["K22-3x"]
    assert par.evidence.effect == pytest.approx(-1.0) and par.holds
    assert speed.evidence.effect == pytest.approx(4500 / 1400 - 3) and speed.holds
    assert (par.kind, par.evidence.margin) == ("non-inferiority", k22.ALMOST_ON_PAR)
    assert (speed.kind, speed.evidence.margin) == ("non-inferiority", k22.SPEEDUP_MARGIN)
    assert (par.finding.half, speed.finding.half) == ("quality", "latency")
    assert par.finding.sentence == speed.finding.sentence
    assert par.detail == "BLEU LA-2, 1000 ms 27.0, offline 28.0"
    assert speed.detail == "AL LA-2, 1000 ms 1400 ms, offline 4500 ms"
    # 1.6 BLEU below offline, beyond the paper's 1.54; 2.4 × is below 2.5: both contradicted
    worse = paper_like()
    worse.loc[worse.policy == "offline", ["BLEU", "AL"]] = [28.6, 3360.0]
    found = by_id(k22.claims(worse))
    assert found["K22-offline-par"].evidence.effect == pytest.approx(-1.6)
    assert found["K22-offline-par"].verdict == "contradicted"
    assert found["K22-3x"].evidence.effect == pytest.approx(3360 / 1400 - 3)
    assert found["K22-3x"].verdict == "contradicted"
    # a grid without the 1 s chunk cannot measure them: not measured, with what they need
    no_1s = paper_like()
    no_1s = no_1s[no_1s.param_chunk_ms != 1000]
    found = by_id(k22.claims(no_1s))
    assert found["K22-3x"].verdict == "not measured"
    assert "LA-2 at 1000 ms" in found["K22-offline-par"].needs


def utterances(negative: list[int], longer: list[int], settings=("a", "b"), segments=10):
    """Per setting, each segment's AL (−100 on ``negative``, +500 elsewhere) and words
    (4 against a 2-word reference on ``longer``, 2 elsewhere)."""
    return {s: pd.DataFrame({"index": range(segments),
                             "AL": [-100.0 if i in negative else 500.0 for i in range(segments)],
                             "hyp_words": [4 if i in longer else 2 for i in range(segments)],
                             "ref_words": [2] * segments}) for s in settings}


@pytest.mark.parametrize("negative, longer, effect, verdict", [
    ([0, 1, 2, 3, 4], [0, 1, 2, 3, 4], 0.5, "holds"),  # every negative AL longer
    ([0, 1, 2, 3, 4], [], -0.5, "contradicted"),  # none
    ([0, 1, 2, 3], [0, 1], 0.0, "undecided"),  # half
])
def test_negative_al_claim_resamples_segments(negative, longer, effect, verdict):
    claim = by_id(k22.claims(paper_like(), utterances(negative, longer)))[
        "K22-AL-negative-long"]
    assert claim.evidence.effect == pytest.approx(effect) and claim.verdict == verdict
    assert claim.evidence.n == 10  # segments, not the 20 decodes of two settings
    assert claim.detail.startswith(f"{2 * len(negative)} decodes with AL < 0 (2 settings × "
                                   "10 segments)")


def test_negative_al_flags_from_the_records():
    flags = k22.negative_flags({"a": k22.utterance_al(hand_records())})
    # segment 0: AL −200 with 4 words for 2; segment 1: AL 1000
    assert flags.tolist() == [[[1.0, 0.0]], [[1.0, 0.0]]]
    # one segment with a negative AL cannot show a tendency: undecided
    claim = by_id(k22.claims(paper_like(), {"a": k22.utterance_al(hand_records())}))[
        "K22-AL-negative-long"]
    assert claim.verdict == "undecided"


def test_claims_of_rules_that_did_not_run_are_left_out():
    only_la2 = paper_like()
    only_la2 = only_la2[(only_la2.param_rule == "la") | (only_la2.policy == "offline")]
    found = by_id(k22.claims(only_la2))
    assert set(found) == {"K22-chunk-AL", "K22-chunk-BLEU", "K22-initial-wait-BLEU",
                          "K22-initial-wait-AL", "K22-AL-max-length", "K22-offline-par",
                          "K22-3x"}
    without_offline = only_la2[only_la2.policy != "offline"]
    assert "K22-3x" not in by_id(k22.claims(without_offline))


def test_every_claim_is_declared():
    found = by_id(k22.claims(paper_like(), utterances([0, 1], [0, 1])))
    for cid, claim in found.items():
        assert claim.finding is k22.FINDINGS[cid] and not claim.own


def lines(curves: dict[tuple[str, int], list[tuple[float, float]]], model="m", **extra):
    """Rules' curves {(rule, n): [(AL, BLEU), …]}, one chunk size per point."""
    return [row(rule, n, 250 * 2 ** i, al, bleu, model=model, **extra)
            for (rule, n), points in curves.items() for i, (al, bleu) in enumerate(points)]


BASE = [(500, 20.0), (1500, 24.0), (2500, 28.0)]
"""BLEU = 18 + AL / 250 at chunk sizes 250, 500, 1000 ms."""


def shifted(by: float, start: float = 500.0, points: int = 3):
    """A curve of BASE's slope, ``by`` BLEU above it, from AL ``start`` on."""
    return [(al, 18 + al / 250 + by) for al in range(int(start), int(start) + 1000 * points,
                                                     1000)]


@pytest.mark.parametrize("d, effect, verdict", [
    (1.0, 0.5, "holds"), (-1.6, -0.8, "holds"), (5.0, 2.5, "contradicted"),
])
def test_hold_n_equivalence_by_hand(d, effect, verdict):
    # Hold-6 across chunks 250–2000 ms (the chunk curve): BLEU = 18 + AL / 250, AL 500 …
    # 3500. At each of the chunks 250, 500, 1000 ms Hold-12 lies 1000 ms later and d above
    # that line: the n-segment from Hold-6 to Hold-12 is (AL − AL₆)·d/1000 above the chunk
    # curve, a mean gap of d/2 at each chunk size (no Hold-12 at 2000 ms: left out).
    hold6 = shifted(0, 500, 4)
    hold12 = [(al + 1000, 18 + (al + 1000) / 250 + d) for al, _ in hold6[:3]]
    summary = pd.DataFrame(lines({("hold", 6): hold6, ("hold", 12): hold12,
                                  ("hold", 3): shifted(-5)}))
    claim = by_id(k22.claims(summary))["K22-hold-n"]
    assert claim.evidence.effect == pytest.approx(effect, abs=1e-9)
    assert claim.verdict == verdict
    assert (claim.kind, claim.evidence.margin) == ("equivalence", k22.LINE_MARGIN)
    assert "margin 1" in claim.text and claim.needs_full_run


@pytest.mark.parametrize("hold3, verdict", [(-5.0, "holds"), (3.0, "contradicted")])
def test_hold_3_underperforms_by_hand(hold3, verdict):
    # Hold-3 on BASE's line ± a shift: the front of Hold-6 and Hold-12 (on the line) is
    # −shift above it over their shared AL
    summary = pd.DataFrame(lines({("hold", 6): BASE, ("hold", 12): shifted(0, 1000),
                                  ("hold", 3): shifted(hold3)}))
    claim = by_id(k22.claims(summary))["K22-hold-3"]
    assert claim.evidence.effect == pytest.approx(-hold3) and claim.verdict == verdict


@pytest.mark.parametrize("la3, la4, effect, verdict", [
    (0.4, -0.8, -0.8, "holds"),  # the widest gap, with its sign
    (0.4, -1.5, -1.5, "contradicted"), (1.5, 0.2, 1.5, "contradicted"),
])
def test_la_n_line_equivalence_by_hand(la3, la4, effect, verdict):
    summary = pd.DataFrame(lines({("la", 2): BASE, ("la", 3): shifted(la3, 700),
                                  ("la", 4): shifted(la4, 900)}))
    claim = by_id(k22.claims(summary))["K22-LA-n-line"]
    assert claim.evidence.effect == pytest.approx(effect) and claim.verdict == verdict
    assert (claim.kind, claim.evidence.margin) == ("equivalence", k22.LINE_MARGIN)
    assert claim.detail == ("rule − LA-2, mean BLEU over the shared AL range: "
                            f"LA-3 {la3:+.2f}, LA-4 {la4:+.2f}")


@pytest.mark.parametrize("bleu_step, al_step, cost_step, verdicts", [
    (0.5, 200.0, 50.0, ("holds", "holds", "holds")),
    (-0.5, -200.0, -50.0, ("contradicted", "contradicted", "contradicted")),
])
def test_la_n_quality_latency_and_cost_by_hand(bleu_step, al_step, cost_step, verdicts):
    # LA-(2 + j) at every chunk: BLEU + j·bleu_step, AL + j·al_step, computation
    # (AL_CA − AL) 100 + j·cost_step ms: mean steps bleu_step and al_step, cost of LA-3/4
    # over LA-2 the mean of cost_step and 2·cost_step
    rows = []
    for j in range(3):
        for i, (al, bleu) in enumerate(BASE):
            a = al + j * al_step
            rows.append(row("la", 2 + j, 250 * 2 ** i, a, bleu + j * bleu_step,
                            AL_CA=a + 100 + j * cost_step))
    found = by_id(k22.claims(pd.DataFrame(rows)))
    got = [found[c] for c in ("K22-LA-n-quality", "K22-LA-n-latency", "K22-LA-n-cost")]
    assert [c.evidence.effect for c in got] == pytest.approx(
        [bleu_step, al_step, 1.5 * cost_step])
    assert tuple(c.verdict for c in got) == verdicts
    assert [c.finding.half for c in got] == ["quality", "latency", ""]
    without_ca = pd.DataFrame(rows).drop(columns="AL_CA")
    assert by_id(k22.claims(without_ca))["K22-LA-n-cost"].verdict == "not measured"


def test_hold_n_and_la_n_claims_need_their_rules():
    found = by_id(k22.claims(pd.DataFrame(lines({("hold", 6): BASE, ("la", 2): BASE}))))
    assert not {"K22-hold-n", "K22-hold-3", "K22-LA-n-line", "K22-LA-n-quality"} & set(found)


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


def test_better_offline_without_a_weaker_model_is_not_measured():
    grid = model_rows("m", BASE, 30.0)
    for weaker, name in ((None, None), (grid.iloc[:0], "w")):
        (claim,) = k22.better_offline_claims(grid, weaker, "m", name)
        assert claim.verdict == "not measured" and "weaker" in claim.needs


def test_claims_read_only_the_rows_their_statistic_needs():
    summary = pd.DataFrame([*lines({("la", 2): BASE, ("la", 3): shifted(0.4, 700),
                                    ("hold", 6): BASE}), row("la", 2, 250, 400, 16, 2000),
                            offline()])
    pair = k22._rows(summary, ["LA-2"], offline=True, chunk_ms=1000.0)
    assert pair.policy.tolist() == ["onlinization", "offline"]
    assert pair.param_chunk_ms.iloc[0] == 1000
    la = k22._rows(summary, ["LA-2", "LA-3"])
    assert len(la) == 6 and set(la.param_rule) == {"la"}  # the initial wait left out
