"""Policies of one's own: ``module:Class`` (or ``file.py:Class``) wherever a policy is
named, and the ``simul.policies`` entry-point group (issue: a new user's first hour)."""

import json
import math
from pathlib import Path

import pytest

from simul import policies, sweep
from simul.commands import cli
from simul.decoding.simulate import simulate
from simul.policies.base import Policy
from tests.plugin_policy import EveryChunkOneUnit
from tests.test_mustc import PAIR, SPLIT, make_corpus

PLUGIN = "tests.plugin_policy:EveryChunkOneUnit"
PLUGIN_FILE = str(Path(__file__).parent / "plugin_policy.py") + ":EveryChunkOneUnit"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    make_corpus(root / PAIR)
    return root


def install(tmp_path, monkeypatch, name: str, entry: str) -> None:
    """An installed distribution ``name`` (a dist-info folder on sys.path) declaring one
    ``simul.policies`` entry point, ``entry`` (``NAME = module:Class``)."""
    dist = tmp_path / f"{name}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[simul.policies]\n{entry}\n")
    monkeypatch.syspath_prepend(str(tmp_path))


@pytest.fixture
def entry_point(tmp_path, monkeypatch):
    install(tmp_path, monkeypatch, "my_policies", f"every_chunk = {PLUGIN}")
    return "every_chunk"


@pytest.mark.parametrize("name", [PLUGIN, PLUGIN_FILE])
def test_module_class_and_file_class_build_the_policy_with_typed_settings(name):
    policy = policies.make(name, {"chunk_ms": "400"})
    assert type(policy).__name__ == "EveryChunkOneUnit" and policy.chunk_ms == 400.0
    assert policy.name == "every_chunk_one_unit"


def test_an_entry_point_joins_the_registry_and_the_listing(entry_point, capsys):
    assert policies.registry()[entry_point] is EveryChunkOneUnit
    assert isinstance(policies.make(entry_point), EveryChunkOneUnit)
    assert cli.main(["policies"]) == 0
    assert "every_chunk " in capsys.readouterr().out
    assert cli.main(["policies", entry_point]) == 0
    assert "chunk_ms=500.0" in capsys.readouterr().out


def test_an_entry_point_may_not_take_a_name_of_simul(tmp_path, monkeypatch):
    install(tmp_path, monkeypatch, "bad", f"offline = {PLUGIN}")
    with pytest.raises(ValueError, match="entry point 'offline' .* simul has a policy of that"):
        policies.registry()


def test_the_setting_legend_reads_the_field_comments(capsys):
    assert cli.main(["policies", PLUGIN]) == 0
    out = capsys.readouterr().out
    assert "every_chunk_one_unit — an example" in out
    assert "chunk_ms=500.0" in out and "ms of audio read between two writes" in out
    assert cli.main(["policies", "wait_k_frames"]) == 0
    assert "frames (10 ms) read before the first write" in capsys.readouterr().out


@pytest.mark.parametrize(("name", "message"), [
    ("tests.plugin_policy", "unknown policy 'tests.plugin_policy'"),
    ("tests.plugin_policy:", "expected module:Class"),
    ("tests.no_such_module:X", "cannot import 'tests.no_such_module'"),
    ("tests.plugin_policy:Missing", "has no 'Missing'"),
    ("tests.plugin_policy:NotAPolicy", "is not a policy"),
    ("tests.plugin_policy:Nameless", "has no name"),
    ("/nowhere/policy.py:X", "no file"),
])
def test_a_bad_policy_name_is_one_clear_line(name, message, capsys, tmp_path):
    out = tmp_path / "r.jsonl"
    assert cli.main(["decode", "--model", "blstm_char_en-es", "--policy", name,
                     "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("simul: error: ") and message in err and err.count("\n") == 1
    assert not out.exists()


def test_a_plugin_decodes_like_any_policy(tiny_model_dir, corpus):
    from simul.corpus import load_list
    from simul.models.loader import load

    segment = load_list(corpus, PAIR, SPLIT, limit=1)[0]
    record = simulate(load(tiny_model_dir), policies.make(PLUGIN, {"chunk_ms": "300"}), segment)
    assert record.policy == "every_chunk_one_unit" and record.settings == {"chunk_ms": 300.0}
    # before the end of the source: decisions at multiples of 300 ms, one unit a chunk
    early = [(ms, n) for ms, n in record.trace if ms < record.source_length]
    assert early and all(math.isclose(ms % 300.0, 0.0, abs_tol=1e-6) for ms, _ in early)
    assert sum(n for ms, n in early if ms == early[0][0]) == 1


def test_a_sweep_runs_a_plugin_and_stores_it_with_its_source(tiny_model_dir, corpus, tmp_path):
    spec = {"models": [str(tiny_model_dir)], "pair": PAIR, "splits": [SPLIT],
            "corpus": str(corpus), "output": str(tmp_path / "out"), "max_utterances": 2,
            "policies": [{"policy": PLUGIN, "grid": {"chunk_ms": [300, 600]}}]}
    table = sweep.run(spec, workers=1, progress=False)
    assert list(table["policy"]) == [PLUGIN, PLUGIN]
    records = sorted((tmp_path / "out" / "records").rglob("*.jsonl"))
    assert len(records) == 2
    assert {json.loads(line)["policy"] for f in records for line in f.read_text().splitlines()} \
        == {"every_chunk_one_unit"}
    from simul.sweep.runner import _policy_key

    digest = policies.source_digest(PLUGIN)
    assert _policy_key(PLUGIN) == f"{PLUGIN}@{digest}" and len(digest) == 64
    assert policies.source_digest("offline") is None  # simul's own: the store follows it
    with pytest.raises(sweep.SweepError, match=r"'policies'\[0\]\.policy: .*has no 'Nope'"):
        sweep.run({**spec, "policies": [{"policy": "tests.plugin_policy:Nope"}]},
                  workers=1, progress=False)


def test_policy_is_the_base_of_the_plugin():
    assert issubclass(EveryChunkOneUnit, Policy)
