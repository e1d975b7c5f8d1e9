"""The ``simul`` command line."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from simul.corpus import DEFAULT_ROOT, CorpusError


def _corpus_build(args: argparse.Namespace) -> int:
    from simul.corpus import manifest
    from simul.corpus.mini import build

    sizes = build.parse_sizes(args.sizes or "")
    root = Path(args.root)
    if not args.force and (root / manifest.NAME).is_file():
        try:
            found = manifest.verify(root, builder_version=build.BUILDER_VERSION)
        except CorpusError as e:
            print(f"rebuilding: {e}", file=sys.stderr)
        else:
            if found.get("seed") == args.seed and found.get("sizes") == sizes:
                print(f"{root}: up to date (seed {args.seed}); --force rebuilds it")
                return 0
            print(f"{root}: built with other settings; rebuilding", file=sys.stderr)
    t0 = time.monotonic()
    build.build(root, seed=args.seed, sizes=sizes, workers=args.workers,
                progress=not args.quiet)
    print(f"built {root} in {time.monotonic() - t0:.0f} s")
    return 0


def _corpus_info(args: argparse.Namespace) -> int:
    from simul.corpus import stats

    table = stats.info(args.root)
    print(table.to_string(index=False))
    return 0


def _corpus_verify(args: argparse.Namespace) -> int:
    from simul.corpus import manifest
    from simul.corpus.mini.build import BUILDER_VERSION

    found = manifest.verify(Path(args.root), builder_version=BUILDER_VERSION, deep=True)
    print(f"{args.root}: {len(found['files'])} files match manifest.json")
    return 0


def _corpus_simuleval(args: argparse.Namespace) -> int:
    from simul.corpus import export_simuleval

    n = export_simuleval(args.root, args.pair, args.split, args.out,
                         max_utterances=args.max_utterances)
    print(f"{args.out}: {n} segments (source.txt, target.txt, one wav each)")
    return 0


def _train(args: argparse.Namespace) -> int:
    from simul.models import train

    if args.list or not args.recipe:
        print("\n".join(train.recipes()))
        return 0
    exp = train.train(args.recipe, corpus_root=args.corpus, workdir=args.workdir,
                      device=args.device, max_epoch=args.max_epoch, overrides=args.set)
    print(f"trained: {exp}")
    return 0


def _models(args: argparse.Namespace) -> int:
    from simul.models import zoo

    if args.models_command == "pack":
        out = zoo.pack(args.run, args.name, pair=args.pair, n_average=args.average,
                       command=args.command_line, dev_utterances=args.dev_utterances,
                       float16=not args.float32,
                       out_root=Path(args.out_root) if args.out_root else zoo.MODELS_DIR)
        print(f"packed {out}")
        return 0
    if args.models_command == "eval":
        results = zoo.evaluate(args.name, max_utterances=args.max_utterances,
                               beams=tuple(args.beams), corpus_root=args.corpus)
        for key, r in results.items():
            if "wer" in r:  # an ASR model
                engines = "".join(f", {e} {v['wer']:.2f}"
                                  for e, v in r.get("by_engine", {}).items())
                print(f"{args.name} {key}: WER {r['wer']:.2f} %{engines} ({r['n']} utt, "
                      f"{r['ms_per_utterance']:.0f} ms/utt) {r['signature']}")
                continue
            engines = "".join(f", {e} {v['bleu']:.2f}" for e, v in r.get("by_engine", {}).items())
            ends = r.get("sentence_ends")
            ends = (f"; sentence ends as the reference's {100 * ends['same_count']:.1f} % of "
                    f"{ends['n']}" if ends else "")
            print(f"{args.name} {key}: BLEU {r['bleu']:.2f}{engines}; chrF {r['chrf']:.2f}; "
                  f"length {r['length_ratio']:.3f}{ends} ({r['n']} utt, "
                  f"{r['ms_per_utterance']:.0f} ms/utt) {r['signature']}")
        return 0
    names = zoo.shipped()
    if not names:
        print("no shipped models yet (data/models/ is empty)")
    for name in names:
        print(zoo.summary_line(name))
    return 0


def _decode(args: argparse.Namespace) -> int:
    from simul import decode, records
    from simul.metrics.quality import corpus_quality
    from simul.models import device as devices
    from simul.models import zoo
    from simul.policies import make, parse_settings

    on = devices.check(args.device)  # before any work
    settings = parse_settings(args.set)
    if args.policy == "offline" and "beam" not in settings:
        settings["beam"] = str(args.beam)
    trained_on = decode.model_pair(args.model)
    pair = args.pair or trained_on or decode.DEFAULT_PAIR
    if args.pair and trained_on and args.pair != trained_on:
        print(f"simul: warning: decoding {args.pair} with a model trained on {trained_on}",
              file=sys.stderr)
    model = zoo.load(args.model, on)
    recs = list(decode.records(model, make(args.policy, settings), model_name=str(args.model),
                               pair=pair, split=args.split, corpus_root=args.corpus,
                               max_utterances=args.max_utterances))
    records.write(recs, args.out)
    q = corpus_quality([r.prediction for r in recs], [r.reference for r in recs])
    print(f"{len(recs)} records → {args.out}; BLEU {q.bleu:.2f}, length ratio "
          f"{q.length_ratio:.3f} ({q.bleu_signature})")
    return 0


def _stream(args: argparse.Namespace) -> int:
    from simul import decode, live
    from simul.policies import parse_settings

    settings = parse_settings(args.set)
    pair = args.pair or decode.model_pair(args.model) or decode.DEFAULT_PAIR
    source = live.open_source(wav=args.wav, segment=args.segment, mic=args.mic,
                              start_s=args.start, duration_s=args.duration,
                              chunk_ms=args.chunk_ms, corpus=args.corpus, pair=pair,
                              split=args.split)
    return live.main_stream(model=args.model, policy=args.policy,
                            settings=settings, source=source,
                            chunk_ms=args.chunk_ms, realtime=args.realtime)


def _policies(args: argparse.Namespace) -> int:
    import dataclasses

    from simul.policies import registry

    for name, cls in sorted(registry().items()):
        params = ", ".join(f"{f.name}={f.default!r}" for f in dataclasses.fields(cls))
        print(f"{name:16s} {cls.paper}\n{'':16s} {params}")
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from simul.sweep import main_sweep

    return main_sweep(args.spec, force=args.force, workers=args.workers,
                      scheduler=args.scheduler, quiet=args.quiet, store=not args.no_store,
                      device=args.device)


def _store(args: argparse.Namespace) -> int:
    from simul import store

    if args.store_command == "clear":
        return store.main_clear(model=args.model, older_than_days=args.older_than,
                                yes=args.yes)
    return store.main_info()


def _reproduce(args: argparse.Namespace) -> int:
    from simul.reproduce import main_reproduce

    return main_reproduce(args.only, quick=args.quick, figures_dir=args.figures,
                          executed_dir=args.executed, runs_dir=args.runs, corpus=args.corpus,
                          dask_scheduler=args.scheduler, max_utterances=args.max_utterances,
                          jobs=args.jobs, store=not args.no_store, device=args.device)


def _score(args: argparse.Namespace) -> int:
    from simul.metrics.score import main_score

    return main_score(args.records, as_json=args.json)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="simul",
        description="Simultaneous speech translation with offline-trained ESPnet2 models.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    corpus = commands.add_parser("corpus", help="build, describe and verify corpora")
    corpus_cmds = corpus.add_subparsers(dest="corpus_command", metavar="ACTION", required=True)

    p = corpus_cmds.add_parser("build", help="build the embedded mini corpus (deterministic)")
    p.add_argument("--root", default=str(DEFAULT_ROOT), help="output directory [%(default)s]")
    p.add_argument("--seed", type=int, default=0, help="grammar and voice seed [%(default)s]")
    p.add_argument("--sizes", default="",
                   help="segments per split, e.g. 'train=200,dev=20' (others keep defaults)")
    p.add_argument("--workers", type=int, default=None, help="processes [all cores]")
    p.add_argument("--force", action="store_true", help="rebuild even if up to date")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_corpus_build)

    p = corpus_cmds.add_parser("info", help="segments, hours, durations, vocabulary, voices")
    p.add_argument("--root", default=str(DEFAULT_ROOT), help="corpus root [%(default)s]")
    p.set_defaults(func=_corpus_info)

    p = corpus_cmds.add_parser("verify", help="check every file against manifest.json")
    p.add_argument("--root", default=str(DEFAULT_ROOT), help="corpus root [%(default)s]")
    p.set_defaults(func=_corpus_verify)

    p = corpus_cmds.add_parser("simuleval", help="a split as SimulEval's speech input: one wav "
                               "per segment, source.txt, target.txt")
    p.add_argument("--root", default=str(DEFAULT_ROOT), help="corpus root [%(default)s]")
    p.add_argument("--pair", default="en-es", help="language pair [%(default)s]")
    p.add_argument("--split", default="tst-COMMON", help="split [%(default)s]")
    p.add_argument("--max-utterances", type=int, default=None, help="the first N segments")
    p.add_argument("--out", required=True, help="output folder (replaced)")
    p.set_defaults(func=_corpus_simuleval)

    p = commands.add_parser("train", help="train (or continue training) an offline ST model")
    p.add_argument("recipe", nargs="?", help="recipe name (see --list)")
    p.add_argument("--list", action="store_true", help="list the recipes")
    p.add_argument("--resume", action="store_true",
                   help="continue a stopped run (the default: finished stages are skipped)")
    p.add_argument("--corpus", default=str(DEFAULT_ROOT), help="corpus root [%(default)s]")
    p.add_argument("--workdir", default=None, help="run directory [~/.cache/simul/runs/RECIPE]")
    p.add_argument("--device", default="cpu", help="cpu or cuda [%(default)s]")
    p.add_argument("--max-epoch", type=int, default=None, help="override the recipe's epochs")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                   help="change the recipe for this run (YAML value), e.g. espnet.specaug=null "
                   "or simul.speed_perturb=[0.9,1.0,1.1]; repeatable")
    p.set_defaults(func=_train)

    p = commands.add_parser("models", help="list shipped models with their offline BLEU")
    p.set_defaults(func=_models, models_command="list")
    mcmds = p.add_subparsers(dest="models_command", metavar="ACTION")
    q = mcmds.add_parser("pack", help="copy a trained run into data/models/NAME")
    q.add_argument("run", help="ESPnet experiment directory (…/exp)")
    q.add_argument("name")
    q.add_argument("--pair", required=True)
    q.add_argument("--average", type=int, default=3, help="last N epoch snapshots [3]")
    q.add_argument("--command-line", default="", help="the command that trained it")
    q.add_argument("--dev-utterances", type=int, default=100,
                   help="dev curve of each kept snapshot on this many segments: greedy "
                        "BLEU (ST; MT of the gold transcripts), WER of the CTC's greedy "
                        "transcripts (ASR) [100]")
    q.add_argument("--float32", action="store_true",
                   help="store the weights in float32 (default float16: half the file size)")
    q.add_argument("--out-root", default=None, metavar="DIR",
                   help="write DIR/NAME instead of data/models/NAME (e.g. to look at a "
                        "run's learning curve without shipping it)")
    q = mcmds.add_parser("eval", help="offline BLEU (greedy, beam 5), per synthesizer → "
                         "metrics.json and card.md; an ASR model's WER (greedy, beam 5, CTC "
                         "greedy), an MT model's BLEU on the gold transcripts")
    q.add_argument("name", help="shipped model, or a directory packed with --out-root")
    q.add_argument("--max-utterances", type=int, default=None)
    q.add_argument("--beams", type=int, nargs="+", default=[1, 5], help="[%(default)s]")
    q.add_argument("--corpus", default=str(DEFAULT_ROOT), help="corpus root [%(default)s]")

    p = commands.add_parser("decode", help="decode a corpus split into records (JSON lines)")
    p.add_argument("--model", required=True, help="shipped model name or ESPnet model dir")
    p.add_argument("--policy", default="offline", help="see `simul policies`")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="policy setting, e.g. --set k=200 --set n=2")
    p.add_argument("--beam", type=int, default=1)
    p.add_argument("--pair", default=None,
                   help="language pair of the corpus split, e.g. en-pt [the model's own "
                        "(the 'pair' of its simul.json, which every shipped model has); "
                        "en-es for an ESPnet model directory without simul.json]")
    p.add_argument("--split", default="tst-COMMON")
    p.add_argument("--corpus", default=str(DEFAULT_ROOT))
    p.add_argument("--max-utterances", type=int, default=None)
    p.add_argument("--out", required=True)
    p.add_argument("--device", default="cpu", metavar="cpu|cuda|cuda:N",
                   help="where the model decodes; decisions are timed with the GPU's work "
                        "included [%(default)s]")
    p.set_defaults(func=_decode)

    p = commands.add_parser(
        "stream", help="translate a sound file, a corpus segment or a microphone as it plays",
        description="Feed audio to a policy in chunks and print each word as it is written, "
        "with the source time (s) it was written at; then the real-time factor (compute / "
        "audio). An offline model re-encodes the whole prefix read at every decision, so a "
        "talk of minutes is slow: stream a part of it (--start/--duration) or one segment.")
    p.add_argument("--model", required=True, help="shipped model name or ESPnet model dir")
    p.add_argument("--policy", required=True, help="see `simul policies`, e.g. onlinization")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="policy setting, e.g. --set k=200 --set n=2")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--wav", metavar="FILE",
                        help="a sound file (any rate or channels: resampled to 16 kHz mono)")
    source.add_argument("--segment", metavar="ID",
                        help="one segment of a corpus split, e.g. talk_0480_2 (see --corpus, "
                        "--pair, --split)")
    source.add_argument("--mic", action="store_true",
                        help="the microphone, until Ctrl-C (needs pip install 'simul[live]')")
    p.add_argument("--start", type=float, default=None, metavar="S",
                   help="--wav: start S seconds in [0]")
    p.add_argument("--duration", type=float, default=None, metavar="S",
                   help="--wav, --mic: stream S seconds [to the end]")
    p.add_argument("--chunk-ms", type=float, default=100.0, metavar="MS",
                   help="audio fed at a time; the decisions do not depend on it "
                   "[%(default)g]")
    p.add_argument("--realtime", action="store_true",
                   help="feed the audio at the speed of speech and report the lag (when "
                   "each word appears minus its source time)")
    p.add_argument("--corpus", default=str(DEFAULT_ROOT), help="--segment: corpus root "
                   "[%(default)s]")
    p.add_argument("--pair", default=None,
                   help="--segment: language pair [the model's own, else en-es]")
    p.add_argument("--split", default="tst-COMMON", help="--segment: split [%(default)s]")
    p.set_defaults(func=_stream)

    p = commands.add_parser("policies", help="list policies, their settings and papers")
    p.set_defaults(func=_policies)

    p = commands.add_parser("score", help="quality and latency of records (or instances.log)")
    p.add_argument("records", help="simul records (JSON lines) or a SimulEval instances.log")
    p.add_argument("--json", action="store_true", help="one JSON object of metric → value")
    p.set_defaults(func=_score)

    p = commands.add_parser("sweep", help="run a grid of policy settings (resumable)")
    p.add_argument("spec", help="sweep spec (YAML): models, pair, splits, policies, output")
    p.add_argument("--force", action="store_true",
                   help="discard results of a different spec in the output directory")
    p.add_argument("--workers", type=int, default=None,
                   help="local processes [spec's, else one per core; 1 = this process]")
    p.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                   help="run the utterances on this Dask distributed scheduler")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--no-store", action="store_true",
                   help="decode everything: neither take records from the record store nor "
                        "add to it (see `simul store`)")
    p.add_argument("--device", default=None, metavar="cpu|cuda|cuda:N",
                   help="where the models decode [the spec's 'device', else cpu]; with cuda "
                        "one worker per GPU unless --workers")
    p.set_defaults(func=_sweep)

    p = commands.add_parser(
        "store", help="the record store shared by all sweeps: describe or clear it",
        description="Sweeps take the records they would decode again (same model, corpus, "
        "segment, policy settings and decoding code) from the record store, and add what "
        "they decode. It lives in ~/.cache/simul/records; SIMUL_STORE=DIR moves it, "
        "SIMUL_STORE=off turns it off.")
    p.set_defaults(func=_store, store_command="info")
    scmds = p.add_subparsers(dest="store_command", metavar="ACTION")
    scmds.add_parser("info", help="location, records, size, records by model and policy")
    q = scmds.add_parser("clear", help="remove records (all, or those chosen)")
    q.add_argument("--model", default=None, metavar="NAME",
                   help="only the records of this model (its name, or a checksum prefix)")
    q.add_argument("--older-than", type=float, default=None, metavar="DAYS",
                   help="only records stored more than DAYS days ago")
    q.add_argument("--yes", action="store_true",
                   help="remove them (without it: say how many would go)")

    p = commands.add_parser("reproduce", help="run the notebooks: every table and figure")
    p.add_argument("--quick", action="store_true", help="a handful of utterances per notebook")
    p.add_argument("--only", nargs="+", default=None, metavar="NAME",
                   help="tutorial, nguyen2021, papi2022, ma2020, polak2022, han2020, "
                        "compare_policies")
    p.add_argument("--figures", default=None, help="figures and tables [figures/]")
    p.add_argument("--executed", default=None, help="executed notebooks [notebooks/executed/]")
    p.add_argument("--runs", default=None, help="sweep results (cached) [runs/]")
    p.add_argument("--corpus", default=None, help="corpus root [the embedded mini corpus]")
    p.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                   help="Dask scheduler for the sweeps")
    p.add_argument("--max-utterances", type=int, default=None, metavar="N",
                   help="segments per split in every notebook [each notebook's own]")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="notebooks at once [full run: 1, its sweeps use every core; "
                        "--quick: one per core]")
    p.add_argument("--no-store", action="store_true",
                   help="the sweeps decode everything: no records from the record store, "
                        "none added")
    p.add_argument("--device", default=None, metavar="cpu|cuda|cuda:N",
                   help="where every notebook's sweeps decode (SIMUL_DEVICE for the kernels) "
                        "[$SIMUL_DEVICE, else cpu]")
    p.set_defaults(func=_reproduce)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (CorpusError, ValueError, FileNotFoundError) as e:
        print(f"simul: error: {e}", file=sys.stderr)
        return 2
