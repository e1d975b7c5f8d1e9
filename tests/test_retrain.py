"""The retraining round: tools/retrain.sh run on a copy of the tools folder with a stand-in for
simul that records its calls (the lanes' steps in order, packed into data/round and scored
there, a step whose metrics are committed skipped, the meta lane's stages), and
simul.models.registry.start_dir, which lets a child train from its retrained parent."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from simul.models import registry
from simul.models.training import train

ROOT = Path(__file__).resolve().parents[1]

STAND_IN = """#!/usr/bin/env bash
args="$*"; echo "$SIMUL_ROUND | ${args//$'\\n'/\\\\n}" >> "$CALLS"
if [ "$1 $2" = "models eval" ]; then mkdir -p "$3" && echo {} > "$3/metrics.json"; fi
"""


def repo(tmp_path: Path, done: tuple[str, ...] = ()) -> Path:
    """A folder with tools/retrain.sh and data/round/NAME/metrics.json for ``done``."""
    root = tmp_path / "repo"
    (root / "tools").mkdir(parents=True)
    for script in ("retrain.sh", "round.sh"):
        shutil.copy(ROOT / "tools" / script, root / "tools")
    for name in done:
        (root / "data" / "round" / name).mkdir(parents=True)
        (root / "data" / "round" / name / "metrics.json").write_text("{}")
    simul = tmp_path / "simul"
    simul.write_text(STAND_IN)
    simul.chmod(simul.stat().st_mode | stat.S_IEXEC)
    return root


def retrain(root: Path, tmp_path: Path, *args: str,
            env: dict | None = None) -> tuple[subprocess.CompletedProcess, list]:
    calls = tmp_path / "calls.txt"
    env = {**os.environ, "SIMUL": str(tmp_path / "simul"), "SIMUL_RUNS": str(tmp_path / "runs"),
           "CALLS": str(calls), "HOME": str(tmp_path), **(env or {})}
    env.pop("SIMUL_ROUND", None)
    proc = subprocess.run(["bash", str(root / "tools" / "retrain.sh"), *args], env=env,
                          capture_output=True, text=True, timeout=120)
    made = calls.read_text().splitlines() if calls.is_file() else []
    calls.unlink(missing_ok=True)
    return proc, made


def test_a_lane_skips_what_the_round_holds_and_packs_the_rest_there(tmp_path):
    root = repo(tmp_path, done=("conformer_bpe_en-es",))
    proc, calls = retrain(root, tmp_path, "conformer")
    assert proc.returncode == 0, proc.stderr
    runs, round_dir = tmp_path / "runs", root / "data" / "round"
    assert proc.stdout.startswith("conformer_bpe_en-es: in data/round already\n")
    run = runs / "conformer_bpe_en-de"
    assert calls == [  # every call sees the round's folder, absolute
        f"{round_dir} | train conformer_bpe_en-de --workdir {run}",
        f"{round_dir} | models pack {run}/exp conformer_bpe_en-de --pair en-de --average 3 "
        "--out-root data/round --command-line simul train conformer_bpe_en-de",
        f"{round_dir} | models eval data/round/conformer_bpe_en-de --into-model"]
    proc, calls = retrain(root, tmp_path, "conformer")
    assert proc.returncode == 0 and calls == []


def test_a_step_with_settings_names_its_run_and_settings_on_the_card(tmp_path):
    proc, calls = retrain(repo(tmp_path), tmp_path, "conformer_bpe_en-de_k4_s800")
    assert proc.returncode == 0, proc.stderr
    run = tmp_path / "runs" / "conformer_bpe_en-de_k4_s800"
    sets = "--set espnet.decoder_conf.k_train=4 --set espnet.decoder_conf.word_ms=800"
    assert calls[0].split(" | ")[1] == (f"train conformer_bpe_en-de_waitk_stride --workdir "
                                        f"{run} {sets}")
    # the pair's export and the statistics of the pair's children, shared
    assert (run / "data").resolve() == tmp_path / "runs" / "shared" / "en-de" / "data"
    assert (run / "stats").resolve() == tmp_path / "runs" / "shared" / "children-en-de" / "stats"
    assert calls[1].split(" | ")[1] == (
        f"models pack {run}/exp conformer_bpe_en-de_k4_s800 --pair en-de --average 2 "
        "--out-root data/round --command-line simul train conformer_bpe_en-de_waitk_stride "
        f"--workdir ~/runs/conformer_bpe_en-de_k4_s800 {sets}")


def test_the_meta_lane_pretrains_once_per_start_then_fine_tunes_three_models(tmp_path):
    proc, calls = retrain(repo(tmp_path), tmp_path, "meta")
    assert proc.returncode == 0, proc.stderr
    meta = tmp_path / "runs" / "meta_round"
    made = [c.split(" | ")[1] for c in calls]
    recipe = "meta-train conformer_bpe_en-de_meta"
    assert [c for c in made if c.startswith("meta-train")] == [
        f"{recipe} --stage finetune --workdir {meta}/woMT",
        f"{recipe} --stage meta --workdir {meta}/meta",
        f"{recipe} --stage finetune --workdir {meta}/wMT --start {meta}/meta",
        f"{recipe} --stage multitask --workdir {meta}/multitask",
        f"{recipe} --stage finetune --workdir {meta}/control --start {meta}/multitask"]
    packs = [c for c in made if c.startswith("models pack")]
    assert packs[1] == (
        f"models pack {meta}/wMT/exp conformer_bpe_en-de_meta_wMT --pair en-de --average 2 "
        "--out-root data/round --command-line "  # two commands, a line each (\\n: a newline)
        f"simul {recipe} --stage meta --workdir ~/runs/meta_round/meta\\n"
        f"simul {recipe} --stage finetune --start ~/runs/meta_round/meta "
        "--workdir ~/runs/meta_round/wMT")


def test_a_step_whose_family_has_moved_to_data_models_is_done(tmp_path):
    import json

    from simul.corpus.manifest import sha256

    root = repo(tmp_path)
    models = root / "data" / "models"
    for name, info in (("conformer_bpe_en-es", {"augmentation": {"seed": 0}}),
                       ("conformer_bpe_en-de", {})):  # served from before the round
        (models / name).mkdir(parents=True)
        (models / name / "simul.json").write_text(json.dumps(info))
        (models / name / "metrics.json").write_text("{}")
    proc, calls = retrain(root, tmp_path, "conformer", env={"PYTHON": sys.executable})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("conformer_bpe_en-es: in data/models, retrained\n")
    assert [c.split(" | ")[1].split(" --")[0] for c in calls if " | train " in c] == [
        "train conformer_bpe_en-de"]
    # H20's meta-learning models record no augmentation: they are the round's when their
    # parent is, and is the file they were made from
    (models / "conformer_bpe_en-es" / "model.pth").write_bytes(b"weights")
    meta = models / "conformer_bpe_en-de_meta_wMT"
    meta.mkdir()
    (meta / "metrics.json").write_text("{}")
    for checksum, done in ((sha256(models / "conformer_bpe_en-es" / "model.pth"), True),
                           ("0" * 64, False)):
        (meta / "simul.json").write_text(json.dumps(
            {"parent": {"model": "conformer_bpe_en-es", "sha256": checksum}}))
        assert registry.retrained(meta) is done


@pytest.mark.parametrize("args", [("conformer_bpe_en-fr",), ("gru",)])
def test_an_unknown_step_or_lane_is_an_error(tmp_path, args):
    proc, calls = retrain(repo(tmp_path), tmp_path, *args)
    assert proc.returncode == 2 and calls == []
    assert proc.stderr.count("\n") == 1 and "lanes: " in proc.stderr


def test_a_start_model_is_read_from_the_round_first(tmp_path, monkeypatch):
    round_dir = tmp_path / "round"
    (round_dir / "conformer_bpe_en-es").mkdir(parents=True)
    (round_dir / "conformer_bpe_en-es" / "config.yaml").write_text("{}")
    monkeypatch.delenv(registry.ROUND_ENV, raising=False)
    shipped = registry.MODELS_DIR / "conformer_bpe_en-es"
    assert train.model_source({"model": "conformer_bpe_en-es"}, "r") == shipped
    monkeypatch.setenv(registry.ROUND_ENV, str(round_dir))
    assert train.model_source({"model": "conformer_bpe_en-es"}, "r") == \
        round_dir / "conformer_bpe_en-es"
    # a model the round does not hold yet: the shipped one
    assert registry.start_dir("transformer_bpe_en-es") == \
        registry.MODELS_DIR / "transformer_bpe_en-es"


ROUND = ROOT / "data" / "round"


@pytest.mark.parametrize("name", sorted(p.parent.name for p in ROUND.glob("*/simul.json")))
def test_a_round_model_is_whole_and_scored_and_its_parent_is_the_one_it_was_made_from(name):
    # what the round commits must assemble when its family moves to data/models: a child's
    # parent is beside it (retrained from the round's parent) with the checksum it names
    import json

    from simul.models import parent

    folder = ROUND / name
    for f in ("config.yaml", "model.pth", "metrics.json", "card.md"):
        assert (folder / f).is_file(), f"{folder / f} missing"
    info = json.loads((folder / "simul.json").read_text())
    # augmented speech, but for H20's meta-learning (its own loader, on the round's frozen
    # robust encoder)
    assert "augmentation" in info or "simul meta-train" in info.get("command", ""), name
    entry = info.get(parent.KEY)
    if entry is not None:
        assert (ROUND / entry["model"] / "model.pth").is_file(), \
            f"{name}: its parent {entry['model']} is not in data/round"
        assert parent.sha256(ROUND / entry["model"] / "model.pth") == entry["sha256"]
