"""Every notebook, executed end to end on a handful of utterances (``simul reproduce
--quick``), and the papers' claims that a quick run can decide, read from what the notebooks
saved. The full run's claims are checked by tests/test_reproduce_full.py (make reproduce).

Every notebook needs its shipped models: one that is missing fails the run (the notebook's
``notebook.setup`` names it), it is never skipped."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from simul.commands import reproduce
from simul.models import registry

pytestmark = [pytest.mark.slow, pytest.mark.longest, pytest.mark.corpus]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("reproduce")
    done = reproduce.run(quick=True, figures_dir=root / "figures",
                         executed_dir=root / "executed", runs_dir=root / "runs",
                         log=lambda *_: None)
    return root, done


def test_every_notebook_runs_without_error(quick_run):
    root, done = quick_run
    assert sorted(done) == sorted(nb.name for nb in reproduce.NOTEBOOKS)
    for name, path in done.items():
        nb = json.loads(path.read_text())
        errors = [o for c in nb["cells"] for o in c.get("outputs", [])
                  if o.get("output_type") == "error"]
        assert not errors, f"{name}: {errors[:1]}"
        assert (root / "figures" / name).is_dir(), name


@pytest.mark.parametrize("name", [nb.name for nb in reproduce.NOTEBOOKS
                                  if nb.name != "tutorial"])
def test_quick_decidable_claims_hold(quick_run, name):
    root, _ = quick_run
    path = root / "figures" / name / "claims.csv"
    assert path.is_file(), f"{name} saved no claims table"
    table = pd.read_csv(path)
    assert not table.empty, f"{name}: no claim checked"
    quick = table[~table.needs_full_run.astype(bool)]
    failed = quick[quick.verdict == "contradicted"]  # undecided on a handful is no failure
    stale = [m for m in registry.shipped() if registry.stale(m)]
    if not failed.empty and stale:
        # models trained on an older corpus than the one the notebooks run on: a failing
        # claim measures the mismatch, not the policy (the models must be retrained)
        pytest.xfail(f"{name}: {', '.join(failed.id)} fail with models trained on an older "
                     f"corpus ({', '.join(stale)})")
    assert failed.empty, failed[["id", "text", "detail"]].to_string()


def test_tables_have_metric_columns(quick_run):
    root, _ = quick_run
    csvs = [p for p in (root / "figures").rglob("*.csv") if p.name != "claims.csv"]
    assert csvs
    for path in csvs:
        table = pd.read_csv(path)
        # settings' tables carry BLEU; per-utterance tables (K22 §5.4) carry latency;
        # long tables (the tutorial's one record) name their metrics in a column
        names = list(table.columns) + list(table.get("metric", []))
        assert any(str(c).startswith(("BLEU", "AL", "min AL")) for c in names), path
