"""The papers' claims on the full run of the notebooks (``make reproduce`` runs this file
after the notebooks, with ``-m full_run``; the default test command deselects it).

Each claim the notebooks saved (``figures/<notebook>/claims.csv``) is one test case, with
its verdict: holds, contradicted, or undecided at the run's sample size (its effect and
95 % interval, see :mod:`simul.analysis.claims`). An undecided claim is reported, not failed. A
claim that the run contradicts is listed, with its measured reason, in the ``KNOWN_GAPS``
of its notebook's module (``simul/papers/<paper>.py``): it runs as a strict xfail —
reported, not tuned away — and the test fails when it stops being contradicted (then take
it out of ``KNOWN_GAPS``).

After ``make confirm``, each claim the confirmatory run decided again on fresh segments
(``figures/confirm/claims.csv``) is a test case too, its gaps in the modules'
``CONFIRMED_GAPS``; without that table there is none.
"""

from __future__ import annotations

import pandas as pd
import pytest

from simul.commands.reproduce import FIGURES_DIR, NOTEBOOKS, known_gaps

pytestmark = pytest.mark.full_run

KNOWN_GAPS = known_gaps()
CONFIRMED_GAPS = known_gaps(stage="confirm")


def _claims() -> list[tuple[str, str, str, str]]:
    rows = []
    for nb in NOTEBOOKS:
        path = FIGURES_DIR / nb.name / "claims.csv"
        if path.is_file() and path.stat().st_size > 1:
            for r in pd.read_csv(path).itertuples():
                effect = "" if pd.isna(r.effect) else \
                    f"effect {r.effect:+.1f} [{r.low:+.1f}, {r.high:+.1f}], n={r.n}; "
                rows.append((nb.name, r.id, str(r.verdict), effect + str(r.detail)))
    return rows


CLAIMS = _claims()


def test_the_full_run_saved_claims():
    missing = [nb.name for nb in NOTEBOOKS if nb.name != "tutorial"
               and not (FIGURES_DIR / nb.name / "claims.csv").is_file()]
    assert not missing, f"run `make reproduce` first; no claims table for {missing}"


@pytest.mark.parametrize(("notebook", "claim", "verdict", "detail"), [
    pytest.param(*c, id=c[1], marks=[pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[c[1]])]
                 if c[1] in KNOWN_GAPS else []) for c in CLAIMS])
def test_claim_is_not_contradicted_on_the_full_run(notebook, claim, verdict, detail):
    assert verdict != "contradicted", f"{notebook} {claim}: {detail}"


def _confirmed() -> list[tuple[str, str, str, str]]:
    path = FIGURES_DIR / "confirm" / "claims.csv"
    if not path.is_file():
        return []
    table = pd.read_csv(path, keep_default_na=False)
    return [(r["notebook"], r["claim"], r["confirm verdict"],
             f"{r['confirm effect [interval]']}, n={r['confirm n']}")
            for _, r in table.iterrows() if r["confirm verdict"]]


@pytest.mark.parametrize(("notebook", "claim", "verdict", "detail"), [
    pytest.param(*c, id=c[1], marks=[pytest.mark.xfail(strict=True, reason=CONFIRMED_GAPS[c[1]])]
                 if c[1] in CONFIRMED_GAPS else []) for c in _confirmed()])
def test_claim_is_not_contradicted_on_fresh_segments(notebook, claim, verdict, detail):
    assert verdict != "contradicted", f"{notebook} {claim} on the confirmatory run: {detail}"
