"""The papers' claims on the full run of the notebooks (``make reproduce`` runs this file
after the notebooks, with ``-m full_run``; the default test command deselects it).

Each claim the notebooks saved (``figures/<notebook>/claims.csv``) is one test case. A
claim that does not hold on the embedded corpus is listed in ``KNOWN_GAPS`` with the
reason, as a strict xfail: it is reported, not tuned away, and the test fails if it starts
to hold (then move it out of the list).
"""

from __future__ import annotations

import pandas as pd
import pytest

from simul.reproduce import FIGURES_DIR, NOTEBOOKS

pytestmark = pytest.mark.full_run

# Measured on `make reproduce` at 98ab806 (40 tst-COMMON segments per notebook, three models
# shipped); the analysis behind each reason is in docs/claims_full_run.md. The recurring
# mechanism: a schedule that writes faster than the speech delivers lets the offline model
# close a short sentence early; nothing more is written until the source ends, and the open
# last word is charged at |X| (SimulEval's word-level convention), which raises AL.
KNOWN_GAPS: dict[str, str] = {
    "H20-AL-k": "s=200 ms / c=0.5 write faster than speech (5.5 units/s): hypotheses end early, "
                "last word at |X|; a larger k lengthens them (τ 4.1→6.5 words), so AL falls",
    "H20-AL-s": "c=0.5, s=200 ms writes 10 units/s: 82% of hypotheses truncated, last word at |X|;"
                " AL above s=300 ms",
    "H20-AL-c": "s=200 ms, c=0.5 outruns the speech: early words come sooner (765→205 ms) but the "
                "|X|/τ term of truncated hypotheses grows more (610→1927 ms)",
    "H20-table6": "ties on 40 segments (+0.05 BLEU, bootstrap SD 2.6; +0.44, 36/40 outputs "
                  "identical); one offline model, no trained (k, s) pair",
    "H20-regimes": "no grid setting reaches AL ≤ 1000 ms (lowest 1242): faster settings truncate "
                   "and their last word is charged at |X|; the grid has no k=1 or s<200 ms",
    "P22-adaptive": "held on the Conformer alone (+1.1 BLEU); the Transformer's adaptive − fixed "
                    "is −0.2 (−1.7…+1.5 over 8 points, SD ≈ 2.6 on 40 segments): its source CTC "
                    "counts a whole segment's words right in 8/40 segments (Conformer 37/40)",
    "M20-AL-k": "one dip, phoneme trigger k=9→10: paired ΔAL_M20 −12 ± 41 ms on 40 segments",
    "M20-word": "at matched AL_M20, word − fixed = +0.7/−1.5/−0.5/−0.1 BLEU (SD ≈ 2.6 on 40 "
                "segments); word triggers give 2.8 units/s, half what the model writes",
    "M20-CA": "CA−NCA falls for Δt ≥ 200 ms (302→197 ms); at 120 ms hypotheses end at an early "
              "EOS (4–9 words), so less computation accumulates",
    "N21-BPE": "k=100, s=10, N=2 writes 20 units/s: the BPE models close sentences early "
               "(0.61 / 0.42 of the reference's words vs 0.85 for chars), last word at |X|",
    "N21-AL-N": "N=1 at s=10 writes 10 chars/s < 14.6 needed (AL 1973); N=2→3 +102 ± 131 ms: N=3 "
                "writes 30 chars/s, closes sentences early, last word at |X|",
    "K22-chunk-AL": "LA-2 at 250 ms commits a premature sentence end in 85% of segments; two 1–2 "
                    "word hypotheses (AL 8461, 7362 ms) lift the mean; the medians grow",
    "K22-chunk-dominates": "SP-2 (beam 5) is near-offline even at 250 ms while Hold-6 lags 6 "
                           "units; 5.1 s segments cap the chunk-size range (1495 vs 1890 ms)",
    "K22-LA2-best": "LA-2's truncated 250 ms point (BLEU 15.3 at AL 1781) dents its curve; "
                    "without it LA-2 is within 0.7 BLEU of the best rule",
    "K22-SP1-worst": "the mean over chunk sizes ignores latency: Hold-3/6 run at far lower AL than "
                     "SP-1 (beam 5, conservative); at matched AL SP-1 is below 5 of 6 rules",
    "K22-initial-wait": "LA-2/250 ms: the 2 s wait lengthens two truncated outliers (AL 8461→1599,"
                        " 7362→2517 ms); the median and 29/40 segments rise",
    "K22-AL-negative-long": "1 of 28 negative-AL decodes has |Y| = |Y*| = 24 (Hold-3, 500 ms): "
                            "bursts of 3 words ahead of the ideal pace give AL −49 ms",
}


def _claims() -> list[tuple[str, str, bool, str]]:
    rows = []
    for nb in NOTEBOOKS:
        path = FIGURES_DIR / nb.name / "claims.csv"
        if path.is_file() and path.stat().st_size > 1:
            for r in pd.read_csv(path).itertuples():
                rows.append((nb.name, r.id, bool(r.holds), str(r.detail)))
    return rows


CLAIMS = _claims()


def test_the_full_run_saved_claims():
    missing = [nb.name for nb in NOTEBOOKS if nb.name != "tutorial"
               and not (FIGURES_DIR / nb.name / "claims.csv").is_file()]
    assert not missing, f"run `make reproduce` first; no claims table for {missing}"


@pytest.mark.parametrize(("notebook", "claim", "holds", "detail"), [
    pytest.param(*c, id=c[1], marks=[pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[c[1]])]
                 if c[1] in KNOWN_GAPS else []) for c in CLAIMS])
def test_claim_holds_on_the_full_run(notebook, claim, holds, detail):
    assert holds, f"{notebook} {claim}: {detail}"
