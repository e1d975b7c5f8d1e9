"""CHANGELOG.md's releases, the package's version and the deprecation of the moved import
names say the same thing."""

import re
import subprocess
import sys
import tomllib
from datetime import date
from pathlib import Path

import simul

ROOT = Path(__file__).resolve().parents[1]
HEADING = re.compile(r"^## \[(.+?)\](?: — (\S+))?$", re.MULTILINE)


def _sections() -> list[tuple[str, str | None, str]]:
    """(version, date or None, text) of each ``##`` section, in the file's order."""
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    heads = list(HEADING.finditer(text))
    return [(m[1], m[2], text[m.end():nxt.start() if nxt else len(text)])
            for m, nxt in zip(heads, heads[1:] + [None], strict=True)]


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def test_releases_newest_first_each_dated():
    sections = _sections()
    assert sections[0][:2] == ("Unreleased", None)
    released = sections[1:]
    assert [v for v, _, _ in released][-1] == "0.1.0"
    versions = [_version(v) for v, _, _ in released]
    assert versions == sorted(versions, reverse=True) and len(set(versions)) == len(versions)
    dates = [date.fromisoformat(d) for _, d, _ in released]  # a missing date fails here
    assert dates == sorted(dates, reverse=True)


def test_the_package_says_the_newest_release():
    newest = _sections()[1][0]
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert simul.__version__ == pyproject["project"]["version"] == newest


def test_old_import_names_warn_of_the_release_the_changelog_names():
    run = subprocess.run([sys.executable, "-W", "always::DeprecationWarning", "-c",
                          "import simul.level"], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert ("DeprecationWarning: simul.level moved to simul.decoding.level; the old name "
            "goes in simul 0.8.0") in run.stderr
    unreleased = _sections()[0][2]
    deprecated = unreleased.split("### Deprecated")[1].split("###")[0]
    assert "`simul.session`" in deprecated and "go in 0.8.0." in deprecated
    assert _version("0.8.0") > _version(simul.__version__)
