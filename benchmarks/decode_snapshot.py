"""Records of ``simul decode`` for every policy on the first segments of every shipped model,
written to a folder, and a comparison of two such folders with timing fields left out.

A refactoring that should change no behaviour is checked with it: take a snapshot before,
one after, and compare::

    python benchmarks/decode_snapshot.py write /tmp/before [--segments 2]
    python benchmarks/decode_snapshot.py write /tmp/after
    python benchmarks/decode_snapshot.py compare /tmp/before /tmp/after

Every decode goes through the command line (``simul.commands.cli.main``), in one process so ESPnet
is
imported once. ``elapsed`` (compute time) and ``device`` are left out of the comparison, and
the wav paths are compared from the corpus root on.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from simul.commands.cli import main as simul

# the ordinary low-latency settings of every speech-translation policy, and offline
SETTINGS = [
    ("offline", []),
    ("offline", ["beam=5"]),
    ("wait_k_frames", ["k=100", "s=20", "n=2"]),
    ("wait_k_words", ["k=3", "detection=fixed"]),
    ("wait_k_words", ["k=3", "detection=adaptive"]),
    ("predecision", ["trigger=fixed", "step_ms=280", "k=3"]),
    ("predecision", ["trigger=word", "k=2"]),
    ("onlinization", ["chunk_ms=1000", "rule=la", "n=2", "beam=3"]),
    ("wait_k_catchup", ["k=3", "stride_ms=300", "catchup=0.25"]),
    ("alignatt", ["chunk_ms=500", "frames=2"]),
    ("edatt", ["chunk_ms=500", "alpha=0.3"]),
]
CASCADE_SETTINGS = [("cascade", ["k=3"]), ("cascade", ["k=1"])]
TIMING = ("elapsed", "device")


def _models() -> tuple[list[str], list[str]]:
    # read from the files, not simul's registry, so that the same script runs on a checkout
    # from before the registry existed
    models = Path(__file__).resolve().parents[1] / "data" / "models"
    translators, cascades = [], []
    for d in sorted(p for p in models.iterdir() if p.is_dir()):
        if (d / "cascade.json").is_file():
            cascades.append(d.name)
        elif (d / "simul.json").is_file() and json.loads(
                (d / "simul.json").read_text()).get("task", "st") == "st":
            translators.append(d.name)
    return translators, cascades


def write(out: Path, segments: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    translators, cascades = _models()
    jobs = [(m, p, s) for m in translators for p, s in SETTINGS]
    jobs += [(m, p, s) for m in cascades for p, s in CASCADE_SETTINGS]
    for model, policy, settings in jobs:
        name = "__".join([model, policy, *settings]) + ".jsonl"
        args = ["decode", "--model", model, "--policy", policy,
                "--max-utterances", str(segments), "--out", str(out / name)]
        for kv in settings:
            args += ["--set", kv]
        try:
            rc = simul(args)
        except (SystemExit, Exception) as e:  # a setting a model cannot run is recorded
            (out / (name + ".error")).write_text(f"{type(e).__name__}: {e}\n")
            continue
        if rc:
            (out / (name + ".error")).write_text(f"exit {rc}\n")


def _load(path: Path) -> list[dict]:
    """A snapshot's records less their timing; wav paths from the corpus root on (two
    checkouts read the same corpus from different folders)."""
    if path.suffix == ".error":
        return [{"error": path.read_text()}]
    out = []
    for line in path.read_text().splitlines():
        rec = {k: v for k, v in json.loads(line).items() if k not in TIMING}
        rec["source"] = [s.split("/data/", 1)[-1] for s in rec.get("source", [])]
        out.append(rec)
    return out


def compare(a: Path, b: Path) -> int:
    names_a = {p.name for p in a.iterdir()}
    names_b = {p.name for p in b.iterdir()}
    differ = sorted(names_a ^ names_b)
    differ += [n for n in sorted(names_a & names_b) if _load(a / n) != _load(b / n)]
    for n in differ:
        print(f"differs: {n}")
    print(f"{len(names_a & names_b) - len(differ) + len(names_a ^ names_b)} of "
          f"{len(names_a | names_b)} files identical (timing fields aside)")
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write")
    w.add_argument("out", type=Path)
    w.add_argument("--segments", type=int, default=2)
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = parser.parse_args(argv)
    if args.command == "write":
        write(args.out, args.segments)
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
