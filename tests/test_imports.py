"""Policies, metrics and records import no ESPnet: it loads only where a model is decoded."""

import subprocess
import sys

import pytest


@pytest.mark.parametrize("module", ["simul.policies", "simul.metrics", "simul.records",
                                    "simul.metrics.score", "simul.models.adapters.espnet_st"])
def test_no_espnet_on_import(module):
    # a fresh interpreter: this test process may have imported ESPnet already
    code = (f"import {module}, sys; "
            "loaded = sorted(m for m in sys.modules if m.startswith('espnet')); "
            "assert not loaded, loaded")
    if module == "simul.policies":  # every policy module, not just the package
        code = "import simul.policies; simul.policies.registry(); " + code
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
