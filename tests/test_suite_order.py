"""The suite's own order (tests/conftest.py) and `make test`'s pytest-xdist options, on a
small project whose order is worked out by hand: the longest module first, then quick checks,
the long modules, the other slow ones, and a module's shared fixture made once, by one worker."""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PROJECT = {
    "pytest.ini": """\
        [pytest]
        markers =
            slow: takes more than a few seconds
            longest: takes a worker for most of the suite
            long: takes a minute or more
        """,
    "conftest.py": """\
        import os
        from pathlib import Path

        import pytest

        from tests.conftest import pytest_collection_modifyitems  # noqa: F401  the one tested


        @pytest.fixture(scope="module")
        def costly():  # each time it is made, a line in made.txt
            with open(Path(__file__).parent / "made.txt", "a") as f:
                f.write(f"{os.getpid()}\\n")


        def pytest_collection_finish(session):
            for item in session.items:
                print("ITEM", item.nodeid)
        """,
    "test_a.py": """\
        import pytest


        @pytest.fixture(scope="module", params=["x", "y"])
        def per_param(request):
            return request.param


        @pytest.mark.slow
        def test_slow(costly):
            pass


        def test_quick_beside_a_slow_one():
            pass


        def test_uses_costly(costly):
            pass


        @pytest.mark.parametrize("n", [1, 2])
        def test_uses_param(per_param, n):
            pass
        """,
    "test_c.py": """\
        import pytest

        pytestmark = pytest.mark.longest


        def test_longest():
            pass
        """,
    "test_b.py": """\
        def test_quick(costly):
            pass


        def test_quick_too(costly):
            pass
        """,
    "test_0.py": """\
        import pytest

        pytestmark = pytest.mark.long


        def test_long():
            pass
        """,
}


@pytest.fixture
def project(tmp_path):
    for name, text in PROJECT.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    return tmp_path


def _pytest(project: Path, *args: str) -> subprocess.CompletedProcess:
    path = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=project, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": path, "OMP_NUM_THREADS": "1",
                               "PATH": "/usr/bin:/bin"})


def test_the_longest_module_then_those_without_a_slow_test_come_first(project):
    done = _pytest(project, "--collect-only", "-q", "-s")
    assert done.returncode == 0, done.stdout + done.stderr
    items = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("ITEM ")]
    assert items == [
        "test_c.py::test_longest",  # the longest module first, beside the others
        "test_b.py::test_quick",
        "test_b.py::test_quick_too",
        "test_0.py::test_long",  # a long module before the slow ones, though first by name
        # a module with a slow test: whole, in pytest's order (a module parameter's runs)
        "test_a.py::test_slow",
        "test_a.py::test_quick_beside_a_slow_one",
        "test_a.py::test_uses_costly",
        "test_a.py::test_uses_param[x-1]",
        "test_a.py::test_uses_param[x-2]",
        "test_a.py::test_uses_param[y-1]",
        "test_a.py::test_uses_param[y-2]",
    ]


def make_test_options() -> list[str]:
    """The options `make test` gives pytest, with two workers."""
    makefile = (ROOT / "Makefile").read_text()
    (line,) = re.findall(r"^\t\$\(PY\) -m pytest (.*)$", makefile.split("\ntest:")[1].split(
        "\n\n")[0], re.M)
    return line.replace("$(TEST_WORKERS)", "2").split()


@pytest.mark.slow  # three interpreters that import torch (the conftest's)
def test_make_tests_workers_make_a_modules_shared_fixture_once(project):
    pytest.importorskip("xdist", reason="pytest-xdist (make setup installs it)")
    options = make_test_options()
    assert options[:3] == ["-q", "-n", "2"]
    done = _pytest(project, *options)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "11 passed" in done.stdout
    made = (project / "made.txt").read_text().split()
    assert len(made) == 2  # test_a's and test_b's, each once, though each has two users
