"""mkdocs hooks (``hooks:`` in mkdocs.yml): the pages made from files outside ``docs/``.

Before each build, written under ``docs/`` (git-ignored, rewritten only when they change,
so that ``mkdocs serve`` does not rebuild in a loop):

- ``guide.md``: the repository's README.md, the user's guide, its links into ``docs/``
  made relative to the site;
- ``changelog.md``: CHANGELOG.md, likewise;
- ``notebooks/index.md``: notebooks/README.md (which notebook pairs with which module);
- ``notebooks/<name>.ipynb``: each notebook of ``notebooks/`` with its outputs
  (:func:`notebook_sources`): a full run's executed copy (``make reproduce`` writes them to
  ``notebooks/executed/``) where there is one, else a quick run's (``make docs`` runs the
  notebooks without any in quick mode first, into ``notebooks/quick/``: ``python
  docs/hooks.py missing`` names them), with a note at the top of the page that says which
  run the outputs come from. mkdocs-jupyter renders them as they are and never executes
  them. A notebook without outputs (neither run left one) is a warning, which fails
  ``mkdocs build --strict``: the site shows every notebook with its outputs.

And after each page is rendered, the Sphinx roles that simul's docstrings use
(``:func:`simul.x.f```) lose their role name in the API pages: the name stays as code.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.simul")

EXECUTED = Path("notebooks") / "executed"
"""A full run's executed notebooks (``make reproduce``), relative to the repository root."""

QUICK = Path("notebooks") / "quick"
"""Where ``make docs`` runs the notebooks that have no executed copy in quick mode."""

NOTES = {
    "full": "**Outputs of a full run** (`make reproduce`: every notebook on its own sample "
            "sizes), as executed on {date}.",
    "quick": "**Outputs of a quick run** (`simul reproduce --quick`: a handful of segments "
             "per split), executed on {date}: the numbers and figures show what the notebook "
             "does, not what the paper's setting measures, and most claims stay undecided. "
             "`make reproduce`, then `make docs`, shows the full run here.",
    "none": "**No outputs**: neither `make reproduce` nor `make docs`' quick run executed "
            "this notebook.",
}
"""The note at the top of each notebook's page: which run its outputs come from."""

# a Markdown link or image target that points into docs/ or at the changelog, relative to
# the repository root (as README.md and CHANGELOG.md write them)
_DOCS_LINK = re.compile(r"\]\(docs/")
_CHANGELOG_LINK = re.compile(r"\]\(CHANGELOG\.md")
_README_LINK = re.compile(r"\]\(README\.md")
# a Sphinx role before a code span, as mkdocstrings renders a docstring's :func:`~a.b`
_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|data|exc|obj|const):(<code>)~?")


def _write(path: Path, data: bytes) -> None:
    if path.exists() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def relink(markdown: str) -> str:
    """A Markdown file of the repository root, its links as seen from ``docs/``."""
    markdown = _DOCS_LINK.sub("](", markdown)
    markdown = _CHANGELOG_LINK.sub("](changelog.md", markdown)
    return _README_LINK.sub("](guide.md", markdown)


def run_kind(path: Path) -> str | None:
    """What run executed the notebook at ``path``, from papermill's metadata: "full", "quick"
    (its parameters say ``quick``), or None (no such file, not executed by papermill, or a
    run that failed in a cell: its outputs stop there)."""
    if not path.is_file():
        return None
    try:
        meta = json.loads(path.read_text(encoding="utf-8")).get("metadata", {})
    except (ValueError, UnicodeDecodeError):
        return None
    papermill = meta.get("papermill") if isinstance(meta, dict) else None
    if not isinstance(papermill, dict) or papermill.get("exception"):
        return None
    return "quick" if (papermill.get("parameters") or {}).get("quick") else "full"


def notebook_sources(root: Path) -> dict[str, tuple[Path, str]]:
    """Each notebook's page source and the run it comes from, {file name: (path, kind)}:
    a full run's copy in ``notebooks/executed/``; else a quick run's (``notebooks/quick/``,
    or a quick run written to ``notebooks/executed/``); else the committed notebook, "none"
    (no outputs)."""
    sources = {}
    for committed in sorted((root / "notebooks").glob("*.ipynb")):
        candidates = [root / EXECUTED / committed.name, root / QUICK / committed.name]
        kinds = [(path, run_kind(path)) for path in candidates]
        chosen = (next(((p, k) for p, k in kinds if k == "full"), None)
                  or next(((p, k) for p, k in kinds if k == "quick"), None)
                  or (committed, "none"))
        sources[committed.name] = chosen
    return sources


def missing(root: Path) -> list[str]:
    """The notebooks (names without .ipynb) that no run has executed: what ``make docs``
    runs in quick mode first."""
    return [Path(name).stem for name, (_, kind) in notebook_sources(root).items()
            if kind == "none"]


def with_note(notebook: bytes, kind: str) -> bytes:
    """The notebook with :data:`NOTES`' line for ``kind`` as a Markdown cell after its first
    (the title), dated by papermill's end time."""
    nb = json.loads(notebook)
    papermill = nb.get("metadata", {}).get("papermill") or {}
    date = str(papermill.get("end_time") or papermill.get("start_time") or "an unknown date")
    text = NOTES[kind].format(date=date[:10])
    cell = {"cell_type": "markdown", "metadata": {"tags": ["simul-docs-note"]},
            "source": [f"> {text}"]}
    if any("id" in c for c in nb["cells"]):  # nbformat 4.5: every cell has an id
        cell["id"] = "simul-docs-note"
    nb["cells"] = nb["cells"][:1] + [cell] + nb["cells"][1:]
    return (json.dumps(nb, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def on_pre_build(config, **kwargs) -> None:
    docs = Path(config["docs_dir"])
    root = Path(config["config_file_path"]).parent
    for name, page in (("README.md", "guide.md"), ("CHANGELOG.md", "changelog.md")):
        text = (root / name).read_text(encoding="utf-8")
        _write(docs / page, relink(text).encode("utf-8"))
    out = docs / "notebooks"
    readme = (root / "notebooks" / "README.md").read_text(encoding="utf-8")
    _write(out / "index.md", readme.encode("utf-8"))
    sources = notebook_sources(root)
    for name, (source, kind) in sources.items():
        _write(out / name, with_note(source.read_bytes(), kind))
    for stale in out.glob("*.ipynb"):
        if stale.name not in sources:
            stale.unlink()
    by_kind: dict[str, list[str]] = {}
    for name, (_, kind) in sources.items():
        by_kind.setdefault(kind, []).append(Path(name).stem)
    for kind, what in (("full", "a full run's outputs (notebooks/executed/)"),
                       ("quick", "a quick run's outputs")):
        if by_kind.get(kind):
            log.info("notebook pages with %s: %s", what, ", ".join(by_kind[kind]))
    if by_kind.get("none"):
        log.warning("notebook pages without outputs: %s (make docs runs them in quick mode "
                    "first; make reproduce runs them in full)", ", ".join(by_kind["none"]))


def on_page_content(html: str, **kwargs) -> str:
    return _ROLE.sub(r"\1", html)


if __name__ == "__main__":  # `python docs/hooks.py missing`, for make docs
    if sys.argv[1:] != ["missing"]:
        sys.exit("usage: python docs/hooks.py missing")
    print(" ".join(missing(Path(__file__).resolve().parents[1])))
