"""docs/hooks.py: which executed copy each notebook's page shows (a full run's, else a quick
run's, else none: make docs runs those in quick mode first) and the note that says which."""

import importlib.util
import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _notebook(path: Path, *, quick: bool | None = None, exception: bool | None = None,
              outputs: str = "") -> Path:
    """A notebook: a title cell and a code cell; executed by papermill (its metadata) unless
    ``quick`` is None."""
    meta = {"kernelspec": {"name": "python3"}}
    if quick is not None:
        meta["papermill"] = {"parameters": {"quick": quick, "figures_dir": "x"},
                             "exception": exception, "end_time": "2026-01-02T03:04:05"}
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# Title"]},
             {"cell_type": "code", "metadata": {}, "execution_count": None, "source": ["1"],
              "outputs": [{"output_type": "stream", "name": "stdout", "text": [outputs]}]
              if outputs else []}]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cells": cells, "metadata": meta, "nbformat": 4,
                                "nbformat_minor": 5}))
    return path


@pytest.fixture
def repo(tmp_path):
    """Four notebooks: a (full run), b (a quick run in notebooks/executed/), c (a full run that
    failed, and a quick run in notebooks/quick/), d (never run)."""
    for name in "abcd":
        _notebook(tmp_path / "notebooks" / f"{name}.ipynb")
    _notebook(tmp_path / "notebooks" / "executed" / "a.ipynb", quick=False, outputs="full")
    _notebook(tmp_path / "notebooks" / "executed" / "b.ipynb", quick=True, outputs="quick")
    _notebook(tmp_path / "notebooks" / "executed" / "c.ipynb", quick=False, exception=True)
    _notebook(tmp_path / "notebooks" / "quick" / "c.ipynb", quick=True, outputs="quick")
    return tmp_path


def test_each_page_takes_a_full_run_else_a_quick_run(hooks, repo):
    sources = hooks.notebook_sources(repo)
    nb = repo / "notebooks"
    assert sources == {"a.ipynb": (nb / "executed" / "a.ipynb", "full"),
                       "b.ipynb": (nb / "executed" / "b.ipynb", "quick"),
                       "c.ipynb": (nb / "quick" / "c.ipynb", "quick"),
                       "d.ipynb": (nb / "d.ipynb", "none")}
    assert hooks.missing(repo) == ["d"]
    # a full run in notebooks/executed/ wins over a quick run in notebooks/quick/
    _notebook(nb / "quick" / "a.ipynb", quick=True)
    assert hooks.notebook_sources(repo)["a.ipynb"][1] == "full"


def test_the_page_says_which_run(hooks, repo, caplog):
    docs = repo / "docs"
    config = {"docs_dir": str(docs), "config_file_path": str(repo / "mkdocs.yml")}
    for name in ("README.md", "CHANGELOG.md", "notebooks/README.md"):
        (repo / name).write_text("text\n")
    with caplog.at_level(logging.INFO, logger="mkdocs.hooks.simul"):
        hooks.on_pre_build(config)
    pages = {name: json.loads((docs / "notebooks" / f"{name}.ipynb").read_text())
             for name in "abcd"}
    notes = {name: "".join(nb["cells"][1]["source"]) for name, nb in pages.items()}
    assert notes["a"].startswith("> **Outputs of a full run** (`make reproduce`")
    assert "as executed on 2026-01-02" in notes["a"]
    assert notes["b"].startswith("> **Outputs of a quick run**") and "not what the paper" in \
        notes["b"]
    assert notes["d"].startswith("> **No outputs**")
    # the title first, the note, then the notebook as it was (its outputs)
    assert pages["a"]["cells"][0]["source"] == ["# Title"]
    assert pages["a"]["cells"][2]["outputs"][0]["text"] == ["full"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["notebook pages without outputs: d (make docs runs them in quick mode "
                        "first; make reproduce runs them in full)"]
    infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    assert "notebook pages with a full run's outputs (notebooks/executed/): a" in infos
    assert "notebook pages with a quick run's outputs: b, c" in infos


def test_make_docs_runs_the_missing_notebooks_quick_where_the_hook_looks(hooks):
    makefile = (ROOT / "Makefile").read_text()
    target = makefile.split("\ndocs:")[1].split("\n\n")[0]
    assert "$(PY) docs/hooks.py missing" in target
    assert f"reproduce --quick --only $$missing --executed {hooks.QUICK.as_posix()}" in target
    assert target.index("reproduce --quick") < target.index("mkdocs build --strict")
    run = subprocess.run([sys.executable, str(ROOT / "docs" / "hooks.py"), "missing"],
                         capture_output=True, text=True, check=True)
    assert run.stdout.split() == hooks.missing(ROOT)


def test_the_site_keeps_names_whole_in_tables():
    """The site's stylesheet (mkdocs.yml's extra_css) stops Material's break-anywhere in
    table cells and their code: "wait_k_frames", not "wait_k_fram es"."""
    import re

    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text().split("\nnav:")[0])
    (sheet,) = config["extra_css"]
    css = re.sub(r"/\*.*?\*/", "", (ROOT / "docs" / sheet).read_text(), flags=re.S)
    rules = {" ".join(selector.split()): dict(
        (k.strip(), v.strip()) for k, v in (d.split(":") for d in body.split(";") if d.strip()))
        for selector, body in re.findall(r"([^{}]+)\{([^}]*)\}", css)}
    cells = rules[".md-typeset table td, .md-typeset table th"]
    assert cells["overflow-wrap"] == "normal" and cells["word-break"] == "normal"
    assert rules[".md-typeset table code"]["word-break"] == "normal"
