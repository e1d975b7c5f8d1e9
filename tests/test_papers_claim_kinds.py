"""Every paper's claims together, built on the hand-made summaries of each module's tests: the
kind of every claim (simul.claims.KINDS, or "property") and its margin, and the text of every
non-inferiority or equivalence claim stating its kind and margin."""

from __future__ import annotations

import pandas as pd
import pytest

from simul.claims import BLEU_MARGIN, RATIO_MARGIN
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


def every_claim():
    """The claims of every module, each kind of claim at least once."""
    n21 = test_papers_nguyen2021
    figure2 = pd.DataFrame([
        {"model": m, "policy": "wait_k_frames", "setting": st, "AL": al, "BLEU": b}
        for m, st, al, b in (("blstm_char_en-pt", "a", 1000.0, 10.0),
                             ("blstm_bpe-small_en-pt", "a", 900.0, 9.0))])
    yield from nguyen2021.claims(n21.summary(), figure2)
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
    yield from papi2022.pair_claims(
        p22.summary(p22.curves("T-de"), p22.curves("T-es", shift=3.0),
                    [p22.offline("T-de", 1, 18.0), p22.offline("T-es", 1, 20.0)]),
        {"en-de": {"transformer": "T-de"}, "en-es": {"transformer": "T-es"}})

    yield from ma2020.claims(test_papers_ma2020.summary())

    k22 = test_papers_polak2022
    yield from polak2022.claims(k22.paper_like())
    yield from polak2022.claims(pd.DataFrame(k22.lines({
        ("hold", 6): k22.BASE, ("hold", 12): k22.shifted(0.5, 1000),
        ("la", 2): k22.BASE, ("la", 3): k22.shifted(0.4, 700)})))
    yield from polak2022.better_offline_claims(
        k22.model_rows("m", k22.BASE, 30.0), k22.model_rows("w", k22.shifted(-2.0), 28.0),
        "m", "w")

    h20 = test_papers_han2020
    yield from han2020.claims(h20.summary(), h20.TRAINED)
    ktest = h20.trained_rows({"w7": {5: 23.0, 7: 25.0}})
    for eos in (False, True):
        yield from han2020.ktest_claims(ktest, {"w7": 7}, eos_allowed=eos)

    yield from compare_policies.claims(test_compare_policies.summary([
        ["m", "offline", "beam=1", 20.0, 5000, 5100],
        ["m", "edatt", "alpha=0.1", 19.0, 2000, 2100]]))
    yield from compare_policies.anticipation_claims(test_compare_policies.pairs_summary(),
                                                    {"en-de": "de", "en-es": "es"})

    t = test_tutorial
    yield from tut.claims(t.record(), t.grid({(100, 10): 900, (200, 10): 1500}))


NOT_SUPERIORITY = {
    "N21-offline": ("non-inferiority", BLEU_MARGIN),
    "P22-offline-vs-trained": ("non-inferiority", BLEU_MARGIN),
    "P22-offline-vs-trained-eos": ("non-inferiority", BLEU_MARGIN),
    "K22-offline-par": ("non-inferiority", BLEU_MARGIN),
    "K22-3x": ("non-inferiority", RATIO_MARGIN),
    "K22-hold-n": ("equivalence", BLEU_MARGIN),
    "K22-LA-n-line": ("equivalence", BLEU_MARGIN),
    "H20-table6": ("non-inferiority", BLEU_MARGIN),
    "H20-table6-trained": ("non-inferiority", BLEU_MARGIN),
    "H20-table6-trained-eos": ("non-inferiority", BLEU_MARGIN),
    "CMP-offline": ("non-inferiority", BLEU_MARGIN),
}
"""The claims that are not superiority claims (nor properties), with their margins."""

PROPERTIES = {"P22-CA", "K22-AL-max-length", "CMP-CA", "T-CA"}


@pytest.fixture(scope="module")
def claims():
    found = {}
    for claim in every_claim():
        found.setdefault(claim.id, claim)
    return found


def test_every_claim_has_its_kind_and_margin(claims):
    assert set(NOT_SUPERIORITY) | PROPERTIES <= set(claims)
    for cid, claim in claims.items():
        if cid in PROPERTIES:
            assert claim.kind == "property", cid
            continue
        expected = NOT_SUPERIORITY.get(cid, ("superiority", 0.0))
        assert (claim.kind, claim.evidence.margin) == expected, cid


def test_the_new_claims_are_there(claims):
    assert {"N21-BPE-BLEU", "N21-N2s20-AL", "N21-N2s20-BLEU", "K22-offline-par", "K22-3x",
            "K22-hold-n", "K22-LA-n-line", "K22-better-offline", "P22-pair-offline",
            "P22-pair-simul", "CMP-anticipation"} <= set(claims)


def test_non_inferiority_and_equivalence_texts_state_kind_and_margin(claims):
    checked = 0
    for cid, claim in claims.items():
        if claim.kind not in ("non-inferiority", "equivalence"):
            continue
        checked += 1
        assert claim.kind in claim.text, (cid, claim.text)
        assert f"margin {claim.evidence.margin:g}" in claim.text, (cid, claim.text)
    assert checked == len(NOT_SUPERIORITY)
