"""The ``simul`` command line.

Options that several commands share are written once, by the ``_add_*`` helpers below, so
their names, defaults and help read the same everywhere; help texts are lower-case phrases
with the default in brackets. Each handler is one call into the package: the work, its
checks and what it prints live there.
"""

from __future__ import annotations

import argparse
import sys

from simul.corpus import DEFAULT_ROOT, CorpusError


class _Parser(argparse.ArgumentParser):
    """argparse's parser, its errors one line (``simul decode: error: argument …``, exit 2):
    ``-h`` shows the usage."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} -h)\n")


# ---------------------------------------------------------------------------------------
# options shared by several commands


def _at_least(minimum: int):
    """An option's type: a whole number ≥ ``minimum``, refused by name otherwise."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or value < minimum:
            got = repr(text) if value is None else value
            raise argparse.ArgumentTypeError(f"expected a whole number ≥ {minimum}, got {got}")
        return value
    return parse


_positive_int = _at_least(1)  # counts: segments, workers, beams, snapshots
_count = _at_least(0)  # counts that may be 0: a seed, dev segments


class _DeprecatedAlias(argparse.Action):
    """An old name of an option: stores its value as the new one does, with a warning."""

    def __init__(self, *args, new_name: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.new_name = new_name

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{parser.prog}: warning: {option_string} is deprecated, use {self.new_name}",
              file=sys.stderr)
        setattr(namespace, self.dest, values)


def _add_root(p: argparse.ArgumentParser, what: str = "corpus root") -> None:
    """``--corpus DIR`` (as every command names the corpus), ``--root`` its old name."""
    p.add_argument("--corpus", dest="root", default=str(DEFAULT_ROOT), metavar="DIR",
                   help=f"{what} [%(default)s]")
    p.add_argument("--root", dest="root", action=_DeprecatedAlias, new_name="--corpus",
                   metavar="DIR", help="the old name of --corpus (deprecated)")


def _add_corpus(p: argparse.ArgumentParser, default: str | None = str(DEFAULT_ROOT),
                what: str = "corpus root") -> None:
    shown = "%(default)s" if default else "the embedded mini corpus"
    p.add_argument("--corpus", default=default, metavar="DIR", help=f"{what} [{shown}]")


def _add_pair(p: argparse.ArgumentParser, default: str | None = None,
              what: str = "language pair of the corpus split") -> None:
    shown = ("%(default)s" if default else
             "the model's own: its simul.json's (a cascade: its MT model's); required for a "
             "model that records none")
    p.add_argument("--pair", default=default, metavar="SRC-TGT", help=f"{what} [{shown}]")


def _add_split(p: argparse.ArgumentParser, what: str = "corpus split") -> None:
    p.add_argument("--split", default="tst-COMMON", help=f"{what} [%(default)s]")


def _add_max_utterances(p: argparse.ArgumentParser, default_text: str = "all") -> None:
    p.add_argument("--max-utterances", type=_positive_int, default=None, metavar="N",
                   help=f"the first N segments of each split [{default_text}]")


def _add_device(p: argparse.ArgumentParser, default: str | None = "cpu",
                what: str = "where the model decodes") -> None:
    shown = "%(default)s" if default else "the spec's 'device', else cpu"
    p.add_argument("--device", default=default, metavar="cpu|cuda|cuda:N",
                   help=f"{what} [{shown}]")


def _add_model(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", required=True, metavar="NAME|DIR|OWNER/REPO",
                   help="a shipped model (see `simul models`), an ESPnet2 or transformers "
                        "Speech2Text model directory, or a Hugging Face Hub repo id")


def _add_policy(p: argparse.ArgumentParser, default: str | None = None) -> None:
    p.add_argument("--policy", default=default, required=default is None,
                   help="decoding policy: a name (see `simul policies`) or module:Class"
                   + (" [%(default)s]" if default else ""))
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a policy setting, e.g. --set k=3; repeatable")


def _add_quiet(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _add_sweep_options(p: argparse.ArgumentParser) -> None:
    """How sweeps run: a Dask scheduler, and whether the record store is used."""
    p.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                   help="run the sweeps' utterances on this Dask distributed scheduler")
    p.add_argument("--no-store", action="store_true",
                   help="decode everything: take no records from the record store, add none "
                        "(see `simul store`)")


# ---------------------------------------------------------------------------------------
# handlers: one call into the package each


def _corpus_build(args: argparse.Namespace) -> int:
    from simul.corpus.mini import build

    return build.main_build(args.root, seed=args.seed, sizes=args.sizes, splits=args.splits,
                            workers=args.workers, force=args.force, progress=not args.quiet)


def _corpus_info(args: argparse.Namespace) -> int:
    from simul.corpus import stats

    return stats.main_info(args.root, split=args.split, reorder=not args.no_reordering,
                           progress=not args.quiet)


def _corpus_verify(args: argparse.Namespace) -> int:
    from simul.corpus.mini import build

    return build.main_verify(args.root)


def _corpus_simuleval(args: argparse.Namespace) -> int:
    from simul.corpus import main_export_simuleval

    return main_export_simuleval(args.root, args.pair, args.split, args.out,
                                 max_utterances=args.max_utterances, text=args.text)


def _train(args: argparse.Namespace) -> int:
    from simul.models.training import train

    return train.main_train(args.recipe, list_only=args.list, corpus_root=args.corpus,
                            workdir=args.workdir, device=args.device,
                            max_epoch=args.max_epoch, overrides=args.set)


def _meta_train(args: argparse.Namespace) -> int:
    from simul.models.training import meta_train

    return meta_train.main(args.recipe, args.stage, args.workdir, start=args.start,
                           steps=args.steps, corpus_root=args.corpus, list_only=args.list)


def _models_list(args: argparse.Namespace) -> int:
    from simul.zoo import card

    return card.main_list()


def _models_pack(args: argparse.Namespace) -> int:
    from simul.zoo import pack

    return pack.main_pack(args.run, args.name, pair=args.pair, n_average=args.average,
                          command=args.command_line, dev_utterances=args.dev_utterances,
                          float16=not args.float32, out_root=args.out_root)


def _models_eval(args: argparse.Namespace) -> int:
    from simul.zoo import evaluation

    return evaluation.main_eval(args.name, max_utterances=args.max_utterances,
                                beams=args.beams, corpus_root=args.corpus, out=args.out,
                                into_model=args.into_model)


def _decode(args: argparse.Namespace) -> int:
    from simul.decoding import decode_split
    from simul.policies import parse_settings

    return decode_split.main_decode(
        model=args.model, policy=args.policy, settings=parse_settings(args.set),
        out=args.out, beam=args.beam, pair=args.pair, split=args.split,
        corpus_root=args.corpus, max_utterances=args.max_utterances, device=args.device,
        resume=args.resume, overwrite=args.overwrite)


def _stream(args: argparse.Namespace) -> int:
    from simul.decoding import live
    from simul.models import registry
    from simul.policies import parse_settings

    if args.text is not None or args.text_file is not None:  # a text MT model on typed text
        from simul.decoding.text import main_stream_text

        return main_stream_text(model=args.model, policy=args.policy,
                                settings=parse_settings(args.set), text=args.text,
                                text_file=args.text_file)

    model = registry.model(args.model)  # resolved once for every step below
    return live.main_stream(
        model=model, policy=args.policy, settings=parse_settings(args.set),
        source=live.open_source(wav=args.wav, segment=args.segment, mic=args.mic,
                                start_s=args.start, duration_s=args.duration,
                                chunk_ms=args.chunk_ms, corpus=args.corpus,
                                pair=live.source_pair(args.pair, model,
                                                      needed=args.segment is not None),
                                split=args.split),
        chunk_ms=args.chunk_ms, realtime=args.realtime, level=args.level)


def _policies(args: argparse.Namespace) -> int:
    from simul.policies import describe

    print(describe(args.name))
    return 0


def _score(args: argparse.Namespace) -> int:
    from simul.metrics.score import main_score

    return main_score(args.records, as_json=args.json)


def _sweep(args: argparse.Namespace) -> int:
    from simul.sweep import main_sweep

    return main_sweep(args.spec, force=args.force, workers=args.workers,
                      scheduler=args.scheduler, quiet=args.quiet, store=not args.no_store,
                      device=args.device)


def _store_info(args: argparse.Namespace) -> int:
    from simul.sweep import store

    return store.main_info()


def _store_clear(args: argparse.Namespace) -> int:
    from simul.sweep import store

    return store.main_clear(model=args.model, older_than_days=args.older_than, yes=args.yes)


def _reproduce(args: argparse.Namespace) -> int:
    from simul.commands.reproduce import main_reproduce

    if args.confirm:
        from simul.commands.confirm import main_confirm

        given = [name for name, value in (("--quick", args.quick), ("--executed", args.executed),
                                          ("--max-utterances", args.max_utterances),
                                          ("--jobs", args.jobs), ("--no-store", args.no_store),
                                          ("--scheduler", args.scheduler),
                                          ("--model", args.model),
                                          ("--parameters", args.parameters)) if value]
        if given:
            raise ValueError(f"--confirm: not with {', '.join(given)} (the confirmatory run "
                             "follows the full run's notebooks and sizes)")
        return main_confirm(args.only, figures_dir=args.figures, runs_dir=args.runs,
                            corpus=args.corpus, device=args.device, power=args.power)
    if args.power is not None:
        raise ValueError("--power: only with --confirm (it sizes the confirmatory run)")

    return main_reproduce(args.only, quick=args.quick, figures_dir=args.figures,
                          executed_dir=args.executed, runs_dir=args.runs, corpus=args.corpus,
                          dask_scheduler=args.scheduler, max_utterances=args.max_utterances,
                          jobs=args.jobs, store=not args.no_store, device=args.device,
                          model=args.model, parameters_file=args.parameters)


# ---------------------------------------------------------------------------------------
# commands


def _corpus_commands(commands) -> None:
    corpus = commands.add_parser("corpus", help="build, describe and verify corpora")
    actions = corpus.add_subparsers(dest="corpus_command", metavar="ACTION", required=True)

    p = actions.add_parser("build", help="build the embedded mini corpus (deterministic)")
    _add_root(p, "output directory")
    p.add_argument("--seed", type=_count, default=0, help="grammar and voice seed [%(default)s]")
    p.add_argument("--sizes", default="", metavar="SPLIT=N,…",
                   help="segments per split, e.g. 'train=200,dev=20' [the defaults]")
    p.add_argument("--splits", default="", metavar="SPLIT,…",
                   help="splits to speak (every split gets its text), added to a built corpus "
                        "that lacks them, e.g. 'train' or 'all' [dev,tst-COMMON,tst-HE]")
    p.add_argument("--workers", type=_positive_int, default=None, metavar="N",
                   help="processes [all cores]")
    p.add_argument("--force", action="store_true", help="rebuild even if up to date")
    _add_quiet(p)
    p.set_defaults(func=_corpus_build)

    p = actions.add_parser("info", help="segments, hours, durations, vocabulary, voices, "
                           "word reordering")
    _add_root(p)
    p.add_argument("--split", default="dev",
                   help="split of the reordering figures and samples [%(default)s]")
    p.add_argument("--no-reordering", action="store_true",
                   help="skip the reordering figures (they fit eflomal where a pair has no "
                        "gold links, once per corpus: cached)")
    _add_quiet(p)
    p.set_defaults(func=_corpus_info)

    p = actions.add_parser("verify", help="check every file against manifest.json")
    _add_root(p)
    p.set_defaults(func=_corpus_verify)

    p = actions.add_parser("simuleval", help="a split as SimulEval's speech input: one wav "
                           "per segment, source.txt, target.txt (--text: text input)")
    _add_root(p)
    _add_pair(p, default="en-es", what="language pair")
    _add_split(p)
    _add_max_utterances(p)
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (replaced)")
    p.add_argument("--text", action="store_true",
                   help="text input instead: source.txt holds the transcripts (no wav)")
    p.set_defaults(func=_corpus_simuleval)


def _model_commands(commands) -> None:
    p = commands.add_parser("train", help="train (or continue training) an offline ST model")
    p.add_argument("recipe", nargs="?", help="recipe name (see --list)")
    p.add_argument("--list", action="store_true", help="list the recipes")
    p.add_argument("--resume", action="store_true",
                   help="continue a stopped run (the default: finished stages are skipped)")
    _add_corpus(p)
    p.add_argument("--workdir", default=None, metavar="DIR",
                   help="run directory [~/.cache/simul/runs/RECIPE]")
    _add_device(p, what="where the model trains")
    p.add_argument("--max-epoch", type=_positive_int, default=None, metavar="N",
                   help="train N epochs [the recipe's]")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                   help="change the recipe for this run (a YAML value), e.g. "
                        "espnet.specaug=null or simul.speed_perturb=[0.9,1.0,1.1]; repeatable")
    p.set_defaults(func=_train)

    p = commands.add_parser("meta-train", help="H20's meta-learning, its multi-task control "
                            "and fine-tuning on a data-scarce target task (resumable stages)")
    p.add_argument("recipe", nargs="?", help="meta-learning recipe name or YAML file "
                                             "(see --list)")
    p.add_argument("--list", action="store_true", help="list the recipes")
    p.add_argument("--stage", choices=["meta", "multitask", "finetune"], default="meta",
                   help="what to run [%(default)s]")
    p.add_argument("--workdir", default=None, metavar="DIR",
                   help="run directory (a stopped run resumes) [~/.cache/simul/runs/RECIPE_STAGE]")
    p.add_argument("--start", default=None, metavar="DIR",
                   help="finetune: start from this meta or multitask run [the initialisation]")
    p.add_argument("--steps", type=_positive_int, default=None, metavar="N",
                   help="run N steps in all [the recipe's]")
    _add_corpus(p)
    p.set_defaults(func=_meta_train)

    p = commands.add_parser("models", help="list shipped models with their offline quality")
    p.set_defaults(func=_models_list)
    actions = p.add_subparsers(dest="models_command", metavar="ACTION")
    q = actions.add_parser("pack", help="copy a trained run into data/models/NAME")
    q.add_argument("run", help="ESPnet experiment directory (…/exp)")
    q.add_argument("name", help="the model's name")
    q.add_argument("--pair", required=True, metavar="SRC-TGT",
                   help="language pair it was trained on")
    q.add_argument("--average", type=_positive_int, default=3, metavar="N",
                   help="average the last N epoch snapshots [%(default)s]")
    q.add_argument("--command-line", default="", help="the command that trained it")
    q.add_argument("--dev-utterances", type=_count, default=100, metavar="N",
                   help="dev curve of each kept snapshot on N segments: greedy BLEU (ST; MT "
                        "of the gold transcripts), WER of the CTC's greedy transcripts (ASR) "
                        "[%(default)s]")
    q.add_argument("--float32", action="store_true",
                   help="store the weights in float32 [float16: half the file size]")
    q.add_argument("--out-root", default=None, metavar="DIR",
                   help="write DIR/NAME instead (e.g. to look at a run's learning curve "
                        "without shipping it) [data/models]")
    q.set_defaults(func=_models_pack)
    q = actions.add_parser("eval", help="offline quality → metrics.json: BLEU (greedy, "
                           "beam 5) per synthesizer; an ASR model's WER (greedy, beam 5, CTC "
                           "greedy), an MT model's BLEU on the gold transcripts")
    q.add_argument("name", help="a shipped model, or a directory packed with --out-root")
    _add_max_utterances(q)
    q.add_argument("--beams", type=_positive_int, nargs="+", default=[1, 5], metavar="B",
                   help="beam sizes [1 5]")
    _add_corpus(q)
    where = q.add_mutually_exclusive_group()
    where.add_argument("--out", default=None, metavar="DIR",
                       help="write DIR/metrics.json [runs/eval/NAME]")
    where.add_argument("--into-model", action="store_true",
                       help="write the model's own metrics.json and card.md instead (the "
                            "maintainers' packing flow: what `simul models` and the card show)")
    q.set_defaults(func=_models_eval)


def _decoding_commands(commands) -> None:
    p = commands.add_parser("decode", help="decode a corpus split into records (JSON lines)")
    _add_model(p)
    _add_policy(p, default="offline")
    p.add_argument("--beam", type=_positive_int, default=None, metavar="B",
                   help="the beam of a policy that has one (offline, onlinization): --set "
                        "beam=B [the policy's: offline 1]")
    _add_pair(p)
    _add_split(p)
    _add_corpus(p)
    _add_max_utterances(p)
    p.add_argument("--out", required=True, metavar="FILE",
                   help="records (JSON lines), each written as its utterance finishes")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted run: decode the utterances --out lacks (it "
                        "must hold records of the same model, policy, settings and device)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an existing --out [refused]")
    _add_device(p, what="where the model decodes; decisions are timed with the GPU's work "
                "included")
    p.set_defaults(func=_decode)

    p = commands.add_parser(
        "stream", help="translate a sound file, a corpus segment or a microphone as it plays",
        description="Feed audio to a policy in chunks and print each word as it is written, "
        "with the source time (s) it was written at; then the real-time factor (compute / "
        "audio). An offline model re-encodes the whole prefix read at every decision, so a "
        "talk of minutes is slow: stream a part of it (--start/--duration) or one segment. "
        "The shipped models have heard two synthesizers at the corpus' level only: other "
        "voices and quieter audio translate worse (conformer_bpe_en-es greedy BLEU 26.1 on a "
        "held-out festival voice against 69.1 on espeak-ng; 15.5 on audio ×0.1 against "
        "71.1, 64.7 with --level auto). See docs/reference/streaming.md.")
    _add_model(p)
    _add_policy(p)
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--wav", metavar="FILE",
                        help="a sound file (any rate or channels: resampled to 16 kHz mono)")
    source.add_argument("--segment", metavar="ID",
                        help="one segment of a corpus split, e.g. talk_0480_2 (see --corpus, "
                        "--pair, --split)")
    source.add_argument("--mic", action="store_true",
                        help="the microphone, until Ctrl-C (needs pip install 'simul[live]'); "
                        "the models have heard two synthesizers at the corpus' level only: "
                        "other voices translate worse")
    source.add_argument("--text", metavar="SENTENCE",
                        help="text a word at a time, for a text MT model and a policy that "
                        "runs on text, e.g. --model mt_transformer_bpe_en-de --policy "
                        "wait_k_text")
    source.add_argument("--text-file", metavar="FILE",
                        help="as --text, a sentence a line, each its own stream")
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
    p.add_argument("--level", choices=("auto", "off"), default=None,
                   help="auto: a causal gain brings speech to the corpus' level (quiet input "
                   "translates badly); off: the audio as it is [auto for --wav and --mic, off "
                   "for --segment]")
    _add_corpus(p, what="--segment: corpus root")
    _add_pair(p, what="--segment: language pair")
    _add_split(p, what="--segment: split")
    p.set_defaults(func=_stream)

    p = commands.add_parser("policies", help="list policies, their settings and papers")
    p.add_argument("name", nargs="?", default=None, metavar="POLICY",
                   help="explain one policy's settings, their meaning and units "
                        "(a name, or module:Class)")
    p.set_defaults(func=_policies)

    p = commands.add_parser("score", help="quality and latency of records (or instances.log)")
    p.add_argument("records", nargs="+", metavar="RECORDS",
                   help="simul records (JSON lines), a SimulEval instances.log or its folder; "
                        "several: one row per file, side by side")
    p.add_argument("--json", action="store_true",
                   help="one JSON object of metric → value (several files: one a line, "
                        "with its 'records' path)")
    p.set_defaults(func=_score)


def _sweep_commands(commands) -> None:
    p = commands.add_parser("sweep", help="run a grid of policy settings (resumable)")
    p.add_argument("spec", help="sweep spec (YAML): models, pair, splits, policies, output")
    p.add_argument("--force", action="store_true",
                   help="discard results of a different spec in the output directory")
    p.add_argument("--workers", type=_positive_int, default=None, metavar="N",
                   help="local processes; 1: this process [the spec's, else one per core]")
    _add_quiet(p)
    _add_sweep_options(p)
    _add_device(p, default=None, what="where the models decode; with cuda one worker per "
                "GPU unless --workers")
    p.set_defaults(func=_sweep)

    p = commands.add_parser(
        "store", help="the record store shared by all sweeps: describe or clear it",
        description="Sweeps take the records they would decode again (same model, corpus, "
        "segment, policy settings and decoding code) from the record store, and add what "
        "they decode. It lives in ~/.cache/simul/records; SIMUL_STORE=DIR moves it, "
        "SIMUL_STORE=off turns it off.")
    p.set_defaults(func=_store_info)
    actions = p.add_subparsers(dest="store_command", metavar="ACTION")
    actions.add_parser("info", help="location, records, size, records by model and policy")
    q = actions.add_parser("clear", help="remove records (all, or those chosen)")
    q.add_argument("--model", default=None, metavar="NAME",
                   help="only the records of this model (its name, or a checksum prefix)")
    q.add_argument("--older-than", type=float, default=None, metavar="DAYS",
                   help="only records stored more than DAYS days ago")
    q.add_argument("--yes", action="store_true",
                   help="remove them [only say how many would go]")
    q.set_defaults(func=_store_clear)

    p = commands.add_parser("reproduce", help="run the notebooks: every table and figure")
    p.add_argument("--quick", action="store_true", help="a handful of utterances per notebook")
    p.add_argument("--confirm", action="store_true",
                   help="after a full run: decide its undecided claims again on fresh segments "
                        "(as many as each needs), decoding only the settings they read")
    p.add_argument("--power", type=float, default=None, metavar="P",
                   help="with --confirm: decode enough fresh segments to decide each undecided "
                        "claim with probability P, were its effect as measured [0.8]")
    p.add_argument("--only", nargs="+", default=None, metavar="NAME",
                   help="tutorial, nguyen2021, papi2022, ma2020, polak2022, han2020, "
                        "compare_policies [all]")
    p.add_argument("--figures", default=None, metavar="DIR",
                   help="figures and tables [figures/]")
    p.add_argument("--executed", default=None, metavar="DIR",
                   help="executed notebooks [notebooks/executed/]")
    p.add_argument("--runs", default=None, metavar="DIR", help="sweep results [runs/]")
    _add_corpus(p, default=None)
    _add_max_utterances(p, default_text="each notebook's own")
    p.add_argument("--jobs", type=_positive_int, default=None, metavar="N",
                   help="notebooks at once [full run: 1, its sweeps use every core; "
                        "--quick: one per core]")
    _add_sweep_options(p)
    p.add_argument("--device", default=None, metavar="cpu|cuda|cuda:N",
                   help="where every notebook's sweeps decode (SIMUL_DEVICE for the kernels) "
                        "[$SIMUL_DEVICE, else cpu]")
    p.add_argument("--model", default=None, metavar="NAME|DIR|OWNER/REPO",
                   help="the model of the notebooks that study one (tutorial, nguyen2021's "
                        "Table 1, ma2020, polak2022, han2020) [each notebook's own]")
    p.add_argument("--parameters", default=None, metavar="FILE.yaml",
                   help="notebook parameters by name (YAML), e.g. pair, models per pair")
    p.set_defaults(func=_reproduce)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="simul",
        description="Simultaneous speech translation with offline-trained ESPnet2 models.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _corpus_commands(commands)
    _model_commands(commands)
    _decoding_commands(commands)
    _sweep_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code = args.func(args)
        sys.stdout.flush()  # a closed pipe (`simul score F | head`) fails here, not at exit
        return code
    except BrokenPipeError:
        # the reader went away: stop quietly, as `cat` does (stdout to /dev/null so that
        # Python's own flush at exit does not fail again)
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, the shell's status for a command a closed pipe stopped
    except (CorpusError, ValueError, FileNotFoundError) as e:
        print(f"simul: error: {e}", file=sys.stderr)
        return 2
