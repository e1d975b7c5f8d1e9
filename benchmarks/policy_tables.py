"""Policy tables from a finished sweep: per policy, BLEU / LAAL / LAAL_CA of each setting
on each model, next to that model's offline greedy BLEU.

    simul sweep benchmarks/policies_en-es.yaml
    python benchmarks/policy_tables.py [runs/policies_en-es]

Prints Markdown and writes ``tables/<policy>.md`` and ``.csv`` next to the summary.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from simul import sweep, tables

COLUMNS = ["model", "setting", "BLEU", "LAAL", "LAAL_CA", "CA_overhead_ms",
           "offline_greedy_BLEU", "utterances"]


def policy_tables(summary: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Policy name → its table (rows: model, setting)."""
    offline = summary[(summary.policy == "offline") & (summary.setting == "beam=1")]
    greedy = dict(zip(offline.model, offline.BLEU, strict=True))
    missing = sorted(set(summary.model) - set(greedy))
    if missing:
        raise SystemExit(f"no offline beam=1 row for {missing}: the sweep needs it")
    df = summary.assign(CA_overhead_ms=summary.LAAL_CA - summary.LAAL,
                        offline_greedy_BLEU=summary.model.map(greedy))
    return {policy: group[COLUMNS].reset_index(drop=True)
            for policy, group in df.groupby("policy", sort=False)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("output", nargs="?", default="runs/policies_en-es",
                    help="the sweep's output directory [%(default)s]")
    args = ap.parse_args(argv)
    summary = sweep.read_summary(args.output)
    splits = sorted(set(summary.split))
    for policy, table in policy_tables(summary).items():
        caption = (f"{policy}: {', '.join(splits)}, {int(table.utterances.max())} segments; "
                   "latencies in ms")
        tables.save(table, Path(args.output) / "tables", policy, digits=1, caption=caption)
        print(f"### {caption}\n")
        print(table.drop(columns="utterances").to_markdown(index=False, floatfmt=".1f"), "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
