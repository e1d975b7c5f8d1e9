"""Checks run at the end of `make setup`: the environment is the one simul was tested with."""

from __future__ import annotations

import importlib.metadata as md
import sys


def main() -> int:
    problems = []
    torch_version = md.version("torch")
    if not torch_version.startswith("2.13.0"):
        problems.append(f"torch {torch_version} installed, simul needs 2.13.0 (CPU build)")
    cuda = sorted(d.metadata["Name"] for d in md.distributions()
                  if d.metadata["Name"].lower().startswith(("nvidia-", "triton")))
    if cuda:
        problems.append(f"CUDA wheels were pulled in: {', '.join(cuda)}")
    from simul.models.espnet_env import import_espnet

    for module in ("espnet2.tasks.st", "espnet2.bin.st_inference"):
        try:
            import_espnet(module)
        except Exception as e:  # report every failure, then fail
            problems.append(f"cannot import {module}: {type(e).__name__}: {e}")
    for problem in problems:
        print(f"envcheck: {problem}", file=sys.stderr)
    if not problems:
        print(f"envcheck: ok (torch {torch_version}, espnet {md.version('espnet')})")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
