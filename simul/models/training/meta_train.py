"""``simul meta-train``: H20's meta-learning, its multi-task control and fine-tuning, as
resumable stages of a recipe (``simul/models/recipes/meta/*.yaml``).

Stages (each its own run directory):

- ``meta``: meta steps (:func:`simul.models.training.meta.meta_step`, H20 eqs. 1–2) over the
  recipe's source tasks;
- ``multitask``: as many ordinary updates on the same batches (the control);
- ``finetune``: ordinary updates on the target task, from the initialisation or from
  ``--start`` (a ``meta`` or ``multitask`` run); every ``snapshot_every`` steps it writes an
  ESPnet-style snapshot (``exp/<k>epoch.pth``, the ST model alone) and the dev loss and
  accuracy (teacher-forced, ``exp/curve.jsonl``), so ``simul models pack RUN/exp NAME``
  packs it like any ESPnet run and simul's policies decode it.

Each stage adds its process CPU time to ``cost.json`` in its run directory at every
checkpoint (resumed invocations add up; a killed one loses only the steps since its last
checkpoint, which the next invocation runs again and counts); ``counted_steps`` says how many
of the steps that time covers. A fine-tuning's also holds its start's, which ``simul models
pack`` puts in the card.

Every stage starts from the same initialisation (the recipe's seed, then the modules the
recipe's optional ``meta.init`` copies from shipped models, as ``simul train``'s
``simul.init`` does, ``meta.freeze`` naming those no update changes) and builds the same
vocabulary and tasks (:mod:`simul.models.training.meta_tasks`); ``--start`` must come from a run of
the same recipe (its vocabulary is checked).
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import torch
import yaml

from simul.models.adapters.meta_st import TAGS, Batch, MultiModalST, build_st
from simul.models.training import augment, meta, meta_tasks, train

RECIPES = Path(__file__).resolve().parents[1] / "recipes" / "meta"
STAGES = ("meta", "multitask", "finetune")
CURVE = "curve.jsonl"
COST = "cost.json"


def recipes() -> list[str]:
    return sorted(p.stem for p in RECIPES.glob("*.yaml"))


def load_recipe(name: str) -> dict:
    """A recipe by name (``recipes/meta/NAME.yaml``) or a YAML file's path."""
    path = Path(name) if name.endswith((".yaml", ".yml")) else RECIPES / f"{name}.yaml"
    if not path.is_file():
        raise ValueError(f"no meta-learning recipe {name!r}; known: {', '.join(recipes())}")
    recipe = yaml.safe_load(path.read_text())
    for key in ("meta", "espnet"):
        if key not in recipe:
            raise ValueError(f"{path}: section {key!r} missing")
    for key in ("pair", "target_task", "source_tasks", "vocabulary", "seed", "alpha",
                "pretrain", "finetune", "snapshot_every", "dev_segments", "stats_from"):
        if key not in recipe["meta"]:
            raise ValueError(f"{path}: meta.{key} missing")
    return recipe


@dataclass
class Setup:
    token_list: list[str]
    espnet: dict  # the shared model's ESPnet ST config
    tasks: dict[str, meta_tasks.Task]
    dev: meta_tasks.Task
    starts: dict[str, int]  # decoder start unit per target language
    hear: augment.Hearing | None = None  # meta.augment: how training speech is heard
    augmentation: dict | None = None  # meta.augment completed (augment.spec), for the card


def _pair_of(task: str, default: str) -> str:
    return task.split("_", 1)[1] if task.startswith("st_") else default


def setup(recipe: dict, workdir: Path, corpus_root=None, name: str = "meta") -> Setup:
    """Vocabulary, tasks and ESPnet config of ``recipe`` under ``workdir/shared``; with
    ``meta.augment``, its rooms and noises too (:func:`simul.models.training.augment.prepare`,
    babble from the training talks), and how every training read of speech is heard
    (:class:`simul.models.training.augment.Hearing`; dev is read clean)."""
    import sentencepiece as spm

    from simul.corpus import DEFAULT_ROOT, load_list
    from simul.corpus.mini.build import ensure_splits
    from simul.models import registry
    from simul.models.training import prepare

    m = recipe["meta"]
    aug = augment.spec(m.get("augment"), name, "meta")  # a wrong key: before any work
    root = Path(corpus_root or DEFAULT_ROOT)
    out = workdir / "shared"
    out.mkdir(parents=True, exist_ok=True)
    pair = m["pair"]
    ensure_splits(root, ["train", "dev"])  # the mini corpus speaks train when training needs it
    train = load_list(root, pair, "train", with_audio=False)
    target, rest = meta_tasks.split_talks(train, meta_tasks.target_size(
        len(train), len(m["source_tasks"])), seed=m["seed"])
    keep = {s.id for s in rest}
    by_pair = {pair: train}
    for task in m["source_tasks"]:
        p = _pair_of(task, pair)
        if p not in by_pair:
            by_pair[p] = load_list(root, p, "train", with_audio=False)
    texts = [s.source for s in train] + [s.target for segs in by_pair.values() for s in segs]
    sp_file = meta_tasks.universal_vocabulary(texts, out / "bpe", m["vocabulary"])
    tokens = prepare.token_list(sp_file, out / "tokens.txt").read_text().splitlines()
    index = {u: i for i, u in enumerate(tokens)}
    sp = spm.SentencePieceProcessor(model_file=str(sp_file))
    unk = index["<unk>"]

    def encode(text: str) -> list[int]:
        return [index.get(p, unk) for p in sp.encode(text, out_type=str)]

    tasks = {m["target_task"]: meta_tasks.make_task(m["target_task"], target, encode)}
    for task in m["source_tasks"]:
        segs = [s for s in by_pair[_pair_of(task, pair)] if s.id in keep]
        tasks[task] = meta_tasks.make_task(task, segs, encode)
    dev = meta_tasks.make_task(m["target_task"], load_list(
        root, pair, "dev", with_audio=False, limit=m["dev_segments"]), encode)
    stats = out / "feats_stats.npz"
    if not stats.is_file():
        shutil.copy(registry.start_dir(m["stats_from"]) / "feats_stats.npz", stats)
    conf = {**recipe["espnet"], "token_type": "bpe", "token_list": tokens, "bpemodel": str(sp_file),
            "src_token_type": "bpe", "src_token_list": tokens,
            "normalize_conf": {"stats_file": str(stats)}, "init": None}
    starts = {lang: index[tag] for lang, tag in TAGS.items()}
    starts["de"] = len(tokens) - 1  # <sos/eos>: ESPnet's own start, the target task's
    hear = None
    if aug is not None:
        talks = sorted({e.wav for t in tasks.values() if t.modality == "speech"
                        for e in t.examples})
        scp = out / "augment" / "wav.scp"
        scp.parent.mkdir(parents=True, exist_ok=True)
        scp.write_text("".join(f"talk{i:05d} {wav}\n" for i, wav in enumerate(talks)))
        hear = augment.Hearing(aug, augment.prepare(aug, out / "augment", scp))
    return Setup(tokens, conf, tasks, dev, starts, hear,
                 None if aug is None else {"speed_perturb": None, **aug})


def build(s: Setup, seed: int, init_param: list[str] = (), freeze: list[str] = ()
          ) -> tuple[MultiModalST, dict]:
    """The shared model at the recipe's initialisation, and its ST model's full ESPnet
    config (every option, as ESPnet writes a run's ``config.yaml``).

    ``init_param``: ESPnet ``init_param`` entries (``model.pth:src:dst``, see
    :func:`simul.models.training.train.init_params`) loaded into the ST model after the seeded
    initialisation, by ESPnet's own loader; a shape that differs is an error. ``freeze``:
    modules of the ST model that no update changes (ESPnet's ``freeze_param``; the config
    records both, so that ``simul models pack`` ships a frozen copied module as its
    parent's, :mod:`simul.models.parent`)."""
    from simul.models.espnet_env import import_espnet

    torch.manual_seed(seed)
    st, args = build_st({**s.espnet, "init_param": list(init_param),
                         "freeze_param": list(freeze)})
    load = import_espnet("espnet2.torch_utils.load_pretrained_model").load_pretrained_model
    for entry in init_param:
        try:
            load(entry, st, ignore_init_mismatch=False, map_location="cpu")
        except RuntimeError as e:  # torch's load_state_dict: every mismatched tensor
            first = next((x.strip() for x in str(e).splitlines()[1:] if x.strip()), str(e))
            head, _, keys = first.partition(": ")
            keys = keys.split(", ")
            more = f" and {len(keys) - 1} more" if len(keys) > 1 else ""
            raise ValueError(f"meta.init: {entry} does not fit this recipe's model: {head}: "
                             f"{keys[0].rstrip('.')}{more}") from None
    for module in freeze:
        found = [p for n, p in st.named_parameters() if n == module or n.startswith(module + ".")]
        if not found:
            raise ValueError(f"meta.freeze: {module!r} names no parameter of the ST model")
        for p in found:
            p.requires_grad_(False)
    return MultiModalST(st, len(s.token_list)), vars(args)


@torch.no_grad()
def dev_scores(model: MultiModalST, task: meta_tasks.Task, start: int, batch: int = 10
               ) -> dict[str, float]:
    """Teacher-forced loss per segment and unit accuracy (ESPnet's ``th_accuracy``) on
    ``task``, in eval mode."""
    from simul.models.espnet_env import import_espnet

    acc_fn = import_espnet("espnet.nets.pytorch_backend.nets_utils").th_accuracy
    was = model.training
    model.eval()
    total, n, correct, units = 0.0, 0, 0.0, 0
    for i in range(0, len(task.examples), batch):
        b: Batch = meta_tasks.make_batch(task, range(i, min(i + batch, len(task.examples))),
                                         start)
        loss, out, ys_out = model.scores(b)
        total += float(loss) * len(b.target_lengths)
        n += len(b.target_lengths)
        k = int((ys_out != model.st.ignore_id).sum())
        correct += acc_fn(out.view(-1, out.shape[-1]), ys_out, model.st.ignore_id) * k
        units += k
    model.train(was)
    return {"valid_loss": total / n, "valid_acc": correct / units}


def run_stage(name: str, stage: str, workdir: str | Path, *, start: str | Path | None = None,
              steps: int | None = None, corpus_root=None, progress: bool = True) -> Path:
    """Run (or resume) ``stage`` of recipe ``name`` in ``workdir``; returns ``workdir``."""
    began = time.process_time()
    if stage not in STAGES:
        raise ValueError(f"--stage: {stage!r} is not one of {', '.join(STAGES)}")
    recipe = load_recipe(name)
    m = recipe["meta"]
    workdir = Path(workdir).expanduser()
    if start is not None and stage != "finetune":
        raise ValueError("--start: only the finetune stage starts from another run")
    if start is not None and not (Path(start) / meta.CHECKPOINT).is_file():
        raise ValueError(f"--start: {start} holds no {meta.CHECKPOINT} (a meta or multitask "
                         "run)")
    workdir.mkdir(parents=True, exist_ok=True)
    info = {"recipe": name, "stage": stage, "start": str(start) if start else None}
    run_file = workdir / "run.json"
    if run_file.is_file() and json.loads(run_file.read_text())["stage"] != stage:
        raise ValueError(f"--workdir: {workdir} holds a "
                         f"{json.loads(run_file.read_text())['stage']} run, not {stage}")
    s = setup(recipe, workdir, corpus_root, name)
    if s.augmentation is not None:  # simul models pack puts it in the card
        info["augmentation"] = s.augmentation
    run_file.write_text(json.dumps(info, indent=1) + "\n")
    if start is not None:
        theirs = (Path(start) / "shared" / "tokens.txt").read_text().splitlines()
        if theirs != s.token_list:
            raise ValueError(f"--start: {start} was trained with another vocabulary")
    units = {"token_list": s.token_list, "src_token_list": s.token_list}
    model, full_config = build(s, m["seed"], train.init_params(m.get("init") or [], name, units,
                                                               workdir), m.get("freeze") or [])
    if start is not None and not (workdir / meta.CHECKPOINT).is_file():
        state = torch.load(Path(start) / meta.CHECKPOINT, map_location="cpu",
                           weights_only=False)
        model.load_state_dict(state["model"])
    phase = m["finetune"] if stage == "finetune" else m["pretrain"]
    total = steps or phase["steps"]
    optimizer = torch.optim.Adam(model.parameters(), lr=phase["lr"])
    kind = {"meta": "meta", "multitask": "multitask", "finetune": "plain"}[stage]
    if stage == "finetune":
        tasks = [s.tasks[m["target_task"]]]
    else:
        tasks = [s.tasks[t] for t in m["source_tasks"]]
    sampler = meta_tasks.Sampler(tasks, s.starts, pairs=stage != "finetune", batch=m["batch"],
                                 hear=s.hear)
    every = m["snapshot_every"] if stage == "finetune" else min(m["snapshot_every"], 50)
    ckpt = workdir / meta.CHECKPOINT
    counted = {"step": torch.load(ckpt, map_location="cpu", weights_only=False)["step"]
               if ckpt.is_file() else 0, "seconds": began}
    snapshot = None
    if stage == "finetune":
        exp = workdir / "exp"
        exp.mkdir(exist_ok=True)
        (exp / "config.yaml").write_text(yaml.safe_dump(full_config, allow_unicode=True,
                                                        sort_keys=False))

        def snapshot(n: int) -> None:
            if n % m["snapshot_every"] and n != total:
                return
            k = -(-n // m["snapshot_every"])
            torch.save(model.st_state(), exp / f"{k}epoch.pth")
            row = {"epoch": k, "step": n, **dev_scores(model, s.dev, s.starts["de"])}
            with (exp / CURVE).open("a") as f:
                f.write(json.dumps(row) + "\n")

    def on_checkpoint(n: int) -> None:
        if snapshot is not None:
            snapshot(n)
        now = time.process_time()
        _add_cost(workdir, stage, n, now - counted["seconds"], start, n - counted["step"])
        counted.update(step=n, seconds=now)

    meta.train(model, optimizer, sampler, kind=kind, steps=total, workdir=workdir,
               seed=m["seed"], alpha=m["alpha"], checkpoint_every=every, progress=progress,
               lr_at=meta.warmup_lr(phase["lr"], phase["warmup"]), clip=m.get("clip"),
               on_checkpoint=on_checkpoint)
    _add_cost(workdir, stage, total, time.process_time() - counted["seconds"], start, 0)
    return workdir


def _add_cost(workdir: Path, stage: str, steps: int, seconds: float,
              start: str | Path | None, counted: int) -> None:
    """``cost.json``: the stage's steps, process CPU seconds and ``counted_steps`` (the steps
    those seconds cover; each added to what earlier checkpoints and invocations wrote), and
    its start run's ``cost.json`` (``start``, or the one recorded)."""
    path = workdir / COST
    cost = json.loads(path.read_text()) if path.is_file() else {"cpu_seconds": 0.0}
    # a file written before counted_steps was kept counted every step of its stage
    before = cost.get("counted_steps", cost.get("steps", 0))
    cost.update(stage=stage, steps=steps, cpu_seconds=cost["cpu_seconds"] + seconds,
                counted_steps=before + counted)
    if start is not None and (Path(start) / COST).is_file():
        cost["start"] = json.loads((Path(start) / COST).read_text())
    path.write_text(json.dumps(cost, indent=1) + "\n")


def main(name: str | None, stage: str, workdir: str | None, *, start: str | None = None,
         steps: int | None = None, corpus_root=None, list_only: bool = False) -> int:
    """``simul meta-train``."""
    if list_only or not name:
        print("\n".join(recipes()))
        return 0
    if workdir is None:
        workdir = f"~/.cache/simul/runs/{Path(name).stem}_{stage}"
    run_stage(name, stage, workdir, start=start, steps=steps, corpus_root=corpus_root)
    return 0
