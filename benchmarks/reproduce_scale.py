"""``make reproduce`` at its default sizes against an earlier commit's, timed in one run.

    python benchmarks/reproduce_scale.py --baseline REF [--only NAME ...] [--workdir DIR]

Runs, one after the other on this machine:

1. the baseline: commit ``REF`` checked out as a git worktree, ``simul reproduce`` with that
   commit's code, notebooks and models at their default sizes (its kernels import the
   worktree's ``simul``, through ``PYTHONPATH``; the corpus is this checkout's);
2. this tree: ``simul reproduce`` at its default sizes, with an empty record store of its
   own (``SIMUL_STORE`` in the work folder: what one notebook decodes, another may reuse;
   nothing comes from earlier runs).

It prints each notebook's segments (its ``max_utterances`` parameter) and wall time in both,
the ratio of segments and of time, and the totals. Nothing is asserted: the issue's bar
(4× the segments in ≤ 1.25× the time) is read off the last lines. Both runs share the
machine's state (nothing else should run); each takes tens of minutes on two cores.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from simul.commands import reproduce as reproduce_module

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = tuple(nb.name for nb in reproduce_module.NOTEBOOKS)


def default_sizes(tree: Path) -> dict[str, int]:
    """Each notebook's ``max_utterances`` default, from its parameters cell."""
    sizes = {}
    for name in NOTEBOOKS:
        path = tree / "notebooks" / f"{name}.ipynb"
        if not path.is_file():
            continue
        cells = json.loads(path.read_text())["cells"]
        for cell in cells:
            if "parameters" in cell.get("metadata", {}).get("tags", []):
                found = re.search(r"^max_utterances\s*=\s*(\d+)", "".join(cell["source"]), re.M)
                if found:
                    sizes[name] = int(found.group(1))
    return sizes


def reproduce(tree: Path, out: Path, only: list[str], env: dict[str, str]) -> dict[str, float]:
    """``simul reproduce`` in ``tree`` writing to ``out``; notebook → wall seconds (from its
    ``[name] N s`` lines)."""
    cmd = [sys.executable, "-m", "simul", "reproduce", "--figures", str(out / "figures"),
           "--executed", str(out / "executed"), "--runs", str(out / "runs"),
           "--corpus", str(REPO / "data" / "mini")]
    if only:
        cmd += ["--only", *only]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=tree, env=env, text=True, capture_output=True)
    wall = time.perf_counter() - t0
    (out / "reproduce.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode:
        raise SystemExit(f"{tree}: simul reproduce failed ({proc.returncode}); its output is "
                         f"in {out / 'reproduce.log'}")
    times = {m.group(1): float(m.group(2))
             for m in re.finditer(r"^\[(\w+)\] (\d+) s →", proc.stdout, re.M)}
    times["(all, with setup)"] = wall
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", required=True, help="git commit or tag to compare with")
    parser.add_argument("--only", nargs="+", default=[], metavar="NAME")
    parser.add_argument("--workdir", type=Path, default=None,
                        help="where both runs write (default: a temporary folder, removed)")
    args = parser.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="simul-scale-"))
    worktree = work / "baseline-tree"
    subprocess.run(["git", "worktree", "add", "--detach", str(worktree), args.baseline],
                   cwd=REPO, check=True, capture_output=True)
    try:
        base_env = {**os.environ, "PYTHONPATH": str(worktree), "SIMUL_STORE": "off"}
        new_env = {**os.environ, "PYTHONPATH": str(REPO),
                   "SIMUL_STORE": str(work / "store")}
        print(f"baseline {args.baseline} in {worktree} …", flush=True)
        base = reproduce(worktree, work / "baseline", args.only, base_env)
        print("this tree …", flush=True)
        new = reproduce(REPO, work / "new", args.only, new_env)
        sizes_base, sizes_new = default_sizes(worktree), default_sizes(REPO)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=REPO,
                       capture_output=True)
    print(f"\n{'notebook':18} {'segments':>17} {'seconds':>19} {'time ratio':>10}")
    for name in [*[n for n in NOTEBOOKS if n in base or n in new], "(all, with setup)"]:
        sb, sn = sizes_base.get(name), sizes_new.get(name)
        seg = f"{sb} → {sn}" if sb and sn else ""
        tb, tn = base.get(name), new.get(name)
        if tb is None or tn is None:
            continue
        print(f"{name:18} {seg:>17} {tb:8.0f} → {tn:8.0f} {tn / tb:9.2f}×")
    print(f"\nthis tree's run took {new['(all, with setup)'] / base['(all, with setup)']:.2f}× "
          f"the baseline's; outputs in {work}")
    if args.workdir is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
