"""``simul reproduce`` options, without running a kernel: what reaches papermill; each
notebook paired with its module."""

from __future__ import annotations

import importlib
import json

import papermill
import pytest

from simul.commands import reproduce
from simul.commands.cli import build_parser


@pytest.fixture
def executed(monkeypatch):
    calls = []
    monkeypatch.setattr(papermill, "execute_notebook",
                        lambda src, out, parameters, **kw: calls.append((out, parameters)))
    return calls


def test_max_utterances_reaches_every_notebook_and_runs_apart(tmp_path, executed):
    reproduce.run(["nguyen2021", "han2020"], max_utterances=7, figures_dir=tmp_path / "f",
                  executed_dir=tmp_path / "e", runs_dir=tmp_path / "r", log=lambda *_: None)
    assert [p["max_utterances"] for _, p in executed] == [7, 7]
    assert [p["runs_dir"] for _, p in executed] == [
        str((tmp_path / "r" / "n7" / "nguyen2021").resolve()),
        str((tmp_path / "r" / "n7" / "han2020").resolve())]
    assert not any(p["quick"] for _, p in executed)


def test_full_run_keeps_each_notebooks_own_count(tmp_path, executed):
    reproduce.run(["polak2022"], figures_dir=tmp_path / "f", executed_dir=tmp_path / "e",
                  runs_dir=tmp_path / "r", log=lambda *_: None)
    (_, params), = executed
    assert "max_utterances" not in params
    assert params["runs_dir"].endswith("/r/full/polak2022")


def test_each_notebooks_wall_time_is_saved_beside_its_runs(tmp_path, executed):
    runs = tmp_path / "r" / "full"
    runs.mkdir(parents=True)
    (runs / "seconds.json").write_text('{"tutorial": 12.5, "polak2022": 99}')  # a run before
    reproduce.run(["polak2022", "han2020"], figures_dir=tmp_path / "f",
                  executed_dir=tmp_path / "e", runs_dir=tmp_path / "r", log=lambda *_: None)
    times = json.loads((runs / "seconds.json").read_text())
    assert set(times) == {"tutorial", "polak2022", "han2020"} and times["tutorial"] == 12.5
    assert 0 <= times["polak2022"] < 99 and 0 <= times["han2020"] < 99  # papermill stubbed


@pytest.mark.parametrize("kwargs", [{"max_utterances": 0},
                                    {"max_utterances": 5, "quick": True}])
def test_bad_max_utterances_is_refused_before_any_notebook(tmp_path, executed, kwargs):
    with pytest.raises(ValueError, match="max_utterances"):
        reproduce.run(["tutorial"], runs_dir=tmp_path, log=lambda *_: None, **kwargs)
    assert executed == []


def test_cli_passes_max_utterances():
    args = build_parser().parse_args(["reproduce", "--max-utterances", "12", "--only",
                                      "ma2020"])
    assert args.max_utterances == 12 and args.only == ["ma2020"]


def test_bad_jobs_is_refused_before_any_notebook(tmp_path, executed):
    with pytest.raises(ValueError, match="jobs"):
        reproduce.run(["tutorial"], runs_dir=tmp_path, jobs=0, log=lambda *_: None)
    assert executed == []


def test_quick_run_with_one_job_decodes_in_the_kernel(tmp_path, executed):
    reproduce.run(["tutorial", "ma2020"], quick=True, jobs=1, figures_dir=tmp_path / "f",
                  executed_dir=tmp_path / "e", runs_dir=tmp_path / "r", log=lambda *_: None)
    assert [(p["quick"], p["workers"]) for _, p in executed] == [(True, 1), (True, 1)]
    assert [out.name for out, _ in executed] == ["tutorial.ipynb", "ma2020.ipynb"]


def test_cli_passes_jobs():
    args = build_parser().parse_args(["reproduce", "--quick", "--jobs", "2"])
    assert args.jobs == 2 and args.quick


def test_model_reaches_each_notebooks_model_parameter(tmp_path, executed):
    reproduce.run(["nguyen2021", "polak2022"], model="facebook/s2t-small-mustc-en-de-st",
                  corpus=str(tmp_path), figures_dir=tmp_path / "f",
                  executed_dir=tmp_path / "e", runs_dir=tmp_path / "r", log=lambda *_: None)
    (_, n21), (_, k22) = executed
    assert n21["char_model"] == k22["model"] == "facebook/s2t-small-mustc-en-de-st"
    assert "model" not in n21 and n21["corpus"] == k22["corpus"] == str(tmp_path.resolve())


def test_model_for_a_notebook_of_several_models_is_refused_first(tmp_path, executed):
    with pytest.raises(ValueError, match=r"^--model: papi2022 compare several models"):
        reproduce.run(["polak2022", "papi2022"], model="x/y", runs_dir=tmp_path,
                      log=lambda *_: None)
    assert executed == []


def test_a_parameters_file_sets_the_parameters_each_notebook_has(tmp_path, executed):
    path = tmp_path / "p.yaml"
    path.write_text("pair: en-fr\nrules: [LA-2]\n")
    reproduce.main_reproduce(["ma2020", "polak2022"], quick=False, figures_dir=str(tmp_path),
                             executed_dir=str(tmp_path / "e"), runs_dir=str(tmp_path / "r"),
                             corpus=None, dask_scheduler=None, jobs=1,
                             parameters_file=str(path))
    (_, m20), (_, k22) = executed
    assert m20["pair"] == k22["pair"] == "en-fr"
    assert k22["rules"] == ["LA-2"] and "rules" not in m20  # ma2020 has no rules
    path.write_text("pairs: {en-fr: [x/y]}\n")
    with pytest.raises(ValueError, match=rf"^--parameters {path}: no parameter 'pairs' in "
                                         r"ma2020, polak2022"):
        reproduce.main_reproduce(["ma2020", "polak2022"], quick=False, figures_dir=None,
                                 executed_dir=None, runs_dir=str(tmp_path), corpus=None,
                                 dask_scheduler=None, jobs=1, parameters_file=str(path))
    path.write_text("- a list\n")
    with pytest.raises(ValueError, match=rf"^--parameters {path}: expected a mapping"):
        reproduce.read_parameters(path)


def test_cli_passes_model_and_parameters():
    args = build_parser().parse_args(["reproduce", "--only", "polak2022", "--model", "o/r",
                                      "--parameters", "p.yaml"])
    assert (args.model, args.parameters) == ("o/r", "p.yaml")


@pytest.mark.parametrize("nb", reproduce.NOTEBOOKS, ids=lambda nb: nb.name)
def test_each_notebook_pairs_with_its_module(nb):
    assert (reproduce.NOTEBOOKS_DIR / nb.file).is_file()
    assert nb.file == f"{nb.name}.ipynb" and nb.module.rsplit(".", 1)[1] == nb.name
    module = importlib.import_module(nb.module)
    assert isinstance(module.KNOWN_GAPS, dict)
    # --model sets a parameter of the notebook's parameters cell
    assert nb.model_param is None or nb.model_param in reproduce.notebook_parameters(nb)
    cells = json.loads((reproduce.NOTEBOOKS_DIR / nb.file).read_text())["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    parameters = [c for c in cells if "parameters" in c["metadata"].get("tags", [])]
    assert len(parameters) == 1, f"{nb.file}: one papermill parameters cell"
    assert any(f"import {nb.name}" in src for src in code), f"{nb.file} imports no {nb.module}"
    assert any("notebook.setup(" in src for src in code), f"{nb.file}: no notebook.setup"
    assert all(not c.get("outputs") for c in cells if c["cell_type"] == "code"), \
        f"{nb.file} is committed with outputs"


def test_known_gaps_gather_every_module_and_refuse_a_claim_listed_twice(monkeypatch):
    from simul.papers import han2020, ma2020, nguyen2021, papi2022, polak2022

    gaps = reproduce.known_gaps()
    expected = {}
    for module in (nguyen2021, papi2022, ma2020, polak2022, han2020):
        expected.update(module.KNOWN_GAPS)
    assert gaps == expected and {"N21-BPE", "K22-LA2-best", "M20-CA"} <= set(gaps)
    assert all(isinstance(reason, str) and reason for reason in gaps.values())
    # the confirmatory run's gaps: modules without CONFIRMED_GAPS have none
    confirmed = reproduce.known_gaps(stage="confirm")
    # K22-3x, contradicted at the 2 s chunk, now reads the paper's 1 s point: none yet
    assert confirmed == polak2022.CONFIRMED_GAPS == {}
    assert not set(confirmed) & set(gaps)  # a claim the first run decided is not taken again
    twice = reproduce.NOTEBOOKS[1], reproduce.NOTEBOOKS[1]
    with pytest.raises(ValueError, match="listed by another"):
        reproduce.known_gaps(twice)


def test_claims_summary_prints_every_verdict_and_counts_them(tmp_path):
    from simul.analysis.claims import Claim, Evidence, report

    report([Claim.measured("N21-AL-k", "AL grows with k", Evidence(300.0, 120.0, 480.0, 40,
                                                                   "greater")),
            Claim.measured("N21-offline", "offline best", Evidence(-0.5, -2.5, 1.5, 40,
                                                                   "greater")),
            Claim.measured("N21-par", "offline on par", Evidence(-0.5, -2.5, 1.5, 40,
                                                                 "greater", margin=1.0))],
           tmp_path / "nguyen2021")
    report([Claim("P22-CA", "CA ≥ NCA", False, "one setting below")], tmp_path / "papi2022")
    table = reproduce.claims_summary(tmp_path)
    assert table.values.tolist() == [
        ["nguyen2021", "N21-AL-k", "superiority", "holds", "+300.0 [+120.0, +480.0]", 40, ""],
        # half-width 2 for an effect 0.5 from 0: at 80 % power 40 · (1.4294 · 4)² = 1307.6
        # segments (640 at even odds)
        ["nguyen2021", "N21-offline", "superiority", "undecided", "-0.5 [-2.5, +1.5]", 40,
         1308],
        # and 0.5 from the margin's −1: as many
        ["nguyen2021", "N21-par", "non-inferiority", "undecided", "-0.5 [-2.5, +1.5]", 40,
         1308],
        ["papi2022", "P22-CA", "property", "contradicted", "", "", ""]]
    assert reproduce.verdict_counts(table) == "1 hold, 1 contradicted, 2 undecided"


@pytest.mark.parametrize("nb", reproduce.NOTEBOOKS, ids=lambda nb: nb.name)
def test_papermill_reads_every_parameter_with_its_help(nb, caplog):
    # papermill's own reading of the parameters cell (`papermill --help-notebook`, the help
    # the documentation shows) names every parameter the cell assigns; a line it cannot read
    # (two "=" in a line, one in its comment) drops its help with a warning
    with caplog.at_level("WARNING", logger="papermill"):
        found = papermill.inspect_notebook(str(reproduce.NOTEBOOKS_DIR / nb.file))
    assert list(found) == reproduce.notebook_parameters(nb)
    assert not [r.getMessage() for r in caplog.records if "Unable to parse" in r.getMessage()]
