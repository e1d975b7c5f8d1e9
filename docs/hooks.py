"""mkdocs hooks (``hooks:`` in mkdocs.yml): the pages made from files outside ``docs/``.

Before each build, written under ``docs/`` (git-ignored, rewritten only when they change,
so that ``mkdocs serve`` does not rebuild in a loop):

- ``guide.md``: the repository's README.md, the user's guide, its links into ``docs/``
  made relative to the site;
- ``changelog.md``: CHANGELOG.md, likewise;
- ``notebooks/index.md``: notebooks/README.md (which notebook pairs with which module);
- ``notebooks/<name>.ipynb``: each notebook of ``notebooks/``, its executed copy from
  ``notebooks/executed/`` (written by ``make reproduce`` or ``simul reproduce``) where there
  is one, else the committed notebook, which has no outputs. mkdocs-jupyter renders them
  as they are and never executes them, so the site builds on a fresh clone.

And after each page is rendered, the Sphinx roles that simul's docstrings use
(``:func:`simul.x.f```) lose their role name in the API pages: the name stays as code.
"""

from __future__ import annotations

import re
from pathlib import Path

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


def notebook_sources(root: Path) -> dict[str, Path]:
    """Each notebook's page source: {file name: executed copy if present, else committed}."""
    sources = {}
    for committed in sorted((root / "notebooks").glob("*.ipynb")):
        executed = root / "notebooks" / "executed" / committed.name
        sources[committed.name] = executed if executed.is_file() else committed
    return sources


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
    for name, source in sources.items():
        _write(out / name, source.read_bytes())
    for stale in out.glob("*.ipynb"):
        if stale.name not in sources:
            stale.unlink()


def on_page_content(html: str, **kwargs) -> str:
    return _ROLE.sub(r"\1", html)
