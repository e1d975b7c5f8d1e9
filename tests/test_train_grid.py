"""tools/train_grid.sh, run on a copy of the tools folder beside made-up shipped parents with a
stand-in for simul that records its calls: the lanes' steps in order, each trained, packed
and scored once into the round's folder (data/round); a step whose metrics are there skipped on
the next run; a parent from before the retraining round refused before anything runs, a
parent retrained in the round taken before the shipped one."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

STAND_IN = """#!/usr/bin/env bash
echo "$*" >> "$CALLS"
if [ "$1 $2" = "models eval" ]; then mkdir -p "$3" && echo {} > "$3/metrics.json"; fi
"""


def repo(tmp_path: Path, parents: dict[str, dict], retrained: dict[str, dict] = {}) -> Path:  # noqa: B006
    """A folder with tools/train_grid.sh, data/models/NAME/simul.json for ``parents`` and
    data/round/NAME/{simul,metrics}.json for ``retrained``."""
    root = tmp_path / "repo"
    (root / "tools").mkdir(parents=True)
    for script in ("train_grid.sh", "round.sh"):
        shutil.copy(ROOT / "tools" / script, root / "tools")
    for folder, models in (("models", parents), ("round", retrained)):
        for name, info in models.items():
            (root / "data" / folder / name).mkdir(parents=True)
            (root / "data" / folder / name / "simul.json").write_text(json.dumps(info))
            if folder == "round":
                (root / "data" / folder / name / "metrics.json").write_text("{}")
    simul = tmp_path / "simul"
    simul.write_text(STAND_IN)
    simul.chmod(simul.stat().st_mode | stat.S_IEXEC)
    return root


def grid(root: Path, tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, list]:
    calls = tmp_path / "calls.txt"
    env = {**os.environ, "SIMUL": str(tmp_path / "simul"), "PYTHON": sys.executable,
           "SIMUL_RUNS": str(tmp_path / "runs"), "CALLS": str(calls)}
    proc = subprocess.run(["bash", str(root / "tools" / "train_grid.sh"), *args], env=env,
                          capture_output=True, text=True, timeout=120)
    made = calls.read_text().splitlines() if calls.is_file() else []
    calls.unlink(missing_ok=True)
    return proc, made


RETRAINED = {"pair": "en-de", "augmentation": {"speed_perturb": [0.9, 1.0, 1.1]}}
BEFORE = {"pair": "en-de"}  # packed before simul.json recorded the augmentation


def test_a_lane_trains_packs_and_scores_each_step_once(tmp_path):
    root = repo(tmp_path, {"transformer_bpe_en-de": RETRAINED})
    proc, calls = grid(root, tmp_path, "p22-en-de")
    assert proc.returncode == 0, proc.stderr
    runs = tmp_path / "runs"
    names = [f"transformer_bpe_en-de_waitk{k}_{d}" for d in ("fixed", "adaptive")
             for k in (3, 5, 7, 9, 11)]
    expected = []
    for name in names:
        expected += [f"train {name} --workdir {runs / name}",
                     f"models pack {runs / name}/exp {name} --pair en-de --average 3 "
                     f"--out-root data/round --command-line simul train {name}",
                     f"models eval data/round/{name} --into-model"]
    assert calls == expected
    for name in names:
        assert (root / "data" / "round" / name / "metrics.json").is_file()
        # one export of the pair, one statistics pass of the lane
        assert (runs / name / "data").resolve() == runs / "shared" / "en-de" / "data"
        assert (runs / name / "stats").resolve() == runs / "shared" / "p22-en-de" / "stats"
    proc, calls = grid(root, tmp_path, "p22-en-de")  # again: every step is packed
    assert proc.returncode == 0 and calls == []
    assert proc.stdout.count("in data/round already") == 10


def test_a_parent_retrained_in_the_round_is_taken_before_the_shipped_one(tmp_path):
    root = repo(tmp_path, {"transformer_bpe_en-de": BEFORE},
                retrained={"transformer_bpe_en-de": RETRAINED})
    proc, calls = grid(root, tmp_path, "transformer_bpe_en-de_waitk3_fixed")
    assert proc.returncode == 0, proc.stderr
    assert calls[0].startswith("train transformer_bpe_en-de_waitk3_fixed --workdir ")


def test_a_step_whose_model_has_moved_to_data_models_is_done_and_one_from_before_is_not(tmp_path):
    # a family moves from data/round to data/models once complete (data/round/README.md)
    root = repo(tmp_path, {"transformer_bpe_en-de": RETRAINED,
                           "transformer_bpe_en-de_waitk3_fixed": RETRAINED,
                           "transformer_bpe_en-de_waitk5_fixed": BEFORE})
    for name in ("transformer_bpe_en-de_waitk3_fixed", "transformer_bpe_en-de_waitk5_fixed"):
        (root / "data" / "models" / name / "metrics.json").write_text("{}")
    proc, calls = grid(root, tmp_path, "transformer_bpe_en-de_waitk3_fixed",
                       "transformer_bpe_en-de_waitk5_fixed")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("transformer_bpe_en-de_waitk3_fixed: in data/models, retrained\n")
    assert [c.split(" --workdir ")[0] for c in calls if c.startswith("train ")] == [
        "train transformer_bpe_en-de_waitk5_fixed"]


def test_the_mma_lane_trains_lambda_zero_then_each_lambda_from_it(tmp_path):
    root = repo(tmp_path, {"conformer_bpe_en-de": RETRAINED})
    proc, calls = grid(root, tmp_path, "mma")
    assert proc.returncode == 0, proc.stderr
    trains = [c for c in calls if c.startswith("train ")]
    runs = tmp_path / "runs"
    # λ = 0 first, over fixed 280 ms blocks and over oracle word ends (M20 Figs. 2b and 3)
    assert trains[:2] == [f"train conformer_bpe_en-de_mma_enc --workdir "
                          f"{runs / 'conformer_bpe_en-de_mma_enc'}",
                          f"train conformer_bpe_en-de_mma_enc_word --workdir "
                          f"{runs / 'conformer_bpe_en-de_mma_enc_word'}"]
    # M20 footnote 4: λ = 0.001 … 0.1 on AL in ms, × 80 on AL in 80 ms frames; on words
    # 0.001, 0.01, 0.04 and 0.1
    weights = ["0.08", "0.32", "0.8", "1.6", "3.2", "4.8", "6.4", "8"]
    word_weights = ["0.08", "0.8", "3.2", "8"]
    assert trains[2:] == [
        f"train conformer_bpe_en-de_mma_enc{blocks}_lat --workdir "
        f"{runs / f'conformer_bpe_en-de_mma_enc{blocks}_l{w}'} "
        f"--set espnet.decoder_conf.latency_weight={w} "
        f"--set espnet.decoder_conf.variance_weight={w}"
        for blocks, ws in (("", weights), ("_word", word_weights)) for w in ws]
    packs = [c for c in calls if c.startswith("models pack ")]
    assert len(packs) == 14
    assert packs[1].split(" --average ")[1].startswith(
        "3 --out-root data/round --command-line simul train conformer_bpe_en-de_mma_enc_word")
    assert packs[2].split(" --average ")[1].startswith("2 --out-root data/round "
                                                       "--command-line simul train "
                                                       "conformer_bpe_en-de_mma_enc_lat "
                                                       "--workdir ")


@pytest.mark.parametrize("parents", [{"transformer_bpe_en-de": BEFORE}, {}])
def test_a_lane_whose_parent_is_not_the_retrained_one_is_refused(tmp_path, parents):
    root = repo(tmp_path, parents)
    proc, calls = grid(root, tmp_path, "p22-en-de")
    assert proc.returncode == 2 and calls == []
    assert proc.stderr.count("\n") == 1
    assert ("lane p22-en-de starts from the retrained transformer_bpe_en-de, and "
            "data/models/transformer_bpe_en-de/simul.json records no augmentation"
            in proc.stderr)
    assert not (tmp_path / "runs").exists()  # nothing made


def test_one_refused_lane_stops_the_others_before_they_start(tmp_path):
    root = repo(tmp_path, {"transformer_bpe_en-es": RETRAINED,
                           "transformer_bpe_en-de": BEFORE})
    proc, calls = grid(root, tmp_path, "p22-en-es", "p22-en-de")
    assert proc.returncode == 2 and calls == []


@pytest.mark.parametrize("args", [(), ("p22-en-fr",)])
def test_no_lane_or_an_unknown_one_is_an_error(tmp_path, args):
    proc, calls = grid(repo(tmp_path, {}), tmp_path, *args)
    assert proc.returncode == 2 and calls == []
    assert "lanes: " in proc.stderr
