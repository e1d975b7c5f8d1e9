"""Packing a trained ESPnet run into a model directory (``simul models pack``).

The directory holds everything ESPnet needs with paths relative to it: ``config.yaml``,
``model.pth`` (the last snapshots averaged, float16 by default), SentencePiece models, the
global-MVN statistics, the learning curve (``learning_curve.csv``/``.png``,
:mod:`simul.zoo.curves`) and ``simul.json`` (pair, ESPnet task, how it was made).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import torch
import yaml
from tqdm import tqdm

from simul.models import parent as parent_mod
from simul.models.registry import MODELS_DIR, config_task
from simul.zoo.curves import DEV_CURVE, dev_score, learning_curve, plot_curve


def epoch_files(exp_dir: Path) -> list[Path]:
    """ESPnet's kept per-epoch snapshots, oldest first."""
    files = [(int(m.group(1)), p) for p in exp_dir.glob("*epoch.pth")
             if (m := re.fullmatch(r"(\d+)epoch\.pth", p.name))]
    return [p for _, p in sorted(files)]


def average(files: list[Path]) -> dict:
    """Parameter-wise mean of state dicts (integer buffers taken from the last file)."""
    if not files:
        raise ValueError("no checkpoints to average")
    states = [torch.load(f, map_location="cpu") for f in files]
    out = {}
    for key, value in states[-1].items():
        if value.is_floating_point():
            out[key] = sum(s[key] for s in states) / len(states)
        else:
            out[key] = value
    return out


def half(state: dict) -> dict:
    """Floating-point tensors stored as float16 (integer buffers as they are).

    Shipped files stay under ~15 MB (a 4.8 M-parameter model is 19 MB in float32); loading
    copies them into the float32 modules, so models still compute in float32, with weights
    rounded to float16's 11 significant bits."""
    return {k: v.half() if v.is_floating_point() else v for k, v in state.items()}


WAITK_KEYS = ("k_train", "word_ms", "frame_ms", "units_file", "unit_type", "step", "source",
              "detection", "src_units_file", "src_unit_type")
"""decoder_conf keys of simul's ``transformer_waitk`` training decoder
(:mod:`simul.models.extensions.waitk_decoder`) that ESPnet's ``transformer`` decoder does not
take."""


MMA_DEFAULTS = {"step_ms": 280.0, "frame_ms": 80.0, "latency_weight": 0.0,
                "variance_weight": 0.0, "noise_std": 1.0}
"""decoder_conf of a ``transformer_mma`` run that its card states (the defaults of
:class:`simul.models.extensions.mma_decoder.MMATransformerDecoder`); the packed config keeps them
all."""


def _packed_config(exp_dir: Path, out: Path) -> dict:
    """The run's config.yaml with paths relative to ``out`` (files copied there)."""
    conf = yaml.safe_load((exp_dir / "config.yaml").read_text())
    for key in ("bpemodel", "src_bpemodel"):
        if conf.get(key):
            target = "bpe.model" if key == "bpemodel" else "src_bpe.model"
            shutil.copy(conf[key], out / target)
            conf[key] = target
    stats = (conf.get("normalize_conf") or {}).get("stats_file")
    if stats:
        shutil.copy(stats, out / "feats_stats.npz")
        conf["normalize_conf"]["stats_file"] = "feats_stats.npz"
    if conf.get("encoder") == "rnn_padded":  # simul's training twin → ESPnet's own encoder
        conf["encoder"] = "rnn"
        conf["encoder_conf"]["dropout"] = 0.0  # RNNP would apply it at inference too
    if conf.get("decoder") == "transformer_waitk":  # trained in simultaneous mode: at
        # inference it is ESPnet's own decoder (same parameters); pack() keeps the schedule
        # it was trained with in simul.json ("simultaneous_training")
        for key in WAITK_KEYS:
            conf["decoder_conf"].pop(key, None)
        conf["decoder"] = "transformer"
    conf["output_dir"] = "."
    conf.pop("config", None)  # the run's own config file, an absolute path elsewhere
    # Training-only starts (absolute paths of this machine): kept in simul.json instead,
    # as "shipped-model/model.pth:source-module:module".
    conf.pop("init_param", None)
    for key in ("train_data_path_and_name_and_type", "valid_data_path_and_name_and_type",
                "train_shape_file", "valid_shape_file"):
        conf.pop(key, None)
    (out / "config.yaml").write_text(yaml.safe_dump(conf, allow_unicode=True, sort_keys=False))
    return conf


def run_task(exp_dir: Path, conf: dict) -> str:
    """The ESPnet task of a training run: ``simul.task`` of the recipe it ran (``recipe.yaml``
    beside ``exp``, as :func:`simul.models.training.train.train` keeps it), else what its config
    says
    (:func:`config_task`)."""
    recipe = Path(exp_dir).parent / "recipe.yaml"
    if recipe.is_file():
        return (yaml.safe_load(recipe.read_text()).get("simul") or {}).get("task", "st")
    return config_task(conf)


def child_of_parent(run_conf: dict, state: dict, models_dir: Path,
                    name: str) -> tuple[dict | None, dict]:
    """(``parent`` entry, the state to ship) for a run that froze modules copied from one
    shipped model (ESPnet ``freeze_param`` ⊆ the modules of its ``init_param`` entries from
    that model): the child ships only what it changed (:mod:`simul.models.parent`). A run
    without frozen modules, or whose frozen modules no longer match the shipped model (it
    was retrained since), ships whole: ``(None, state)``."""
    frozen = list(run_conf.get("freeze_param") or [])
    if not frozen:
        return None, state
    sources: dict[str, set[str]] = {}
    for entry in run_conf.get("init_param") or []:
        path, src, *dst = entry.split(":")
        model = Path(path).parent.name.split("@")[0]
        if (dst[0] if dst else src) == src:
            sources.setdefault(model, set()).add(src)
    for model, modules in sources.items():
        # beside the packed model (a family packed elsewhere), else the shipped one
        parent_file = models_dir / model / "model.pth"
        if not parent_file.is_file():
            parent_file = MODELS_DIR / model / "model.pth"
        if model == name or not parent_file.is_file() or not set(frozen) <= modules:
            continue
        try:
            whole = parent_mod.assembled(parent_file.parent, parent_file)  # a child too?
            own = parent_mod.split(state, torch.load(whole, map_location="cpu"),
                                   sorted(frozen), where=f"{name} (parent {model})")
        except parent_mod.ParentError as e:
            print(f"{name}: shipped whole: {e}")
            return None, state
        return {"model": model, "sha256": parent_mod.sha256(parent_file),
                "modules": sorted(frozen)}, own
    return None, state


STALE = ("metrics.json", "card.md")
"""What measures the weights a directory held: packing new weights over them removes both
(``simul models eval --into-model`` writes them again), so no number outlives its model."""


def continued(run_conf: dict, name: str, out_root: Path) -> Path | None:
    """The packed model a run continues: every ``init_param`` entry from ``out_root/name``
    itself (the model packed before under the same name), nothing frozen; else None. Its
    learning curve and command come first in the new one's (:func:`pack`)."""
    inits = run_conf.get("init_param") or []
    if not inits or run_conf.get("freeze_param"):
        return None
    start = out_root / name
    dirs = {Path(entry.split(":", 1)[0]).parent for entry in inits}
    if len(dirs) != 1 or not start.is_dir():
        return None
    return start if next(iter(dirs)).resolve() == start.resolve() else None


def pack(exp_dir: str | Path, name: str, *, pair: str, n_average: int = 3,
         out_root: Path = MODELS_DIR, command: str = "", dev_utterances: int = 0,
         corpus_root=None, progress: bool = True, float16: bool = True) -> Path:
    """Copy a trained ESPnet run (ST, or a cascade's ASR or MT) into ``out_root/name`` with
    relative paths.

    The averaged weights are stored in float16 unless ``float16`` is False (see :func:`half`).
    simul.json records the run's task (:func:`run_task`).

    ``dev_utterances`` > 0 also decodes that many dev segments with every kept epoch
    snapshot and with the average, for the learning curve (ESPnet's own validation BLEU,
    and an ASR's cer/wer, are teacher-forced), by the run's task (:data:`DEV_CURVE`):
    greedy BLEU (``dev_bleu_greedy``) of an ST model's translations of the speech or of an
    MT model's of the gold English transcripts; an ASR model's WER in % of its greedy CTC
    transcripts (``dev_wer_ctc``), what the cascade policy feeds the MT."""
    exp_dir = Path(exp_dir)
    run_conf = yaml.safe_load((exp_dir / "config.yaml").read_text())
    task = run_task(exp_dir, run_conf)
    out = out_root / name
    before = continued(run_conf, name, out_root)
    earlier: list[dict] = []
    earlier_info: dict = {}
    if before is not None:  # read before the new weights replace it
        import csv

        earlier_info = json.loads((before / "simul.json").read_text())
        if (before / "learning_curve.csv").is_file():
            with open(before / "learning_curve.csv", newline="") as f:
                earlier = [{k: (float(v) if k != "epoch" else int(v)) for k, v in r.items()
                            if v != ""} for r in csv.DictReader(f)]
    out.mkdir(parents=True, exist_ok=True)
    for stale in STALE:
        (out / stale).unlink(missing_ok=True)
    _packed_config(exp_dir, out)
    snapshots = epoch_files(exp_dir)
    files = snapshots[-n_average:]
    state = average(files)
    stored = half(state) if float16 else state
    parent_entry, stored = child_of_parent(run_conf, stored, out_root, name)
    torch.save(stored, out / "model.pth")
    curve = learning_curve(exp_dir, task)
    info = {"pair": pair, "task": task, "averaged": [f.name for f in files], "command": command,
            "run": str(exp_dir), "stored": "float16" if float16 else "float32"}
    if parent_entry is not None:
        info[parent_mod.KEY] = parent_entry
    if before is not None:  # the earlier run's epochs, then this one's, numbered on
        info["continues"] = {"epochs": len(earlier), "averaged": earlier_info.get("averaged"),
                             "command": earlier_info.get("command", "")}
        info["command"] = "\n".join(
            line for line in (earlier_info.get("command", ""),
                              f"simul models pack RUN/exp {name} --pair {pair} "
                              f"--average {len(earlier_info.get('averaged') or [])}",
                              command) if line)
    cost = exp_dir.parent / "cost.json"  # simul meta-train's: CPU time, the start's too
    if cost.is_file():
        info["training_cost"] = json.loads(cost.read_text())
    from simul.corpus import DEFAULT_ROOT, manifest

    corpus = Path(corpus_root or DEFAULT_ROOT)
    if (corpus / manifest.NAME).is_file():  # the corpus the run was exported from
        # the version of the pair's files (per pair: a new pair leaves the others current)
        found = manifest.read(corpus)
        info["corpus_builder_version"] = found.get("pair_versions", {}).get(
            pair, found.get("builder_version"))
    recipe_file = exp_dir.parent / "recipe.yaml"  # simul train's recipe as run
    if recipe_file.is_file():
        from simul.models.training import augment

        as_run = (yaml.safe_load(recipe_file.read_text()) or {}).get("simul") or {}
        info["augmentation"] = {"speed_perturb": as_run.get("speed_perturb"),
                                **(augment.spec(as_run.get("augment"), name) or {})}
    elif (exp_dir.parent / "run.json").is_file():  # simul meta-train's stage, as run
        heard = json.loads((exp_dir.parent / "run.json").read_text()).get("augmentation")
        if heard:
            info["augmentation"] = heard
    if run_conf.get("init_param"):
        info["initialized_from"] = []
        for entry in run_conf["init_param"]:  # /…/NAME/model.pth:src:dst → NAME/model.pth:src:dst
            path, modules = entry.split(":", 1)
            info["initialized_from"].append(f"{Path(path).parent.name}/{Path(path).name}:{modules}")
    if run_conf.get("freeze_param"):
        info["frozen"] = list(run_conf["freeze_param"])
    if run_conf.get("decoder") == "transformer_waitk":
        dec = run_conf.get("decoder_conf") or {}
        if dec.get("source") == "text":  # a text MT: wait-k over source words
            info["simultaneous_training"] = {"k_train": dec.get("k_train", 3),
                                             "source": "text"}
        elif dec.get("detection") == "adaptive":  # words from the source CTC (P22 §2.2)
            info["simultaneous_training"] = {"k_train": dec.get("k_train", 3),
                                             "detection": "adaptive"}
        else:
            info["simultaneous_training"] = {"k_train": dec.get("k_train", 3),
                                             "word_ms": dec.get("word_ms", 280.0),
                                             "frame_ms": dec.get("frame_ms", 80.0),
                                             "detection": "fixed"}
            if dec.get("step", "word") != "word":  # a unit per stride (Han et al. 2020)
                info["simultaneous_training"]["step"] = dec["step"]
    if run_conf.get("decoder") == "transformer_mma":
        dec = run_conf.get("decoder_conf") or {}
        info["monotonic_attention"] = {
            key: dec.get(key, default) for key, default in MMA_DEFAULTS.items()}
    (out / "simul.json").write_text(json.dumps(info, indent=1) + "\n")  # the loader reads it
    if dev_utterances > 0:
        import tempfile

        column, what = DEV_CURVE[task]
        by_epoch = {r["epoch"]: r for r in curve}
        for f in tqdm(snapshots, desc=f"{what} per snapshot", disable=not progress):
            with tempfile.TemporaryDirectory() as tmp:
                shutil.copy(out / "config.yaml", tmp)
                for extra in ("bpe.model", "src_bpe.model", "feats_stats.npz"):
                    if (out / extra).is_file():
                        (Path(tmp) / extra).symlink_to((out / extra).resolve())
                (Path(tmp) / "model.pth").symlink_to(f.resolve())
                epoch = int(f.name.split("epoch")[0])
                by_epoch.setdefault(epoch, {"epoch": epoch})[column] = dev_score(
                    Path(tmp), task, pair, dev_utterances, corpus_root=corpus_root)
        curve = sorted(by_epoch.values(), key=lambda r: r["epoch"])
        info["dev_utterances"] = dev_utterances
        info[f"{column}_averaged"] = dev_score(out, task, pair, dev_utterances,
                                               corpus_root=corpus_root)
    if earlier:
        shift = max(r["epoch"] for r in earlier)
        curve = earlier + [{**r, "epoch": r["epoch"] + shift} for r in curve]
    if curve:
        keys = sorted({k for r in curve for k in r}, key=lambda k: (k != "epoch", k))
        lines = [",".join(keys)] + [",".join(str(r.get(k, "")) for k in keys) for r in curve]
        (out / "learning_curve.csv").write_text("\n".join(lines) + "\n")
        plot_curve(curve, out / "learning_curve.png", task)
    (out / "simul.json").write_text(json.dumps(info, indent=1) + "\n")
    return out


def main_pack(run: str | Path, name: str, *, pair: str, n_average: int = 3, command: str = "",
              dev_utterances: int = 0, float16: bool = True,
              out_root: str | Path | None = None) -> int:
    """``simul models pack``: :func:`pack` into ``data/models`` or ``out_root``."""
    out = pack(run, name, pair=pair, n_average=n_average, command=command,
               dev_utterances=dev_utterances, float16=float16,
               out_root=Path(out_root) if out_root else MODELS_DIR)
    print(f"packed {out}")
    return 0
