"""No claim is unfalsifiable by construction: for every kind (superiority, non-inferiority,
equivalence, property) and every statistic the papers' findings use (a difference, the
weakest and the mean step along a grid, a curve gap at matched latency, a ratio, a share
over resampled segments), made-up records for which the claim must come out contradicted,
and others for which it holds, and others it leaves undecided. The records are real (the
bootstrap resamples their segments); each segment's AL is its one word's delay."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from simul.analysis.claims import (
    Finding,
    curve_gap,
    difference,
    mean_step,
    resample_segments,
    weakest_step,
)
from simul.records import Record, write

N = 30
"""Segments per setting."""


@pytest.fixture(autouse=True)
def fewer_resamples(monkeypatch):
    from simul.analysis.claims import resampling

    monkeypatch.setattr(resampling, "RESAMPLES", 300)  # a quick run's order: 2 cores
    monkeypatch.setattr(resampling, "WORKERS", 1)


def settings(tmp_path, als: dict[float, np.ndarray]) -> pd.DataFrame:
    """Sweep rows, one per setting x (``param_x``), whose records give segment i the AL
    ``als[x][i]`` ms (one word, written at that delay, of a 10 s source)."""
    rows = []
    for x, values in als.items():
        path = tmp_path / f"x{x:g}.jsonl"
        write([Record(index=i, prediction="w", delays=[float(v)], elapsed=[float(v)],
                      prediction_length=1, reference="w", source_length=10000.0,
                      source=["a.wav", f"s{i}"], segment_id=f"s{i}")
               for i, v in enumerate(values)], path)
        rows.append({"model": "m", "split": "tst-COMMON", "policy": "p", "setting": f"x{x:g}",
                     "param_x": x, "param_g": 0, "records": str(path)})
    return pd.DataFrame(rows)


def noise(spread: float, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-spread, spread, N)


def finding(kind: str, claimed: str = "greater", margin: float = 0.0) -> Finding:
    return Finding("X-1", "simul", "a test", "made-up rows", "the statistic", "two settings",
                   kind, claimed=claimed, margin=margin,
                   margin_reason="a test's margin" if margin else "")


BASE = 2000.0 + noise(500, 0)  # segments of different lengths: the pairing matters

# (kind, claimed, margin, B − A shift in ms, B's own noise in ms, verdict)
DIFFERENCES = [
    ("superiority", "greater", 0.0, 300.0, 50.0, "holds"),
    ("superiority", "greater", 0.0, -300.0, 50.0, "contradicted"),
    ("superiority", "greater", 0.0, 0.0, 600.0, "undecided"),
    ("non-inferiority", "greater", 100.0, -50.0, 20.0, "holds"),
    ("non-inferiority", "greater", 100.0, -300.0, 50.0, "contradicted"),
    ("non-inferiority", "greater", 100.0, -100.0, 600.0, "undecided"),
    ("equivalence", "within", 100.0, 10.0, 20.0, "holds"),
    ("equivalence", "within", 100.0, 400.0, 50.0, "contradicted"),
    ("equivalence", "within", 100.0, 90.0, 600.0, "undecided"),
]


@pytest.mark.parametrize("kind, claimed, margin, shift, spread, verdict", DIFFERENCES)
def test_a_difference_of_every_kind(tmp_path, kind, claimed, margin, shift, spread, verdict):
    rows = settings(tmp_path, {0: BASE, 1: BASE + shift + noise(spread, 1)})
    claim = finding(kind, claimed, margin).measure(
        rows, difference({"setting": "x0"}, {"setting": "x1"}, "AL"))
    assert claim.evidence.n == N
    assert claim.evidence.effect == pytest.approx(shift, abs=spread)
    assert claim.verdict == verdict, claim.evidence.text()


# three settings along x: steps (x0 → x1, x1 → x2) in ms, with noise
STEPS = [((300.0, 300.0), 30.0, "holds", "holds"),
         ((300.0, -200.0), 30.0, "contradicted", "holds"),  # one step down: not at every step
         ((-300.0, -300.0), 30.0, "contradicted", "contradicted"),
         ((0.0, 0.0), 800.0, "undecided", "undecided")]


@pytest.mark.parametrize("steps, spread, weakest, mean", STEPS)
def test_the_weakest_and_the_mean_step(tmp_path, steps, spread, weakest, mean):
    second = BASE + steps[0] + noise(spread, 1)
    rows = settings(tmp_path, {0: BASE, 1: second, 2: second + steps[1] + noise(spread, 2)})
    for statistic, verdict in ((weakest_step(by="param_g", along="param_x"), weakest),
                               (mean_step(by="param_g", along="param_x", metric="AL"), mean)):
        claim = finding("superiority").measure(rows, statistic)
        assert claim.verdict == verdict, claim.evidence.text()


@pytest.mark.parametrize("shift, spread, verdict", [
    (200.0, 30.0, "holds"), (-200.0, 30.0, "contradicted"), (0.0, 800.0, "undecided")])
def test_a_curve_gap_at_matched_position(tmp_path, shift, spread, verdict):
    # two curves of AL over the position x (0, 1, 2 and 0.5, 1.5, 2.5): B shift above A
    als = {0: BASE, 1: BASE + 100, 2: BASE + 200}
    als.update({x + 0.5: als[x] + 50 + shift + noise(spread, 3 + int(x)) for x in (0, 1, 2)})
    rows = settings(tmp_path, als)

    def gap(r):
        b = r[r.param_x % 1 == 0.5]
        return curve_gap(b, r[r.param_x % 1 == 0], x="param_x", y="AL")

    claim = finding("superiority").measure(rows, gap)
    assert claim.verdict == verdict, claim.evidence.text()


@pytest.mark.parametrize("ratio, verdict", [(3.5, "holds"), (1.8, "contradicted"),
                                            (2.5, "undecided")])  # 2.5: on the bound
def test_a_ratio_against_a_margin(tmp_path, ratio, verdict):
    # "3× faster" as non-inferiority within 0.5: AL(A) / AL(B) − 3 ≥ −0.5
    slow = BASE * 3
    u = noise(0.6 if verdict == "undecided" else 0.02, 4)
    fast = slow.mean() / ratio * (1 + u - u.mean())  # mean AL exactly slow's / ratio
    rows = settings(tmp_path, {0: slow, 1: fast})

    def speedup(r):
        return float(r[r.param_x == 0].AL.iloc[0] / r[r.param_x == 1].AL.iloc[0] - 3)

    claim = finding("non-inferiority", margin=0.5).measure(rows, speedup)
    assert claim.verdict == verdict, claim.evidence.text()


@pytest.mark.parametrize("longer, verdict", [(1.0, "holds"), (0.0, "contradicted"),
                                             (0.5, "undecided")])
def test_a_share_over_resampled_segments(longer, verdict):
    # flags (2, settings, segments): negative on every segment, longer on a share of them
    flags = np.zeros((2, 3, N))
    flags[0] = 1.0
    flags[1, :, : int(longer * N)] = 1.0

    def share(v):
        return float(v[1].sum() / v[0].sum() - 0.5)

    evidence = resample_segments(flags, share, claimed="greater")
    claim = finding("superiority").decided(evidence)
    assert claim.evidence.n == N and claim.verdict == verdict


def test_a_property_fails_when_a_setting_breaks_it():
    prop = Finding("X-2", "simul", "a test", "made-up rows", "every setting ≥ 0", "settings",
                   "property", claimed="")
    assert prop.checked(False, "one setting below").verdict == "contradicted"
    assert prop.checked(True, "all above").verdict == "holds"


def test_a_finding_refuses_a_kind_unlike_its_direction_and_a_margin_without_reason():
    with pytest.raises(ValueError, match="is a superiority claim, not non-inferiority"):
        Finding("X-3", "simul", "a", "s", "t", "u", "non-inferiority")
    with pytest.raises(ValueError, match="needs its reason"):
        Finding("X-3", "simul", "a", "s", "t", "u", "non-inferiority", margin=1.0)
    with pytest.raises(ValueError, match="paper 'Z99'"):
        Finding("X-3", "Z99", "a", "s", "t", "u", "superiority")
    with pytest.raises(ValueError, match="needs"):
        finding("superiority").not_measured(" ")
