"""Sweep benchmark: shared vs naive decoding of a grid, and the cost of simultaneous decoding.

    python benchmarks/sweep.py [--model blstm_char_en-es] [--utterances 50]    (make bench)
    python benchmarks/sweep.py --quick                                       (make bench QUICK=1)

1. Nguyen et al. 2021's 12-setting grid (k ∈ {100, 200}, s ∈ {10, 20}, N ∈ {1, 2, 3}) over
   the first tst-COMMON segments, twice in this process: naive (every setting re-encodes
   every prefix itself) and shared (:mod:`simul.sweep.calls`). Prints both wall times, the
   speedup and whether the records are identical (everything but the measured times).
2. For every shipped model (or those named): the real-time factor of single-utterance
   simultaneous decoding (compute time / audio duration) under a representative policy,
   and the computation-aware overhead LAAL_CA − LAAL; for the Conformer, Polák et al.
   2022's LA-2 at 1 s chunks (target ≤ 150 ms on the 2-core development machine).
   The grid measures throughput with one torch thread (a sweep runs one worker per core);
   single-utterance decoding uses every core (``--cost-threads``), as a live system would,
   since its latency is what the computation-aware metrics charge.
3. That LA-2 setting with ESPnet's beam search as it is and with simul's (cached Transformer
   scoring, exact early stop, :mod:`simul.models.extensions.decoder_scorers`): wall time, CA
   overhead,
   and whether the units are identical.
4. Papi et al. 2022's grid on the en-de Conformer, decoded as a sweep decodes it, with
   ESPnet's greedy Transformer steps and with simul's (the source attention's keys and
   values made once per encoder output,
   :func:`simul.models.extensions.decoder_scorers.transformer_score`;
   settings resuming each other's steps, :class:`simul.models.adapters.espnet_st.PrefixMemory`):
   wall time, and whether the units and delays are identical.

Ratios are measured in one run on one machine; they are printed, never asserted. Every
sweep here runs with the record store off, so each record is decoded (and timed) in this run.

``--quick`` is a smoke run that finishes in about a minute on two cores: two segments, a
4-setting grid, the grid's model alone in part 2 on one torch thread, and no parts 3 and 4
(explicit options still apply). Its ratios are measured like the full run's but on far
less, and are labelled so.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import torch

from simul import sweep
from simul.corpus import DEFAULT_ROOT
from simul.models import registry
from simul.models.loader import load
from simul.sweep import executors

N21_GRID = {"policy": "wait_k_frames", "grid": {"k": [100, 200], "s": [10, 20], "n": [1, 2, 3]},
            "fixed": {"maxlenratio": 1.0}}
QUICK_GRID = {"policy": "wait_k_frames", "grid": {"k": [100, 200], "s": [10], "n": [1, 2]},
              "fixed": {"maxlenratio": 1.0}}
# --quick's defaults: two segments everywhere, one torch thread throughout (several threads
# on a busy machine, a test run beside other jobs, slow decoding down many times over), no
# beam-search comparison.
QUICK_DEFAULTS = {"utterances": 2, "where": 2, "cost_utterances": 2, "cost_threads": 1,
                  "beam_model": "", "greedy_model": ""}
REPRESENTATIVE = {  # a policy each model's paper runs, by model family
    "blstm": {"policy": "wait_k_frames", "settings": [{"k": 100, "s": 10, "n": 1}]},
    "conformer": {"policy": "onlinization",
                  "settings": [{"chunk_ms": 1000, "rule": "la", "n": 2}]},
    "transformer": {"policy": "wait_k_words",
                    "settings": [{"k": 5, "detection": "adaptive"}]},
}


def _records(out: Path, table) -> list[list[dict]]:
    rows = []
    for rel in table.records:
        recs = [json.loads(line) for line in (out / rel).read_text().splitlines()]
        rows.append([{k: v for k, v in r.items() if k != "elapsed"} for r in recs])
    return rows


def grid(model: str, pair: str, utterances: int, corpus: Path, tmp: Path, policy: dict,
         note: str = "") -> None:
    n_settings = len(sweep.expand([policy], "benchmark"))
    name = "N21 grid" if policy is N21_GRID else "grid"
    print(f"## {name}: {n_settings} settings × {utterances} tst-COMMON segments, {model}")
    wall = {}
    tables = {}
    executors._model(sweep.resolve_model(model))  # load (and import ESPnet) before either timing
    for share in (False, True):
        spec = {"models": [model], "pair": pair, "splits": ["tst-COMMON"], "corpus": str(corpus),
                "max_utterances": utterances, "output": str(tmp / f"share_{share}"),
                "policies": [policy], "share": share, "store": False}
        t0 = time.perf_counter()
        tables[share] = sweep.run(spec, workers=1, progress=False)
        wall[share] = time.perf_counter() - t0
    same = _records(tmp / "share_False", tables[False]) == _records(tmp / "share_True",
                                                                     tables[True])
    print(f"naive  {wall[False]:8.1f} s")
    print(f"shared {wall[True]:8.1f} s")
    print(f"speedup {wall[False] / wall[True]:.1f}×{note}; identical records: {same}")
    t = tables[True]
    cols = ["setting", "BLEU", "AL", "LAAL", "LAAL_CA"]
    print(t.assign(naive_LAAL_CA=tables[False].LAAL_CA)[cols + ["naive_LAAL_CA"]]
          .to_string(index=False, float_format=lambda x: f"{x:.1f}"))


def where_time_goes(model: str, pair: str, utterances: int, corpus: Path, policy: dict,
                    note: str = "") -> None:
    """The grid's adapter calls with :class:`~simul.sweep.calls.SharedCalls` counting them: per
    call, how many the settings made, how many were computed, and the seconds computing
    them. Every call a naive run makes is computed, so ``charged / computed`` seconds bounds
    what sharing can gain on this grid."""
    from simul import corpus as corpora
    from simul.decoding.simulate import simulate
    from simul.sweep.calls import SharedCalls

    print(f"\n## Where the shared grid's time goes: {model}, {utterances} tst-COMMON segments")
    adapter = executors._model(sweep.resolve_model(model))
    settings = sweep.expand([policy], "benchmark")
    totals: dict[str, dict[str, float]] = {}
    for seg in corpora.load_list(corpus, pair, "tst-COMMON", limit=utterances):
        shared = SharedCalls(adapter)
        for setting in settings:
            simulate(shared, setting.make(), seg, model_name=model)
        for name, cost in shared.costs().items():
            for key, value in cost.items():
                totals.setdefault(name, {}).setdefault(key, 0)
                totals[name][key] += value
    print(f"{'call':12s} {'made':>7s} {'computed':>9s} {'computed s':>11s} {'naive s':>8s}")
    for name, c in sorted(totals.items(), key=lambda kv: -kv[1]["computed_ms"]):
        print(f"{name:12s} {c['made']:7d} {c['computed']:9d} {c['computed_ms'] / 1e3:11.1f} "
              f"{c['charged_ms'] / 1e3:8.1f}")
    total = sum(c["computed_ms"] for c in totals.values()) / 1e3
    naive = sum(c["charged_ms"] for c in totals.values()) / 1e3
    print(f"model calls: {total:.1f} s shared, {naive:.1f} s if each setting computed its own:"
          f" sharing gains at most {naive / total:.1f}× on this grid{note}")


def _family(model: str) -> str:
    """"conformer", "transformer" or "blstm", from the model's config (its encoder)."""
    encoder = registry.config(model).get("encoder", "")
    return encoder if encoder in ("conformer", "transformer") else "blstm"


def cost(models: list[str], pair_of: dict, utterances: int, corpus: Path, tmp: Path,
         note: str = "") -> None:
    print(f"\n## Simultaneous decoding, one utterance at a time ({utterances} segments){note}")
    print(f"{'model':24s} {'policy':34s} {'RTF':>6s} {'LAAL':>7s} {'LAAL_CA':>8s} "
          f"{'CA−NCA':>7s}")
    for name in models:
        family = _family(name)
        spec = {"models": [name], "pair": pair_of[name], "splits": ["tst-COMMON"],
                "corpus": str(corpus), "max_utterances": utterances,
                "output": str(tmp / f"cost_{Path(name).name}"),
                "policies": [REPRESENTATIVE[family]], "store": False}
        row = sweep.run(spec, workers=1, progress=False).iloc[0]
        recs = [json.loads(x) for x in (tmp / f"cost_{Path(name).name}" / row.records)
                .read_text().splitlines()]
        compute = sum(r["elapsed"][-1] - r["delays"][-1] for r in recs if r["delays"])
        audio = sum(r["source_length"] for r in recs if r["delays"])
        print(f"{Path(name).name:24s} {row.policy + ' ' + row.setting:34s} "
              f"{compute / audio:6.3f} {row.LAAL:7.0f} {row.LAAL_CA:8.0f} "
              f"{row.LAAL_CA - row.LAAL:7.0f}")


def beam_search(model: str, pair: str, utterances: int, corpus: Path) -> None:
    """LA-2 at 1 s chunks with ESPnet's beam search as it is, then with simul's (key/value
    cached Transformer scoring, exact early stop): same units, less computation."""
    from simul import corpus as corpora
    from simul.decoding.simulate import simulate
    from simul.metrics.score import score_records
    from simul.policies import make

    print(f"\n## Beam search inside a policy: {model}, LA-2 at 1 s chunks (beam 5), "
          f"{utterances} tst-COMMON segments")
    adapter = load(sweep.resolve_model(model).directory)
    policy = make("onlinization", {"chunk_ms": 1000.0, "rule": "la", "n": 2, "beam": 5})
    segments = corpora.load_list(corpus, pair, "tst-COMMON", limit=utterances)
    rows = {}
    for label, fast in (("ESPnet search", False), ("simul search", True)):
        adapter.use_decoder_scorers = adapter.stop_early = fast
        t0 = time.perf_counter()
        recs = [simulate(adapter, policy, seg, model_name=model) for seg in segments]
        wall = time.perf_counter() - t0
        scores = score_records(recs)
        rows[label] = ([r.units for r in recs], wall, scores)
        print(f"{label:14s} wall {wall:7.1f} s   BLEU {scores['BLEU']:5.1f}   "
              f"LAAL {scores['LAAL']:6.0f}   LAAL_CA {scores['LAAL_CA']:6.0f}   "
              f"CA−NCA {scores['LAAL_CA'] - scores['LAAL']:5.0f} ms")
    (a, wa, sa), (b, wb, sb) = rows.values()
    print(f"speedup {wa / wb:.2f}×; CA overhead {sa['LAAL_CA'] - sa['LAAL']:.0f} → "
          f"{sb['LAAL_CA'] - sb['LAAL']:.0f} ms; identical units: {a == b}")


def greedy_steps(model: str, pair: str, utterances: int, corpus: Path,
                 ks: list[int] | None = None) -> None:
    """P22's grid decoded as a sweep decodes it (one utterance under every setting, sharing
    computations), with ESPnet's greedy Transformer steps, then with simul's (the source
    attention's keys and values made once per encoder output, settings resuming each other's
    steps over the encoder outputs they share): same records, less computation. ``ks``:
    the grid's k (default P22's, 3 … 11)."""
    from simul import corpus as corpora
    from simul.papers import papi2022
    from simul.sweep import Spec

    ks = list(ks or papi2022.KS)
    print(f"\n## Greedy steps in a sweep: {model}, P22's grid (wait-k over words, fixed and "
          f"adaptive, k = {', '.join(map(str, ks))}; offline greedy and beam 5), "
          f"{utterances} tst-COMMON segments, one process")
    with tempfile.TemporaryDirectory() as tmp:
        word_ms = papi2022.corpus_word_ms(corpus, pair, "tst-COMMON")  # as the notebook
        spec = Spec.load(papi2022.spec(model, pair, "tst-COMMON", str(Path(tmp) / "out"),
                                       word_ms=word_ms, ks=ks, corpus=corpus))
    from simul.models.extensions import decoder_scorers

    ref = sweep.resolve_model(model)
    adapter = executors._model(ref)  # the adapter decode_utterance uses in this process
    segments = corpora.load_list(corpus, pair, "tst-COMMON", limit=utterances)
    steps = [0]  # greedy decoder steps taken: ESPnet's score or simul's transformer_score

    def counted(step):
        def call(*args, **kwargs):
            steps[0] += 1
            return step(*args, **kwargs)
        return call

    espnet_score, simul_score = adapter.model.decoder.score, decoder_scorers.transformer_score
    adapter.model.decoder.score = counted(espnet_score)
    decoder_scorers.transformer_score = counted(simul_score)
    rows = {}
    try:
        for label, fast in (("ESPnet steps", False), ("simul steps", True)):
            adapter.use_decoder_scorers = fast
            steps[0] = 0
            t0 = time.perf_counter()
            recs = [r for seg in segments
                    for r in executors.decode_utterance(ref, spec.settings, seg)]
            rows[label] = ([(r["units"], r["delays"]) for r in recs],
                           time.perf_counter() - t0, steps[0])
            print(f"{label:14s} wall {rows[label][1]:7.1f} s   ({len(recs)} records, "
                  f"{steps[0]:,} decoder steps)")
    finally:
        del adapter.model.decoder.score  # the class's method again
        decoder_scorers.transformer_score = simul_score
    (a, wa, na), (b, wb, nb) = rows.values()
    print(f"speedup {wa / wb:.2f}×, {1 - nb / na:.0%} fewer decoder steps; identical units "
          f"and delays: {a == b}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="blstm_char_en-es", help="model of the grid run")
    parser.add_argument("--pair", default="en-es")
    parser.add_argument("--utterances", type=int, default=50)
    parser.add_argument("--cost-models", nargs="*", default=None,
                        help="models for part 2 [every shipped model]")
    parser.add_argument("--cost-utterances", type=int, default=20)
    parser.add_argument("--corpus", default=str(DEFAULT_ROOT))
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads of the grid and --where runs [%(default)s]")
    parser.add_argument("--cost-threads", type=int, default=os.cpu_count() or 1,
                        help="torch threads of single-utterance decoding (parts 2 and 3) "
                             "[every core: %(default)s]")
    parser.add_argument("--skip-grid", action="store_true")
    parser.add_argument("--where", type=int, default=10, metavar="N",
                        help="count the grid's model calls on N segments [%(default)s; 0 skips]")
    parser.add_argument("--beam-model", default="conformer_bpe_en-es",
                        help="model of the beam-search comparison ['' skips it]")
    parser.add_argument("--beam-utterances", type=int, default=20)
    parser.add_argument("--greedy-model", default="conformer_bpe_en-de",
                        help="model of the greedy-step comparison ['' skips it]")
    parser.add_argument("--greedy-pair", default="en-de")
    parser.add_argument("--greedy-utterances", type=int, default=10)
    parser.add_argument("--greedy-ks", type=int, nargs="+", default=None, metavar="K",
                        help="k of the greedy-step comparison's grid [P22's: 3 5 7 9 11]")
    parser.add_argument("--quick", action="store_true",
                        help=f"smoke run: {QUICK_DEFAULTS['utterances']} segments, a "
                             f"{len(sweep.expand([QUICK_GRID], 'quick'))}-setting grid, "
                             "--model alone in part 2 on one thread, no parts 3 and 4")
    args = parser.parse_args(argv)
    if args.quick:  # quick defaults; options given explicitly still win
        parser.set_defaults(**QUICK_DEFAULTS)
        args = parser.parse_args(argv)
    policy = QUICK_GRID if args.quick else N21_GRID
    note = " (quick run)" if args.quick else ""

    torch.set_num_threads(args.threads)
    print(f"machine: {sweep.machine()}; simul {sweep.git_commit()}")
    if args.quick:
        print("quick run: its ratios are measured in this run, on a few segments and a small "
              "grid; run without --quick for the benchmark's numbers")
    if args.cost_models is not None:
        models = args.cost_models
    else:
        models = [args.model] if args.quick else registry.shipped_translators()
    # A model's own pair (its simul.json); --pair for a model directory without one.
    pair_of = {m: registry.pair(m) or args.pair for m in models}
    with tempfile.TemporaryDirectory(prefix="simul-bench-") as tmp:
        if not args.skip_grid:
            grid(args.model, args.pair, args.utterances, Path(args.corpus), Path(tmp), policy,
                 note)
        if args.where:
            where_time_goes(args.model, args.pair, args.where, Path(args.corpus), policy, note)
        torch.set_num_threads(args.cost_threads)
        threads = f"{args.cost_threads} torch thread" + ("s" if args.cost_threads != 1 else "")
        print(f"\n(single-utterance decoding from here: {threads})")
        cost(models, pair_of, args.cost_utterances, Path(args.corpus), Path(tmp), note)
    if args.beam_model:
        beam_search(args.beam_model, args.pair, args.beam_utterances, Path(args.corpus))
    if args.greedy_model:
        greedy_steps(args.greedy_model, args.greedy_pair, args.greedy_utterances,
                     Path(args.corpus), args.greedy_ks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
