"""The README's Python snippets run as written (each in a fresh interpreter, from the
repository root), so the user's guide cannot drift from the code."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SNIPPETS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)

pytestmark = [pytest.mark.corpus, pytest.mark.slow]


def test_the_readme_has_python_snippets():
    assert len(SNIPPETS) >= 3


@pytest.mark.parametrize("code", SNIPPETS, ids=[f"snippet{i}" for i in range(len(SNIPPETS))])
def test_a_readme_snippet_runs(code):
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env={"OMP_NUM_THREADS": "1",
                                                       "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() or "print(" not in code  # what it prints, it prints
