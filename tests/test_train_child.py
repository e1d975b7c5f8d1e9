"""A stopped ``simul train`` does not leave its ESPnet trainer running.

The trainer is a child process (``simul.models.training.train.run_child``). Here the parent runs a
child that sleeps; the parent is then killed (SIGTERM as from ``kill``/``pkill``, and
SIGKILL) and the child must be gone within seconds."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

PARENT = """
import sys
from pathlib import Path
from simul.models.training.train import run_child
pidfile, log = Path(sys.argv[1]), Path(sys.argv[2])
child = "import os, time; open({!r}, 'w').write(str(os.getpid())); time.sleep(120)".format(
    str(pidfile))
run_child([sys.executable, "-c", child], log)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purpose (its parent, init, reaps it)
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.is_file() and stat.read_text().split(") ")[1].startswith("Z"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_killing_the_parent_ends_the_child(tmp_path, sig):
    pidfile = tmp_path / "child.pid"
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(pidfile), str(tmp_path / "log")])
    deadline = time.monotonic() + 60
    while not (pidfile.is_file() and pidfile.read_text()):
        assert time.monotonic() < deadline, "the child never started"
        assert parent.poll() is None, "the parent ended early"
        time.sleep(0.05)
    child = int(pidfile.read_text())
    assert _alive(child)
    parent.send_signal(sig)
    parent.wait(timeout=10)
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = _alive(child)
    if alive:
        os.kill(child, signal.SIGKILL)
    assert not alive, f"the child (pid {child}) outlived its parent killed by {sig.name}"
