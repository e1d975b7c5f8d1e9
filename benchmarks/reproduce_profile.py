"""Where a ``simul reproduce`` run spent its time, and how much of it was decoded twice.

    python benchmarks/reproduce_profile.py [RUNS] [--top 25]

``RUNS`` is a run's sweep folder (default ``runs/full``; ``runs/n160`` after ``simul
reproduce --max-utterances 160``). It reads

- ``RUNS/seconds.json``: each notebook's wall time (written by ``simul reproduce``);
- every sweep journal under ``RUNS/<notebook>/``: each record's wall seconds, decoded in a
  pool worker (None when it came from the record store).

and prints, per notebook, its wall time, the decoding seconds (summed over workers, so up
to ``cores`` × wall) and the rest; then the decoding seconds per (model, policy); then the
decodes of a (model, split, segment, policy, full settings) that another sweep of the run
also decoded or took from the store — the work the record store saves. With the store on,
a repeated decode shows up as ``from store``; run ``simul reproduce --no-store`` to see
what every notebook would decode by itself.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import pandas as pd


def journal_rows(runs: Path) -> pd.DataFrame:
    """One row per record of every journal under ``runs/<notebook>/``."""
    rows = []
    for path in sorted(runs.glob("*/**/journal/*/*.jsonl")):
        parts = path.relative_to(runs).parts
        notebook, sweep = parts[0], "/".join(parts[:parts.index("journal")])
        for line in path.read_text().splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn last line
            seconds = entry.get("seconds") or [None] * len(entry["records"])
            stored = entry.get("from_store") or [False] * len(entry["records"])
            for rec, sec, hit in zip(entry["records"], seconds, stored, strict=True):
                rows.append({"notebook": notebook, "sweep": sweep, "model": rec["model"],
                         "split": path.stem,
                             "segment": rec["segment_id"], "policy": rec["policy"],
                             "settings": json.dumps(rec["settings"], sort_keys=True),
                             "seconds": sec, "from_store": bool(hit)})
    return pd.DataFrame(rows)


def profile(runs: Path, top: int = 25) -> None:
    rows = journal_rows(runs)
    walls = {}
    if (runs / "seconds.json").is_file():
        walls = json.loads((runs / "seconds.json").read_text())
    if rows.empty:
        raise SystemExit(f"{runs}: no sweep journals under it (run simul reproduce first)")
    rows["decoded"] = rows.seconds.notna()
    per_nb = rows.groupby("notebook").agg(records=("policy", "size"),
                                          decoded=("decoded", "sum"),
                                          from_store=("from_store", "sum"),
                                          decode_s=("seconds", "sum"))
    per_nb["wall_s"] = pd.Series(walls)
    order = [n for n in walls if n in per_nb.index] + [n for n in per_nb.index
                                                       if n not in walls]
    per_nb = per_nb.reindex(order)
    print(f"## {runs}: per notebook (decode_s summed over pool workers)")
    print(per_nb.to_string(float_format=lambda x: f"{x:.0f}"))
    total_wall = sum(walls.values())
    print(f"total wall {total_wall:.0f} s ({total_wall / 60:.1f} min), decoding "
          f"{rows.seconds.sum():.0f} worker-seconds, "
          f"{int(rows.decoded.sum())} decodes, {int(rows.from_store.sum())} from the store")

    print("\n## decoding seconds per (model, policy)")
    by = (rows.groupby(["model", "policy"]).agg(decodes=("decoded", "sum"),
                                               seconds=("seconds", "sum"))
          .sort_values("seconds", ascending=False))
    by["per_decode_s"] = by.seconds / by.decodes.clip(lower=1)
    by["share"] = by.seconds / by.seconds.sum()
    print(by.head(top).to_string(float_format=lambda x: f"{x:.2f}"))

    print("\n## the same (model, split, segment, policy, settings) in several sweeps")
    key = ["model", "split", "segment", "policy", "settings"]
    seen = rows.groupby(key).sweep.nunique()
    repeated = rows.set_index(key).loc[seen[seen > 1].index].reset_index()
    if repeated.empty:
        print("none")
        return
    # the first sweep (in run order) to meet a key pays for it; later ones repeat it
    rank = {n: i for i, n in enumerate(order)}
    repeated["rank"] = repeated.notebook.map(rank)
    repeated = repeated.sort_values(["rank", "sweep"], kind="stable")
    later = repeated[repeated.duplicated(key, keep="first")]
    first_cost = repeated.drop_duplicates(key).set_index(key).seconds
    saved = later.join(first_cost.rename("first_s"), on=key)
    saved["repeat_s"] = saved.seconds.fillna(saved.first_s)
    pairs = defaultdict(float)
    for r in saved.itertuples():
        pairs[(r.sweep, r.policy)] += r.repeat_s or 0.0
    print(f"{len(later)} decodes repeat another sweep's; decoding them costs "
          f"{saved.repeat_s.sum():.0f} worker-seconds "
          f"({saved.from_store.sum()} of them were taken from the store in this run)")
    table = pd.Series(pairs, name="repeat_s").sort_values(ascending=False)
    table.index.names = ["sweep", "policy"]
    print(table.head(top).to_frame().to_string(float_format=lambda x: f"{x:.0f}"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="?", default="runs/full", type=Path)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    profile(args.runs, args.top)


if __name__ == "__main__":
    main()
