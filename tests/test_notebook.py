"""simul.papers.notebook: the spec tail, quick values, and setup refusing a missing model."""

import pytest

from simul import sweep
from simul.models import registry
from simul.papers import notebook


def test_spec_names_the_corpus_only_when_given():
    s = notebook.spec(("m",), "en-es", ("tst-COMMON",), "out", [{"policy": "offline"}],
                      max_utterances=3)
    assert s == {"models": ["m"], "pair": "en-es", "splits": ["tst-COMMON"], "output": "out",
                 "max_utterances": 3, "policies": [{"policy": "offline"}]}
    with_corpus = notebook.spec(["m"], "en-es", ["dev"], "o", [], corpus="/data/mustc")
    assert with_corpus["corpus"] == "/data/mustc" and with_corpus["max_utterances"] is None


def test_spec_is_a_valid_sweep_spec(tmp_path):
    s = notebook.spec(["m"], "en-es", ["tst-COMMON"], str(tmp_path), [{"policy": "offline"}])
    assert sweep.Spec.load(s).settings == [sweep.Setting("offline")]


@pytest.mark.parametrize("quick, expected", [(False, [1, 2, 3]), (True, [1])])
def test_choose_picks_the_quick_value_in_a_quick_run(tmp_path, quick, expected):
    nb = notebook.Notebook(tmp_path / "f", tmp_path / "r", quick=quick)
    assert nb.choose([1, 2, 3], [1]) == expected


def test_setup_fails_on_a_missing_model_and_names_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="no_such_model"):
        notebook.setup(tmp_path / "f", tmp_path / "r", models=["no_such_model"])


def test_setup_takes_a_model_directory_and_keeps_the_run_options(tmp_path):
    nb = notebook.setup(str(tmp_path / "f"), str(tmp_path / "r"), models=[tmp_path],
                        quick=True, workers=1)
    assert nb.figures == tmp_path / "f" and nb.runs == tmp_path / "r"
    assert nb.quick and nb.workers == 1 and nb.dask_scheduler is None


def test_missing_models_knows_the_shipped_ones(tmp_path):
    assert notebook.missing_models([*registry.shipped(), tmp_path, "nope"]) == ["nope"]


def test_setup_takes_one_model_name_as_one_model(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"\['no_such_model'\]"):
        notebook.setup(tmp_path / "f", tmp_path / "r", models="no_such_model")
