"""Every paper's claims together, built on the hand-made summaries of each module's tests:
each claim comes from a declared finding (the paper's sentence, section, kind, margin with
its reason), the findings' ids are unique across the papers, and every non-inferiority or
equivalence claim states its kind and margin."""

from __future__ import annotations

import pandas as pd
import pytest

from simul.analysis.claims import PROPERTY
from simul.papers import compare_policies, han2020, ma2020, nguyen2021, papi2022, polak2022
from simul.papers import tutorial as tut
from tests import (
    test_compare_policies,
    test_papers_han2020,
    test_papers_ma2020,
    test_papers_nguyen2021,
    test_papers_papi2022,
    test_papers_polak2022,
    test_tutorial,
)

MODULES = (nguyen2021, papi2022, ma2020, polak2022, han2020, compare_policies, tut)


def every_claim():
    """The claims of every module, each kind of claim at least once."""
    n21 = test_papers_nguyen2021
    yield from nguyen2021.claims(n21.summary(), n21.figure2())
    yield from nguyen2021.figure3_claims(
        n21.figure3_rows({1000: 20.0, 3000: 30.0}, {1000: 10.0, 3000: 40.0}))

    p22 = test_papers_papi2022
    yield from papi2022.claims(
        p22.summary(p22.curves("T"), p22.curves("C", shift=1.0),
                    [p22.offline("T", 1, 20.0), p22.offline("C", 1, 22.0)]),
        transformer="T", conformer="C")
    trained = p22.trained_rows({"off": {3: (500, 10.0), 5: (1500, 30.0)},
                                "w3": {3: (500, 16.0), 5: (1500, 28.0)}})
    for eos in (False, True):
        yield from papi2022.trained_claims(trained, "off", ["w3"], eos_allowed=eos)
    grid = [("off", "fixed"), ("off", "adaptive")]
    grid += [(f"{d}{k}", d) for d in papi2022.DETECTIONS for k in papi2022.KS]
    yield from papi2022.grid_claims(
        p22.summary([p22.row(m, d, k, 800.0 * (j + 1), 10.0 + j)
                     for m, d in grid for j, k in enumerate((3, 5, 7))]),
        "off", {d: {k: f"{d}{k}" for k in papi2022.KS} for d in papi2022.DETECTIONS},
        {d: [] for d in papi2022.DETECTIONS}, pair="en-de", tag=False)
    yield from papi2022.pair_claims(
        p22.summary(p22.curves("T-de"), p22.curves("T-es", shift=3.0),
                    [p22.offline("T-de", 1, 18.0), p22.offline("T-es", 1, 20.0)]),
        {"en-de": {"transformer": "T-de"}, "en-es": {"transformer": "T-es"}})

    m20 = test_papers_ma2020
    yield from ma2020.claims(m20.summary())
    yield from ma2020.mma_claims(m20.summary(), m20.with_mma_steps(0.5), m20.WEIGHTS)

    k22 = test_papers_polak2022
    yield from polak2022.claims(k22.paper_like(), k22.utterances([0, 1], [0, 1]))
    yield from polak2022.claims(pd.DataFrame(k22.lines({
        ("hold", 3): k22.shifted(-5), ("hold", 6): k22.BASE,
        ("hold", 12): k22.shifted(0.5, 1000), ("la", 2): k22.BASE,
        ("la", 3): k22.shifted(0.4, 700), ("la", 4): k22.shifted(0.2, 900)}, AL_CA=0.0)))
    yield from polak2022.better_offline_claims(
        k22.model_rows("m", k22.BASE, 30.0), k22.model_rows("w", k22.shifted(-2.0), 28.0),
        "m", "w")

    h20 = test_papers_han2020
    yield from han2020.claims(h20.summary(), h20.TRAINED)
    ktest = h20.trained_rows({"w7": {5: 23.0, 7: 25.0}})
    for eos in (False, True):
        yield from han2020.ktest_claims(ktest, {"w7": 7}, eos_allowed=eos)
    yield from han2020.pairs_claims(h20.pair_rows({"b": {(4, 800.0): 18.0},
                                                   "c": {(5, 800.0): 17.0}}),
                                    {"b": (4, 800), "c": (5, 800)})
    yield from han2020.table4_claims(h20.text_rows({"t7": {7: 28.6}, "t8": {7: 29.1}}),
                                     {"t7": 7, "t8": 8})
    yield from han2020.meta_claims(h20.meta_summary({"m_wo": [10, 14, 13], "m_w": [12, 15, 20],
                                                     "m_mt": [11, 16, 19]}), h20.META)

    yield from compare_policies.claims(test_compare_policies.summary([
        ["m", "offline", "beam=1", 20.0, 5000, 5100],
        ["m", "edatt", "alpha=0.1", 19.0, 2000, 2100]]))
    yield from compare_policies.anticipation_claims(test_compare_policies.pairs_summary(),
                                                    {"en-de": "de", "en-es": "es"})
    yield from tut.claims(test_tutorial.grid({(100, 10): 900, (200, 10): 1500}))


@pytest.fixture(scope="module")
def claims():
    found = {}
    for claim in every_claim():
        found.setdefault(claim.id, claim)
    return found


def _base(cid: str) -> str:
    return cid.split("@")[0].removesuffix("-eos").removesuffix("-multipath")


def test_every_declared_finding_is_claimed_and_every_claim_declared(claims):
    declared = {cid: f for m in MODULES for cid, f in m.FINDINGS.items()}
    assert len(declared) == sum(len(m.FINDINGS) for m in MODULES)  # ids unique across papers
    assert {_base(cid) for cid in claims} == set(declared)
    for cid, claim in claims.items():
        assert claim.finding is not None, cid
        base = declared[_base(cid)]
        assert (claim.kind, claim.finding.margin, claim.finding.half) == (
            base.kind, base.margin, base.half), cid


def test_by_construction_properties_are_not_claims(claims):
    # computation-aware ≥ ideal latency (elapsed ≥ delay is enforced on every record) and
    # nested latency regimes are tests, not the papers' claims
    assert not {"T-CA", "P22-CA", "CMP-CA", "H20-regimes"} & {_base(c) for c in claims}
    assert {cid for cid, c in claims.items() if c.kind == PROPERTY} == {"K22-AL-max-length"}


def test_simuls_own_questions_are_marked(claims):
    own = {cid for cid, c in claims.items() if c.own}
    assert {"P22-trained-low", "H20-meta-control", "CMP-offline", "CMP-anticipation",
            "T-k", "P22-offline-vs-trained-eos", "H20-table6-trained-eos"} <= own
    assert not {"P22-offline-vs-trained", "K22-3x", "H20-meta", "N21-BPE"} & own


def test_measured_claims_state_their_margin_and_its_reason(claims):
    for cid, claim in claims.items():
        if claim.kind in ("non-inferiority", "equivalence"):
            assert f"({claim.kind}, margin {claim.finding.margin:g})" in claim.text, cid
            assert claim.finding.margin_reason, cid
        if claim.evidence is not None:
            assert (claim.evidence.claimed, claim.evidence.margin) == (
                claim.finding.claimed, claim.finding.margin), cid


def test_compound_sentences_are_checked_in_both_halves():
    halves: dict[tuple[str, str], set[str]] = {}
    for m in MODULES:
        for f in m.FINDINGS.values():
            if f.half:
                halves.setdefault((f.paper, f.sentence), set()).add(f.half)
    assert halves
    for (paper, sentence), found in halves.items():
        assert found in ({"quality", "latency"}, {"first", "second"},
                         {"quality", "latency", "computation"}), (paper, sentence, found)


def test_the_docs_catalogue_is_the_declared_findings():
    from pathlib import Path

    from simul.commands.reproduce import catalogue

    text = (Path(__file__).parents[1] / "docs" / "reference" / "claims.md").read_text()
    assert catalogue() in text, ("docs/reference/claims.md: paste the catalogue again from "
                                 "python -c 'from simul.commands.reproduce import catalogue; "
                                 "print(catalogue())'")
