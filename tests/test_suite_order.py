"""The suite's own order and pytest-xdist groups (tests/conftest.py), on a small project of
tests whose groups and order are worked out by hand: quick checks first, a fixture wider than
a test made once, by one worker."""

import os
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
                mark = item.get_closest_marker("xdist_group")
                print("ITEM", item.nodeid, mark.args[0] if mark else "-")
        """,
    "test_a.py": """\
        import pytest


        @pytest.fixture(scope="module", params=["x", "y"])
        def per_param(request):
            return request.param


        @pytest.fixture
        def per_test():
            return 1


        @pytest.mark.slow
        def test_slow_single():
            pass


        def test_single(per_test):
            pass


        def test_uses_costly(costly):
            pass


        @pytest.mark.parametrize("n", [1, 2])
        def test_uses_param(per_param, n):
            pass
        """,
    "test_b.py": """\
        import pytest


        @pytest.mark.slow
        def test_slow_uses_costly(costly):
            pass


        def test_quick_uses_costly(costly):
            pass


        def test_quick():
            pass
        """,
}


@pytest.fixture
def project(tmp_path):
    for name, text in PROJECT.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    return tmp_path


def _pytest(project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=project, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": os.pathsep.join(
                              [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
                              "OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"})


def test_quick_checks_first_and_groups_by_shared_fixture(project):
    done = _pytest(project, "--collect-only", "-q", "-s")
    assert done.returncode == 0, done.stdout + done.stderr
    items = [line.split()[1:] for line in done.stdout.splitlines() if line.startswith("ITEM ")]
    assert items == [
        # quick: single tests, and the groups with no slow test (per parameter of the fixture)
        ["test_a.py::test_single", "-"],
        ["test_a.py::test_uses_costly", "test_a"],
        ["test_a.py::test_uses_param[x-1]", "test_a-per_param0"],
        ["test_a.py::test_uses_param[x-2]", "test_a-per_param0"],
        ["test_a.py::test_uses_param[y-1]", "test_a-per_param1"],
        ["test_a.py::test_uses_param[y-2]", "test_a-per_param1"],
        ["test_b.py::test_quick", "-"],
        # a group with a slow test, whole: its quick test with it
        ["test_b.py::test_slow_uses_costly", "test_b"],
        ["test_b.py::test_quick_uses_costly", "test_b"],
        # last, the single slow tests
        ["test_a.py::test_slow_single", "-"],
    ]


@pytest.mark.slow  # three interpreters that import torch (the conftest's)
def test_two_workers_make_a_shared_fixture_once_per_module(project):
    pytest.importorskip("xdist", reason="pytest-xdist (make setup installs it)")
    done = _pytest(project, "-q", "-n", "2", "--dist", "loadgroup", "--no-loadscope-reorder")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "10 passed" in done.stdout
    made = (project / "made.txt").read_text().split()
    assert len(made) == 2  # test_a's and test_b's, each once, though two tests use each
