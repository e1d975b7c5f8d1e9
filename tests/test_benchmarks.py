"""benchmarks/sweep.py --quick (``make bench QUICK=1``) on one segment: the sweep benchmark
runs to its end on the built corpus and prints its ratios, labelled as a quick run's; its
part 4 alone, on one segment and two k.

The ratios' values are machine- and load-dependent: only their presence is checked, and
that the shared and naive grids decoded the same records."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from simul.models import registry

pytestmark = [pytest.mark.corpus, pytest.mark.slow, pytest.mark.long]

ROOT = Path(__file__).resolve().parents[1]
MODEL = "blstm_char_en-es"  # the benchmark's default grid model, the quick run's only one
RATIO = r"\d+(?:\.\d+)?×"


def sweep_benchmark(*args: str) -> str:
    """The standard output of ``benchmarks/sweep.py`` run with ``args``, which must succeed."""
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "sweep.py"), *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return proc.stdout


@pytest.mark.skipif(MODEL not in registry.shipped(), reason=f"{MODEL} is not shipped")
def test_quick_sweep_benchmark_prints_its_ratios():
    # `make bench QUICK=1` on one segment (options given beside --quick win)
    out = sweep_benchmark("--quick", "--utterances", "1", "--where", "1",
                          "--cost-utterances", "1")
    assert re.search(r"^quick run: ", out, re.M), out
    # part 1: the grid's wall times and speedup, and the shared records equal the naive ones
    assert re.search(r"^naive +\d+\.\d s$", out, re.M), out
    assert re.search(r"^shared +\d+\.\d s$", out, re.M), out
    assert re.search(rf"^speedup {RATIO} \(quick run\); identical records: True$", out, re.M), out
    # the grid's model calls, counted
    assert re.search(rf"sharing gains at most {RATIO} on this grid \(quick run\)$", out, re.M), out
    # part 2: the one model's real-time factor and CA overhead
    assert re.search(r"^## Simultaneous decoding.*\(quick run\)$", out, re.M), out
    assert re.search(rf"^{MODEL} +wait_k_frames \S+ +\d+\.\d{{3}} +-?\d+ +-?\d+ +-?\d+$", out,
                     re.M), out
    # parts 3 and 4 (the Conformers' beam search and greedy steps) are left out of a quick run
    assert "## Beam search" not in out and "## Greedy steps" not in out


GREEDY_MODEL = "conformer_bpe_en-de"  # part 4's default model


@pytest.mark.skipif(GREEDY_MODEL not in registry.shipped(), reason=f"{GREEDY_MODEL} is not shipped")
def test_greedy_step_benchmark_keeps_the_records():
    # part 4 alone, on one segment and two k: ESPnet's greedy steps and simul's give the
    # same records (k = 3, 7, fixed and adaptive detection; offline greedy and beam 5)
    out = sweep_benchmark("--skip-grid", "--where", "0", "--cost-models", "--beam-model", "",
                          "--greedy-utterances", "1", "--greedy-ks", "3", "7",
                          "--cost-threads", "1")  # the suite's other worker has the other core
    assert re.search(r"^## Greedy steps in a sweep: conformer_bpe_en-de, P22's grid \(wait-k "
                     r"over words, fixed and adaptive, k = 3, 7;", out, re.M), out
    steps = {label: int(n.replace(",", "")) for label, n in re.findall(
        r"^(ESPnet|simul) steps +wall +\d+\.\d s +\(6 records, ([\d,]+) decoder steps\)$",
        out, re.M)}
    assert steps.keys() == {"ESPnet", "simul"}, out
    assert 0 < steps["simul"] <= steps["ESPnet"], out  # resumed steps are not taken again
    assert re.search(rf"^speedup {RATIO}, \d+% fewer decoder steps; identical units and "
                     r"delays: True$", out, re.M), out
