"""Training recipes: corpus export, tokenizers, ESPnet2 statistics and training, resumable.

``simul train NAME`` runs the recipe ``simul/models/recipes/NAME.yaml`` in a work
directory (default ``~/.cache/simul/runs/NAME``, outside the repository so that a run
survives a fresh checkout). Every stage skips what is already done, and ESPnet's trainer
resumes from its last epoch checkpoint, so the same command continues a stopped run.

Stages: 1 export the corpus splits (one wav per segment), 2 SentencePiece models and token
lists, 3 ESPnet ``--collect_stats`` (shape files and global-MVN statistics of train),
4 ESPnet training (``espnet2.bin.st_train``), logged to ``exp/train.log``.

``simul: task:`` picks the ESPnet task (:data:`TASKS`): ``st`` (speech translation, the
default), ``asr`` (English speech → its transcript: the source side of the pair, units from
``tokens``) or ``mt`` (English transcript → translation, no audio exported), the two halves
of a cascade.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import yaml

from simul.corpus import DEFAULT_ROOT
from simul.models import parent, registry
from simul.models.training import augment, prepare

RECIPES = Path(__file__).resolve().parents[1] / "recipes"
DEFAULT_RUNS = Path(os.environ.get("SIMUL_RUNS", Path.home() / ".cache" / "simul" / "runs"))


def recipes() -> list[str]:
    return sorted(p.stem for p in RECIPES.glob("*.yaml"))


def load_recipe(name: str) -> dict:
    path = RECIPES / f"{name}.yaml"
    if not path.is_file():
        raise ValueError(f"no recipe {name!r}; known: {', '.join(recipes())}")
    recipe = yaml.safe_load(path.read_text())
    for key in ("simul", "espnet"):
        if key not in recipe:
            raise ValueError(f"{path}: section {key!r} missing")
    return recipe


#: Files of a shipped model that a run may start from (weights, config with its units, and
#: the SentencePiece models).
_START_FILES = ("config.yaml", "model.pth", "bpe.model", "src_bpe.model", "simul.json",
                "feats_stats.npz")


def apply_overrides(recipe: dict, overrides=()) -> dict:
    """``recipe`` with ``SECTION.KEY[.KEY…]=VALUE`` settings applied (VALUE read as YAML),
    e.g. ``espnet.specaug=null`` or ``simul.speed_perturb=[0.9,1.0,1.1]``: one recipe, the
    variants of an ablation written down as their command lines."""
    import copy

    out = copy.deepcopy(recipe)
    for item in overrides:
        key, sep, value = item.partition("=")
        path = key.split(".")
        if not sep or len(path) < 2 or path[0] not in ("simul", "espnet"):
            raise ValueError(f"--set expects simul.KEY=VALUE or espnet.KEY=VALUE, got {item!r}")
        node = out
        for part in path[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ValueError(f"--set {item!r}: {part!r} is not a mapping in the recipe")
        node[path[-1]] = yaml.safe_load(value)
    return out


def model_source(entry: dict, name: str, workdir: Path | None = None) -> Path:
    """Directory of the shipped model that ``entry`` names: ``data/models/MODEL``, or, with
    ``commit``, the model as git holds it at that revision (extracted into
    ``workdir/start/MODEL@COMMIT``). A revision lets a model be retrained from its own
    earlier weights, e.g. a model of an older corpus, while the recipe stays reproducible.
    A revision's child model (one that ships only its changes) gets the parents it was made
    from, at the same revision, beside it (``workdir/start/PARENT``, where
    :func:`simul.models.parent.assembled` looks first): today's parent may be retrained."""
    model, commit = entry.get("model"), entry.get("commit")
    if not isinstance(model, str):
        raise ValueError(f"recipe {name}: a start entry needs 'model' (a shipped model)")
    if commit is None:  # where the shipped model is (or will be, once trained and packed)
        return registry.start_dir(model)
    start = Path(workdir or DEFAULT_RUNS / name) / "start"
    out = start / f"{model}@{commit}"
    done = out / ".files"  # which files were taken: a run of an older simul took fewer
    if not (done.is_file() and done.read_text().split() == list(_START_FILES)):
        _extract(model, commit, out, name)
    child = out
    while (entry := parent.info(child)) is not None:
        sibling = start / str(entry.get("model"))
        made_from = entry.get("sha256")
        if not ((sibling / "model.pth").is_file()
                and parent.sha256(sibling / "model.pth") == made_from):
            _extract(str(entry.get("model")), commit, sibling, name)
            if parent.sha256(sibling / "model.pth") != made_from:
                raise ValueError(f"recipe {name}: {model} at git revision {commit!r} was made "
                                 f"from {entry.get('model')} {str(made_from)[:12]}…, which "
                                 "that revision does not hold")
        child = sibling
    return out


def _extract(model: str, commit: str, out: Path, name: str) -> None:
    """Write ``data/models/MODEL`` as git holds it at ``commit`` into ``out`` (its
    :data:`_START_FILES` that exist there), through a temporary directory."""
    repo = registry.MODELS_DIR.parents[1]
    rel = registry.MODELS_DIR.relative_to(repo) / model
    listing = subprocess.run(["git", "-C", str(repo), "ls-tree", "--name-only",
                              f"{commit}:{rel.as_posix()}"],
                             capture_output=True, text=True, check=False)
    if listing.returncode != 0:
        raise ValueError(f"recipe {name}: cannot read {rel} at git revision {commit!r}: "
                         f"{listing.stderr.strip()[:300]}")
    tmp = out.with_name(out.name + ".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    for f in set(listing.stdout.split()) & set(_START_FILES):
        blob = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{(rel / f).as_posix()}"],
                              capture_output=True, check=True).stdout
        (tmp / f).write_bytes(blob)
    if not (tmp / "model.pth").is_file():
        raise ValueError(f"recipe {name}: no model.pth in {rel} at git revision {commit!r}")
    (tmp / ".files").write_text(" ".join(_START_FILES))
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)


def _tokens(spec: dict, text: Path, out: Path, *, side: str = "target", name: str = "",
            workdir: Path | None = None) -> tuple[str, Path, Path | None]:
    """Token type, token list and SentencePiece model (None for characters).

    ``spec`` is ``{type: bpe|unigram, size: N}``, ``{type: char}``, or ``{from: {model: M,
    commit: REV}}``: the units of a shipped model (its token list and SentencePiece model),
    so that a run started from it keeps the rows of its embeddings and output layers."""
    out.mkdir(parents=True, exist_ok=True)
    if "from" in spec:
        src = model_source(spec["from"], name, workdir)
        if not (src / "config.yaml").is_file():
            raise ValueError(f"recipe {name}: units from {spec['from'].get('model')}: "
                             f"{src / 'config.yaml'} missing — train and pack it first")
        conf = yaml.safe_load((src / "config.yaml").read_text())
        key, kind, sp = (("token_list", "token_type", "bpe.model") if side == "target"
                         else ("src_token_list", "src_token_type", "src_bpe.model"))
        (out / "tokens.txt").write_text("\n".join(conf[key]) + "\n")
        if conf.get(kind, "bpe") == "char":
            return "char", out / "tokens.txt", None
        (out / "sp.model").write_bytes((src / sp).read_bytes())
        return "bpe", out / "tokens.txt", out / "sp.model"
    if spec["type"] == "char":
        return "char", prepare.char_token_list(text, out / "tokens.txt"), None
    model = prepare.train_sentencepiece(text, out / "sp", spec["size"], spec["type"])
    return "bpe", prepare.token_list(model, out / "tokens.txt"), model


def _espnet(module: str, args: list[str], log: Path) -> None:
    """Run an espnet2.bin module in a subprocess (quiet imports), output appended to ``log``."""
    code = (
        "import sys; from simul.models import extensions; "
        "from simul.models.espnet_env import import_espnet; extensions.register(); "
        f"m = import_espnet({module!r}); m.main(sys.argv[1:])"
    )
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2")}
    returncode = run_child([sys.executable, "-c", code, *args], log, env=env)
    if returncode != 0:
        raise RuntimeError(f"{module} failed (exit {returncode}); see {log}")


def _die_with_parent(parent: int) -> None:  # pragma: no cover - in the child, before exec
    """Linux: the child gets SIGTERM when its parent dies, even of SIGKILL; a parent that
    died before this ran is seen at once."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(1)


def run_child(cmd: list[str], log: Path, *, env: dict | None = None) -> int:
    """Run ``cmd`` with its output appended to ``log``; return its exit status. The child
    does not outlive this process: it is terminated when this process is interrupted or
    killed (a stopped ``simul train`` must not leave its trainer running)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a") as f:
        proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env,
                                preexec_fn=functools.partial(_die_with_parent, os.getpid()))
        try:
            return proc.wait()
        except BaseException:  # Ctrl-C (or any error) while waiting: stop the child first
            proc.terminate()
            proc.wait()
            raise


# The modules whose rows are indexed by units, and the token list that indexes them:
# embeddings and output layers of ESPnet's RNN and Transformer decoders, the CTC projection.
UNIT_INDEXED = {"decoder.embed": "token_list", "decoder.output": "token_list",
                "decoder.output_layer": "token_list", "ctc.ctc_lo": "src_token_list"}


def units_of_module(module: str) -> set[str]:
    """Token lists a module (or any part of it) is indexed by: ``decoder`` →
    {token_list}; ``decoder.decoder`` (an RNN decoder's LSTM cells) or ``decoder.att_list``
    → none; ``encoder`` → none."""
    return {key for tied, key in UNIT_INDEXED.items()
            if tied == module or tied.startswith(module + ".") or module.startswith(tied + ".")}


def init_params(init: list[dict], name: str, token_lists: dict[str, list[str]] | None = None,
                workdir: Path | None = None) -> list[str]:
    """ESPnet ``init_param`` entries (``model.pth:src_module:dst_module``) for a recipe's
    ``simul.init`` list: modules copied from a shipped model before the first update, e.g.
    ``[{model: blstm_char_en-es, modules: [encoder, ctc]}]`` (same audio, same source units).
    A module ``SRC:DST`` copies the start model's ``SRC`` into this model's ``DST``, e.g.
    ``encoder.encoders.0:encoder.encoders.6`` (a deeper encoder grown from a shallower one).

    ``token_lists`` (``token_list``/``src_token_list`` → units of this run): a decoder or CTC
    is only copied from a model with exactly the same units, since its rows are indexed by
    them (ESPnet would copy mismatched rows silently when the sizes agree). An entry with
    ``commit`` copies from the model as git holds it at that revision (:func:`model_source`)."""
    out = []
    for n, entry in enumerate(init):
        model, modules = entry.get("model"), entry.get("modules")
        if not isinstance(model, str) or not isinstance(modules, list) or not modules:
            raise ValueError(f"recipe {name}: simul.init[{n}] needs 'model' (a shipped model) "
                             "and 'modules' (a list, e.g. [encoder])")
        path = model_source(entry, name, workdir) / "model.pth"
        if not path.is_file():
            raise ValueError(f"recipe {name}: simul.init[{n}]: {path} missing — train and pack "
                             f"{model} first (`simul train {model}`, `simul models pack`)")
        shipped = yaml.safe_load((path.parent / "config.yaml").read_text())
        if "src_token_list" not in shipped:  # an ASR model: its CTC's units are its own
            shipped = {**shipped, "src_token_list": shipped.get("token_list")}
        pairs = [(str(m).partition(":")[0], str(m).partition(":")[2] or str(m)) for m in modules]
        for module, target in pairs:
            for key in sorted(units_of_module(module) | units_of_module(target)):
                if token_lists is not None and shipped.get(key) != token_lists.get(key):
                    raise ValueError(
                        f"recipe {name}: simul.init[{n}]: cannot copy {module!r} from {model}: "
                        f"its {key} differs from this run's ({len(shipped.get(key) or [])} vs "
                        f"{len(token_lists.get(key) or [])} units); copy its unit-free parts "
                        "instead (e.g. decoder.decoder and decoder.att_list of an RNN decoder)")
        whole = parent.assembled(path.parent, path)  # a child model: with its parent's modules
        out += [f"{whole}:{module}:{target}" for module, target in pairs]
    return out


TASKS = {
    # task: (ESPnet module, [(exported file, ESPnet data name, type)])
    "st": ("espnet2.bin.st_train", [("wav.scp", "speech", "sound"), ("text", "text", "text"),
                                    ("src_text", "src_text", "text")]),
    "asr": ("espnet2.bin.asr_train", [("wav.scp", "speech", "sound"),
                                      ("src_text", "text", "text")]),
    "mt": ("espnet2.bin.mt_train", [("src_text", "src_text", "text"), ("text", "text", "text")]),
}
"""The ESPnet tasks a recipe may train and the exported files each reads."""


def check_simultaneous(recipe: dict, name: str, task: str) -> None:
    """A ``transformer_waitk`` recipe with ``detection: adaptive`` counts source words with
    the model's source CTC: an ST task whose model has one (``model_conf.asr_weight`` > 0).
    Refused with one line naming the field, before anything is exported."""
    espnet = recipe["espnet"]
    detection = (espnet.get("decoder_conf") or {}).get("detection", "fixed")
    if espnet.get("decoder") != "transformer_waitk" or detection == "fixed":
        return
    if detection != "adaptive":
        raise ValueError(f"recipe {name}: espnet.decoder_conf.detection: 'fixed' or "
                         f"'adaptive', got {detection!r}")
    if task != "st":
        raise ValueError(f"recipe {name}: espnet.decoder_conf.detection: adaptive detects "
                         f"words in speech; simul.task is {task!r}")
    if not float((espnet.get("model_conf") or {}).get("asr_weight", 0.0)) > 0:
        raise ValueError(f"recipe {name}: espnet.decoder_conf.detection: adaptive counts "
                         "source words with the source CTC; set espnet.model_conf.asr_weight "
                         "> 0")


def _data_args(workdir: Path, train_dir: str = "train", task: str = "st",
               extra=()) -> list[str]:
    args = []
    for phase, split in (("train", train_dir), ("valid", "dev")):
        d = workdir / "data" / split
        for file, data_name, kind in (*TASKS[task][1], *extra):
            args += [f"--{phase}_data_path_and_name_and_type", f"{d}/{file},{data_name},{kind}"]
    return args


def collect_whole(stats: Path, collect) -> None:
    """``collect(folder)`` (ESPnet's statistics pass) into a folder beside ``stats``, moved into
    place when it returns: a pass stopped halfway leaves no shape file that a resumed run
    would take for a finished pass (ESPnet writes them as it goes), in the run or in a
    lane's shared statistics where ``stats`` links; the next pass starts again."""
    target = stats.resolve()
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)  # ESPnet writes into it (a pass that writes nothing: empty)
    collect(partial)
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)


def train(name: str, *, corpus_root: str | Path = DEFAULT_ROOT, workdir: str | Path | None = None,
          device: str = "cpu", max_epoch: int | None = None, overrides=(),
          progress: bool = True) -> Path:
    """Run (or continue) recipe ``name``; return the ESPnet experiment directory.

    ``overrides`` (see :func:`apply_overrides`) change the recipe for this run; the recipe
    as run is kept in ``WORKDIR/recipe.yaml``, and a run directory refuses to continue under
    a different one. ``simul.speed_perturb: [0.9, 1.0, 1.1]`` trains on speed-perturbed
    copies of the train split (:func:`prepare.perturb_speed`); ``simul.augment`` hears them
    in rooms, with noise and at other levels (:mod:`simul.models.training.augment`)."""
    recipe = apply_overrides(load_recipe(name), overrides)
    pair = recipe["simul"]["pair"]
    task = recipe["simul"].get("task", "st")
    if task not in TASKS:
        raise ValueError(f"recipe {name}: simul.task {task!r}: one of {', '.join(TASKS)}")
    check_simultaneous(recipe, name, task)  # before the run directory is made
    module, data = TASKS[task]
    workdir = Path(workdir or DEFAULT_RUNS / name)
    workdir.mkdir(parents=True, exist_ok=True)
    as_run = workdir / "recipe.yaml"
    text = yaml.safe_dump(recipe, sort_keys=False, allow_unicode=True)
    if as_run.is_file() and as_run.read_text() != text:
        raise ValueError(f"{workdir} was started with another recipe ({as_run}); continue it "
                         "with the same recipe and --set options, or choose another --workdir")
    as_run.write_text(text)

    stats_from = None  # checked before any export, so a wrong start fails at once
    keep = recipe["simul"].get("normalize_from")
    if keep is not None and task != "mt":
        if not isinstance(keep, dict):
            raise ValueError(f"recipe {name}: simul.normalize_from: {{model: M[, commit: C]}}, "
                             f"got {keep!r}")
        stats_from = model_source(keep, name, workdir) / "feats_stats.npz"
        if not stats_from.is_file():
            raise ValueError(f"recipe {name}: simul.normalize_from: {{model: M[, commit: C]}} "
                             f"with a feats_stats.npz; {stats_from} is missing")
    factors = tuple(recipe["simul"].get("speed_perturb") or (1.0,))
    aug = augment.spec(recipe["simul"].get("augment"), name)
    train_dir = "train" if factors == (1.0,) else "train_sp"
    if aug:
        train_dir += "_aug"
    if task == "mt" and (factors != (1.0,) or aug):
        raise ValueError(f"recipe {name}: simul.speed_perturb and simul.augment change audio; "
                         "an mt task has none")
    gains = functools.partial(augment.gain_db, aug) if aug and aug["gain_db"] else None
    for split, out, speeds, gain in (("train", train_dir, factors, gains),  # 1
                                     ("dev", "dev", (1.0,), None)):
        prepare.export_split(corpus_root, pair, split, workdir / "data" / out,
                             speed_factors=speeds, progress=progress, audio=task != "mt",
                             gain_db=gain)
    conf = dict(recipe["espnet"])
    if aug:  # rooms and noise, mixed in by ESPnet's preprocessor at every training read
        conf.update(augment.prepare(aug, workdir / "augment",
                                    workdir / "data" / train_dir / "wav.scp", progress=progress))
    if task == "asr":  # 2: the transcript's units are the ASR model's only ones
        tok_type, tok_list, bpe = _tokens(recipe["simul"]["tokens"],
                                          workdir / "data" / train_dir / "src_text",
                                          workdir / "tokens", side="source", name=name,
                                          workdir=workdir)
        conf.update(token_type=tok_type, token_list=str(tok_list))
        src_bpe = None
    else:
        tok_type, tok_list, bpe = _tokens(recipe["simul"]["tokens"],
                                          workdir / "data" / train_dir / "text",
                                          workdir / "tokens", name=name, workdir=workdir)
        src_type, src_list, src_bpe = _tokens(recipe["simul"]["src_tokens"],
                                              workdir / "data" / train_dir / "src_text",
                                              workdir / "src_tokens", side="source",
                                              name=name, workdir=workdir)
        conf.update(token_type=tok_type, token_list=str(tok_list), src_token_type=src_type,
                    src_token_list=str(src_list))
    if bpe:
        conf["bpemodel"] = str(bpe)
    if src_bpe:
        conf["src_bpemodel"] = str(src_bpe)
    if max_epoch is not None:
        conf["max_epoch"] = max_epoch
    extra = []  # data beyond the task's own, e.g. the oracle boundaries of MMA's pre-decision
    boundaries = (conf.get("decoder_conf") or {}).get("pre_decision", "fixed")
    if conf.get("decoder") == "transformer_mma" and boundaries != "fixed":
        for split, out, speeds in (("train", train_dir, factors), ("dev", "dev", (1.0,))):
            prepare.export_boundaries(corpus_root, pair, split, workdir / "data" / out,
                                      boundaries, speed_factors=speeds, progress=progress)
        extra = [(f"{boundaries}_ends", "block_ms", "text_float")]
        conf["allow_variable_data_keys"] = True  # ESPnet's ST task names no such data
    if conf.get("decoder") == "transformer_waitk":  # simultaneous training: target words
        conf["decoder_conf"] = {**(conf.get("decoder_conf") or {}),  # from this run's units
                                "units_file": str(tok_list), "unit_type": tok_type}
        if task == "mt":  # wait-k over source words: the source units make them
            conf["decoder_conf"].update(source="text", src_units_file=str(src_list),
                                        src_unit_type=src_type)
        elif conf["decoder_conf"].get("detection") == "adaptive":  # the source CTC's words
            conf["decoder_conf"].update(src_units_file=str(src_list), src_unit_type=src_type)
    units = {key: Path(conf[key]).read_text().splitlines()
             for key in ("token_list", "src_token_list") if key in conf}
    if task == "asr":  # its units are English ones: an ST model's source (CTC) units
        units["src_token_list"] = units["token_list"]
    conf["init_param"] = init_params(recipe["simul"].get("init") or [], name, units, workdir)
    ngpu = ["--ngpu", "1" if device.startswith("cuda") else "0"]

    stats = workdir / "stats"  # 3
    stats_file = stats / "train" / "feats_stats.npz"
    if not (stats / "train" / f"{data[0][1]}_shape").is_file():
        stats_conf = {k: v for k, v in conf.items() if k not in ("normalize", "normalize_conf")}
        (workdir / "stats_config.yaml").write_text(yaml.safe_dump(stats_conf, sort_keys=False))
        first = data[0][0]  # the file whose ids ESPnet iterates over
        collect_whole(stats, lambda out: _espnet(module, [
            "--config", str(workdir / "stats_config.yaml"), "--collect_stats", "true",
            "--output_dir", str(out), "--use_preprocessor", "true",
            "--train_shape_file", f"{workdir}/data/{train_dir}/{first}",
            "--valid_shape_file", f"{workdir}/data/dev/{first}",
            "--batch_type", "unsorted", "--batch_size", "32", *ngpu,
            *_data_args(workdir, train_dir, task, extra),
        ], workdir / "stats.log"))

    if task != "mt":  # 4 (text has no feature statistics)
        conf["normalize_conf"] = {"stats_file": str(stats_file)}
    if stats_from is not None:  # a fine-tune keeps its parent's input scale
        conf["normalize_conf"] = {"stats_file": str(stats_from)}
    (workdir / "train_config.yaml").write_text(yaml.safe_dump(conf, sort_keys=False))
    exp = workdir / "exp"
    shapes = []
    for phase in ("train", "valid"):
        for key in (f"{data_name}_shape" for _, data_name, _ in data):
            shapes += [f"--{phase}_shape_file", str(stats / phase / key)]
    _espnet(module, [
        "--config", str(workdir / "train_config.yaml"), "--output_dir", str(exp),
        "--use_preprocessor", "true", "--resume", "true", *ngpu, *shapes,
        *_data_args(workdir, train_dir, task, extra),
    ], exp / "train.log")
    return exp


def main_train(recipe: str | None, *, list_only: bool = False, corpus_root=DEFAULT_ROOT,
               workdir=None, device: str = "cpu", max_epoch: int | None = None,
               overrides=()) -> int:
    """``simul train``: the recipes (no recipe, or ``list_only``), or run one."""
    if list_only or not recipe:
        print("\n".join(recipes()))
        return 0
    exp = train(recipe, corpus_root=corpus_root, workdir=workdir, device=device,
                max_epoch=max_epoch, overrides=overrides)
    print(f"trained: {exp}")
    return 0
