"""Shipped models (``data/models/<name>/``) and packing a trained run into one.

A shipped model directory holds everything ESPnet needs, with paths relative to it:
``config.yaml``, ``model.pth`` (checkpoints averaged), SentencePiece models, the global-MVN
statistics, the learning curve (``learning_curve.csv``/``.png``), ``simul.json`` (its pair,
its ESPnet task — ``st``, or ``asr``/``mt`` for a cascade's halves — and how it was made),
``metrics.json`` and a ``card.md`` with the command that made it and its measured offline
quality (BLEU; WER for an ASR model).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import torch
import yaml
from tqdm import tqdm

from simul.models.espnet_st import ESPnetST

MODELS_DIR = Path(__file__).resolve().parents[2] / "data" / "models"


def shipped() -> list[str]:
    """Shipped models and cascades (``data/models/NAME`` with config.yaml or cascade.json)."""
    return sorted({p.parent.name for pattern in ("*/config.yaml", "*/cascade.json")
                   for p in MODELS_DIR.glob(pattern)})


def shipped_translators() -> list[str]:
    """The shipped end-to-end speech-translation models: :func:`shipped` less the cascades
    and their halves (ASR and text MT models), which the speech-translation policies cannot
    run on."""
    from simul.models import cascade

    return [name for name in shipped() if not cascade.is_cascade(MODELS_DIR / name)
            and model_task(MODELS_DIR / name) == "st"]


def shipped_cascades() -> list[str]:
    """The shipped cascades (``data/models/NAME/cascade.json``)."""
    from simul.models import cascade

    return [name for name in shipped() if cascade.is_cascade(MODELS_DIR / name)]


def config_task(conf: dict) -> str:
    """The ESPnet task of a model config, from the fields each task's config has: an ASR
    config has no ``src_token_list``, an MT config embeds its source (``frontend: embed``)."""
    if "src_token_list" not in conf:
        return "asr"
    return "mt" if conf.get("frontend") == "embed" else "st"


def model_task(directory: str | Path) -> str:
    """The task of a packed model: the ``task`` of its simul.json, or, for a model packed
    before simul.json recorded it (every one of them ST), what its config says."""
    from simul.models.train import TASKS

    info_path = Path(directory) / "simul.json"
    info = json.loads(info_path.read_text())
    if "task" not in info:
        return config_task(yaml.safe_load((Path(directory) / "config.yaml").read_text()))
    if info["task"] not in TASKS:
        raise ValueError(f"{info_path}: field 'task': {info['task']!r} is not a task simul "
                         f"evaluates (one of {', '.join(TASKS)})")
    return info["task"]


def corpus_version(name: str | Path) -> int | None:
    """Builder version of the mini corpus a shipped model (or a model directory) was
    trained on (simul.json); a cascade's when both its models were trained on the same one,
    else None."""
    from simul.models import cascade

    directory = MODELS_DIR / name if (MODELS_DIR / name).is_dir() else Path(name)
    if cascade.is_cascade(directory):
        versions = {corpus_version(part) for part in cascade.parts(directory)}
        return versions.pop() if len(versions) == 1 else None
    info = json.loads((directory / "simul.json").read_text())
    return info.get("corpus_builder_version")


def stale(name: str | Path) -> bool:
    """Whether a shipped model was trained on an older mini corpus than the one simul builds
    now (a cascade: either of its models): its numbers on today's corpus say how much harder
    the corpus became, not what the papers' policies do with a model that knows its data."""
    from simul.corpus.mini.build import BUILDER_VERSION

    return corpus_version(name) != BUILDER_VERSION


def load_dir(directory: str | Path, device: str = "cpu"):
    """The adapter of a model directory: an ESPnet2 ST model, or a cascade of an ASR and an
    MT model (a directory with ``cascade.json``, :mod:`simul.models.cascade`)."""
    from simul.models import cascade

    if cascade.is_cascade(directory):
        return cascade.Cascade.from_dir(directory, device)
    return ESPnetST.from_dir(directory, device)


def load(name_or_dir: str | Path, device: str = "cpu") -> ESPnetST:
    """A shipped model by name, or any ESPnet2 ST model (or cascade) directory."""
    if (MODELS_DIR / str(name_or_dir)).is_dir() and str(name_or_dir) in shipped():
        return load_dir(MODELS_DIR / str(name_or_dir), device)
    path = Path(name_or_dir)
    if path.is_dir():
        return load_dir(path, device)
    raise ValueError(
        f"no model {name_or_dir!r}: not a shipped model ({', '.join(shipped()) or 'none yet'})"
        " nor a directory"
    )


def metrics(name: str) -> dict:
    path = MODELS_DIR / name / "metrics.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def summary_line(name: str) -> str:
    """What ``simul models`` prints for a shipped model: its corpus version, then per test
    split the greedy BLEU (per synthesizer in brackets) and the beam BLEU; an ASR model's
    WER instead (its attention decoder's greedy and beam, then its CTC's greedy, which the
    cascade reads), an MT model's BLEU on the gold transcripts. A cascade is named with its
    two models."""
    from simul.models import cascade

    if cascade.is_cascade(MODELS_DIR / name):
        try:
            asr, mt = cascade.parts(MODELS_DIR / name)
        except ValueError as e:
            return f"{name}  (a cascade that does not load: {e})"
        return f"{name}  (cascade: ASR {asr.name} → MT {mt.name})"
    try:
        task = model_task(MODELS_DIR / name)
    except ValueError as e:
        return f"{name}  ({e})"
    label = {"asr": "ASR, ", "mt": "MT of the gold transcripts, "}.get(task, "")
    head = f"{name}  ({label}trained and scored on corpus v{corpus_version(name)}"
    head += ": stale, retrain on the current corpus)" if stale(name) else ")"
    m = metrics(name)
    if not m:
        return head + "  not evaluated (simul models eval NAME)"
    score, what = ("wer", "WER ") if task == "asr" else ("bleu", "")
    rows = {}
    for key, r in m.items():
        split, beam = key.split("/")
        how = {"beam1": "greedy", "ctc": "CTC greedy"}.get(beam, beam)
        cell = f"{how} {what}{r[score]:.1f}"
        if r.get("by_engine"):
            cell += " (" + ", ".join(f"{e} {v[score]:.1f}"
                                     for e, v in r["by_engine"].items()) + ")"
        rows.setdefault(split, []).append(cell)
    return head + "".join(f"\n  {split:11s} " + "   ".join(cells)
                          for split, cells in rows.items())


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


def _seconds(text: str) -> float:
    """ESPnet's humanfriendly durations ("1 hour, 2 minutes and 3.5 seconds") in seconds."""
    scale = {"hour": 3600.0, "minute": 60.0, "second": 1.0}
    return sum(float(n) * scale[unit]
               for n, unit in re.findall(r"([\d.]+) (hour|minute|second)", text))


CURVE_STATS = ("loss", "acc", "bleu", "loss_st", "loss_asr", "cer_ctc")
"""The per-epoch statistics of an ST or MT run's ``train.log`` that the learning curve keeps."""

ASR_CURVE_STATS = re.compile(r"(loss|acc|cer|wer)(_\w+)?")
"""Those of an ASR run: every loss, accuracy and error rate ESPnet's ASR model reports
(``loss_ctc``, ``loss_att``, ``acc``; in validation also ``cer_ctc``, the CTC's greedy
character error rate, and ``cer``/``wer``, the attention decoder's teacher-forced ones,
fractions), not its timings, learning rate or memory."""


def learning_curve(exp_dir: Path, task: str = "st") -> list[dict]:
    """Per-epoch train/valid statistics from ESPnet's ``train.log`` (for an ``asr`` run,
    :data:`ASR_CURVE_STATS`; else :data:`CURVE_STATS`)."""
    def kept(key: str) -> bool:
        return bool(ASR_CURVE_STATS.fullmatch(key)) if task == "asr" else key in CURVE_STATS

    rows = []
    pattern = re.compile(r"(\d+)epoch results: (.*)")
    for line in (exp_dir / "train.log").read_text().splitlines():
        m = pattern.search(line)
        if not m:
            continue
        row = {"epoch": int(m.group(1))}
        for phase, body in re.findall(r"\[(train|valid)\] (.*?)(?=, \[|$)", m.group(2)):
            spent = re.search(r"(?<![\w])time=(.*?)(?=, total_count|$)", body)
            if spent:  # "54 minutes and 3.24 seconds" → seconds
                row[f"{phase}_seconds"] = _seconds(spent.group(1))
            for key, value in re.findall(r"(\w+)=([-+.\deE]+)", body):
                if kept(key):
                    row[f"{phase}_{key}"] = float(value)
        rows.append(row)
    return rows


WAITK_KEYS = ("k_train", "word_ms", "frame_ms", "units_file", "unit_type")
"""decoder_conf keys of simul's ``transformer_waitk`` training decoder
(:mod:`simul.models.waitk_decoder`) that ESPnet's ``transformer`` decoder does not take."""


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


def dev_bleu(model_dir: Path, pair: str, utterances: int, *, corpus_root=None,
             task: str = "st") -> float:
    """Greedy BLEU of a model directory on the first ``utterances`` dev segments: an ST
    model's translations of the speech, an ``mt`` model's of the gold English transcripts
    (:func:`simul.decode.text_offline`)."""
    from simul import decode
    from simul.corpus import DEFAULT_ROOT
    from simul.metrics.quality import corpus_quality

    kw = {"model_name": model_dir.name, "pair": pair, "split": "dev",
          "max_utterances": utterances, "corpus_root": corpus_root or DEFAULT_ROOT,
          "progress": False}
    if task == "mt":
        from simul.models.cascade import TextMT

        done = list(decode.text_offline(TextMT.from_dir(model_dir), **kw))
        return corpus_quality([t.prediction for t in done], [t.reference for t in done]).bleu
    recs = list(decode.offline_records(ESPnetST.from_dir(model_dir), **kw))
    return corpus_quality([r.prediction for r in recs], [r.reference for r in recs]).bleu


def dev_wer_ctc(model_dir: Path, pair: str, utterances: int, *, corpus_root=None) -> float:
    """WER in % of an ASR model directory's greedy CTC transcripts (what the cascade
    policy reads, :func:`simul.decode.ctc_offline`) of the first ``utterances`` dev
    segments against their English source text (:func:`simul.metrics.quality.word_error_rate`)."""
    from simul import decode
    from simul.corpus import DEFAULT_ROOT
    from simul.metrics.quality import word_error_rate
    from simul.models.cascade import SpeechASR

    done = list(decode.ctc_offline(SpeechASR.from_dir(model_dir), model_name=model_dir.name,
                                   pair=pair, split="dev", max_utterances=utterances,
                                   corpus_root=corpus_root or DEFAULT_ROOT, progress=False))
    return 100 * word_error_rate([t.prediction for t in done], [t.reference for t in done])


DEV_CURVE = {"st": ("dev_bleu_greedy", "dev BLEU"), "mt": ("dev_bleu_greedy", "dev BLEU"),
             "asr": ("dev_wer_ctc", "dev WER (CTC)")}
"""Per task, the learning curve's dev column (``pack --dev-utterances``; simul.json holds
the averaged model's as ``<column>_averaged``) and what it measures."""


def dev_score(model_dir: Path, task: str, pair: str, utterances: int, *,
              corpus_root=None) -> float:
    """The dev curve's value (:data:`DEV_CURVE`) of a model directory, rounded to 2 places."""
    if task == "asr":
        score = dev_wer_ctc(model_dir, pair, utterances, corpus_root=corpus_root)
    else:
        score = dev_bleu(model_dir, pair, utterances, corpus_root=corpus_root, task=task)
    return round(score, 2)


def curve_panels(task: str = "st") -> list[tuple[str, list[tuple[str, str, float]]]]:
    """The learning curve plot's panels: (y label, [(column, legend label, scale)]). The
    third panel is the task's quality: BLEU (ST; MT of the gold transcripts), or for ASR
    the error rates in % (ESPnet logs its own as fractions)."""
    panels = [("loss", [("train_loss", "train", 1.0), ("valid_loss", "valid", 1.0)]),
              ("accuracy", [("train_acc", "train", 1.0), ("valid_acc", "valid", 1.0)])]
    if task == "asr":
        return panels + [("error rate %", [
            ("valid_cer_ctc", "valid CER, CTC greedy (ESPnet)", 100.0),
            ("valid_cer", "valid CER, teacher-forced (ESPnet)", 100.0),
            ("valid_wer", "valid WER, teacher-forced (ESPnet)", 100.0),
            ("dev_wer_ctc", "dev WER, CTC greedy (what the cascade reads)", 1.0)])]
    dev = ("dev, greedy decoding of the gold transcripts" if task == "mt" else
           "dev, greedy decoding")
    return panels + [("BLEU", [("valid_bleu", "valid, teacher-forced (ESPnet)", 1.0),
                               ("dev_bleu_greedy", dev, 1.0)])]


def plot_curve(curve: list[dict], path: Path, task: str = "st") -> list[list[str]]:
    """Loss, accuracy and the task's quality per epoch (:func:`curve_panels`), three
    panels, as PNG; returns the legend labels drawn in each panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = curve_panels(task)
    fig, axes = plt.subplots(1, len(panels), figsize=(12, 3.4))
    drawn = []
    for ax, (title, series) in zip(axes, panels, strict=True):
        drawn.append([])
        for key, label, scale in series:
            pts = [(r["epoch"], scale * r[key]) for r in curve if r.get(key) not in (None, "")]
            if pts:
                ax.plot(*zip(*pts, strict=True), marker="o", label=label)
                drawn[-1].append(label)
        ax.set_xlabel("epoch")
        ax.set_ylabel(title)
        if drawn[-1]:
            ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return drawn


def run_task(exp_dir: Path, conf: dict) -> str:
    """The ESPnet task of a training run: ``simul.task`` of the recipe it ran (``recipe.yaml``
    beside ``exp``, as :func:`simul.models.train.train` keeps it), else what its config says
    (:func:`config_task`)."""
    recipe = Path(exp_dir).parent / "recipe.yaml"
    if recipe.is_file():
        return (yaml.safe_load(recipe.read_text()).get("simul") or {}).get("task", "st")
    return config_task(conf)


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
    out.mkdir(parents=True, exist_ok=True)
    _packed_config(exp_dir, out)
    snapshots = epoch_files(exp_dir)
    files = snapshots[-n_average:]
    state = average(files)
    torch.save(half(state) if float16 else state, out / "model.pth")
    curve = learning_curve(exp_dir, task)
    info = {"pair": pair, "task": task, "averaged": [f.name for f in files], "command": command,
            "run": str(exp_dir), "stored": "float16" if float16 else "float32"}
    from simul.corpus import DEFAULT_ROOT, manifest

    corpus = Path(corpus_root or DEFAULT_ROOT)
    if (corpus / manifest.NAME).is_file():  # the corpus the run was exported from
        info["corpus_builder_version"] = manifest.read(corpus).get("builder_version")
    if run_conf.get("init_param"):
        info["initialized_from"] = []
        for entry in run_conf["init_param"]:  # /…/NAME/model.pth:src:dst → NAME/model.pth:src:dst
            path, modules = entry.split(":", 1)
            info["initialized_from"].append(f"{Path(path).parent.name}/{Path(path).name}:{modules}")
    if run_conf.get("freeze_param"):
        info["frozen"] = list(run_conf["freeze_param"])
    if run_conf.get("decoder") == "transformer_waitk":
        dec = run_conf.get("decoder_conf") or {}
        info["simultaneous_training"] = {"k_train": dec.get("k_train", 3),
                                         "word_ms": dec.get("word_ms", 280.0),
                                         "frame_ms": dec.get("frame_ms", 80.0),
                                         "detection": "fixed"}
    if dev_utterances > 0:
        import tempfile

        column, what = DEV_CURVE[task]
        by_epoch = {r["epoch"]: r for r in curve}
        for f in tqdm(snapshots, desc=f"{what} per snapshot", disable=not progress):
            with tempfile.TemporaryDirectory() as tmp:
                shutil.copy(out / "config.yaml", tmp)
                for extra in ("bpe.model", "src_bpe.model", "feats_stats.npz"):
                    if (out / extra).is_file():
                        (Path(tmp) / extra).symlink_to(out / extra)
                (Path(tmp) / "model.pth").symlink_to(f.resolve())
                epoch = int(f.name.split("epoch")[0])
                by_epoch.setdefault(epoch, {"epoch": epoch})[column] = dev_score(
                    Path(tmp), task, pair, dev_utterances, corpus_root=corpus_root)
        curve = sorted(by_epoch.values(), key=lambda r: r["epoch"])
        info["dev_utterances"] = dev_utterances
        info[f"{column}_averaged"] = dev_score(out, task, pair, dev_utterances,
                                               corpus_root=corpus_root)
    if curve:
        keys = sorted({k for r in curve for k in r}, key=lambda k: (k != "epoch", k))
        lines = [",".join(keys)] + [",".join(str(r.get(k, "")) for k in keys) for r in curve]
        (out / "learning_curve.csv").write_text("\n".join(lines) + "\n")
        plot_curve(curve, out / "learning_curve.png", task)
    (out / "simul.json").write_text(json.dumps(info, indent=1) + "\n")
    return out


def offline_summary(predictions: list[str], references: list[str],
                    engines: list[str]) -> dict:
    """Offline quality of one decoding of a split: BLEU/chrF overall and per synthesizer,
    BLEU's hypothesis/reference length ratio, and how often a segment of two or more
    reference sentences gets exactly as many sentence ends ("." "?" "!") in the hypothesis
    (what simultaneous policies need from an offline model on multi-sentence input)."""
    from simul.corpus.stats import sentences
    from simul.metrics.quality import corpus_quality

    if not len(predictions) == len(references) == len(engines):
        raise ValueError(f"{len(predictions)} predictions, {len(references)} references and "
                         f"{len(engines)} engines: one of each per segment")
    q = corpus_quality(predictions, references)
    out = {"bleu": round(q.bleu, 2), "chrf": round(q.chrf, 2), "n": q.n,
           "signature": q.bleu_signature, "length_ratio": round(q.length_ratio, 3)}
    by_engine = {}
    for engine in sorted(set(engines) - {""}):
        picked = [i for i, e in enumerate(engines) if e == engine]
        qe = corpus_quality([predictions[i] for i in picked], [references[i] for i in picked])
        by_engine[engine] = {"bleu": round(qe.bleu, 2), "chrf": round(qe.chrf, 2), "n": qe.n}
    if by_engine:
        out["by_engine"] = by_engine
    multi = [i for i, r in enumerate(references) if sentences(r) >= 2]
    if multi:
        same = sum(sentences(predictions[i]) == sentences(references[i]) for i in multi)
        out["sentence_ends"] = {"n": len(multi), "same_count": round(same / len(multi), 3)}
    return out


def asr_summary(predictions: list[str], references: list[str], engines: list[str]) -> dict:
    """Offline quality of one ASR decoding of a split: corpus WER in % (both sides
    lowercased, punctuation but the apostrophe removed, spaces collapsed:
    :func:`simul.metrics.quality.normalize_for_wer`) overall and per synthesizer."""
    from simul.metrics.quality import wer_signature, word_error_rate

    if not len(predictions) == len(references) == len(engines):
        raise ValueError(f"{len(predictions)} predictions, {len(references)} references and "
                         f"{len(engines)} engines: one of each per segment")
    out = {"wer": round(100 * word_error_rate(predictions, references), 2),
           "n": len(predictions), "signature": wer_signature()}
    by_engine = {}
    for engine in sorted(set(engines) - {""}):
        picked = [i for i, e in enumerate(engines) if e == engine]
        wer = word_error_rate([predictions[i] for i in picked], [references[i] for i in picked])
        by_engine[engine] = {"wer": round(100 * wer, 2), "n": len(picked)}
    if by_engine:
        out["by_engine"] = by_engine
    return out


def evaluate(name: str | Path, *, splits=("tst-COMMON", "tst-HE"), beams=(1, 5),
             max_utterances: int | None = None, progress: bool = True,
             corpus_root=None) -> dict:
    """Offline quality of a shipped model, or of a model packed elsewhere (a directory with
    ``simul.json``, e.g. a snapshot packed with ``--out-root`` to compare training runs):
    greedy and beam, written to the model's metrics.json and card. By the model's task
    (:func:`model_task`): an ST model's translations of the speech (:func:`offline_summary`),
    an ASR model's transcripts of it against the English source text (:func:`asr_summary`):
    its attention decoder's (``SPLIT/beamN``) and its CTC's greedy one of the whole segment
    (``SPLIT/ctc``, what the ``cascade`` policy feeds the MT, :func:`simul.decode.ctc_offline`),
    an MT model's translations of the gold English transcripts (:func:`offline_summary`;
    its synthesizer is the one that spoke the segment). ``corpus_root``: the mini corpus
    by default."""
    from simul import decode
    from simul.corpus import DEFAULT_ROOT, stats
    from simul.models.cascade import SpeechASR, TextMT

    out = Path(name) if (Path(name) / "simul.json").is_file() else MODELS_DIR / str(name)
    if not (out / "simul.json").is_file():
        raise ValueError(f"no model {name!r}: neither a shipped model "
                         f"({', '.join(shipped())}) nor a packed directory with simul.json")
    task = model_task(out)
    model = {"st": load, "asr": SpeechASR.from_dir, "mt": TextMT.from_dir}[task](out)
    pair = json.loads((out / "simul.json").read_text())["pair"]
    root = corpus_root or DEFAULT_ROOT
    results = {}
    for split in splits:
        engines = stats.engines(root, pair, split)
        where = {"model_name": out.name, "pair": pair, "split": split, "corpus_root": root,
                 "max_utterances": max_utterances, "progress": progress}
        for beam in beams:
            kw = {**where, "beam": beam}
            if task == "mt":
                done = list(decode.text_offline(model, **kw))
                timed = [t.ms for t in done]
                summary = offline_summary([t.prediction for t in done],
                                          [t.reference for t in done],
                                          [engines[t.index] for t in done])
            else:
                recs = list(decode.offline_records(model, **kw))
                timed = [r.elapsed[0] - r.source_length for r in recs if r.elapsed]
                picked = [engines[r.index] for r in recs]
                predictions = [r.prediction for r in recs]
                summary = (asr_summary(predictions, [r.source_text for r in recs], picked)
                           if task == "asr" else
                           offline_summary(predictions, [r.reference for r in recs], picked))
            results[f"{split}/beam{beam}"] = {
                **summary, "ms_per_utterance": round(sum(timed) / max(len(timed), 1), 1)}
        if task == "asr":  # the transcript the cascade policy feeds the MT
            done = list(decode.ctc_offline(model, **where))
            timed = [t.ms for t in done]
            results[f"{split}/ctc"] = {
                **asr_summary([t.prediction for t in done], [t.reference for t in done],
                              [engines[t.index] for t in done]),
                "ms_per_utterance": round(sum(timed) / max(len(timed), 1), 1)}
    (out / "metrics.json").write_text(json.dumps(results, indent=1) + "\n")
    write_card(out.name, root=out.parent)
    return results


def _simultaneous_line(how: dict) -> str:
    ks = how["k_train"]
    which = (f"k_train = {ks}" if isinstance(ks, int) else
             f"multi-path, k_train drawn per batch from {ks}")
    return (f"- trained in simultaneous mode (simul.models.waitk_decoder): wait-k over source "
            f"words, {which}, a word every {how['word_ms']:g} ms of audio ({how['detection']} "
            f"detection), encoder frames of {how['frame_ms']:g} ms; decoded as ESPnet's "
            "Transformer decoder")


def _asr_table(results: dict) -> list[str]:
    """The card's lines for an ASR model's metrics.json (:func:`asr_summary`)."""
    engines = sorted({e for r in results.values() for e in r.get("by_engine", {})})
    lines = ["Offline word error rate (jiwer; full splits of the mini corpus) of the "
             "transcripts against the English source text, both lowercased, punctuation but "
             "the apostrophe removed, spaces collapsed; WER per synthesizer of the speech. "
             "Greedy and beam: the attention decoder's transcripts; CTC greedy: the CTC's "
             "greedy transcript of the whole segment, which the cascade policy feeds the MT:",
             "",
             "| split | decoding | WER % | " + "".join(f"{e} | " for e in engines) + "ms/utt |",
             "|---" * (4 + len(engines)) + "|"]
    for key, r in results.items():
        split, beam = key.split("/")
        how = {"beam1": "greedy", "ctc": "CTC greedy (what the cascade reads)"}.get(
            beam, beam.replace("beam", "beam "))
        per = "".join(f"{r['by_engine'][e]['wer']:.2f} | " if e in r.get("by_engine", {})
                      else "– | " for e in engines)
        lines.append(f"| {split} | {how} | {r['wer']:.2f} | {per}{r['ms_per_utterance']:.0f} |")
    if results:
        lines += ["", f"Signature: `{next(iter(results.values()))['signature']}`"]
    return lines


def write_card(name: str, root: Path = MODELS_DIR) -> Path:
    """``card.md``: what the model is, the command that made it, its measured BLEU (an
    ASR model's WER)."""
    from simul.models.train import RECIPES

    out = root / name
    task = model_task(out)
    info = json.loads((out / "simul.json").read_text())
    conf = yaml.safe_load((out / "config.yaml").read_text())
    state = torch.load(out / "model.pth", map_location="cpu")
    n_params = sum(v.numel() for v in state.values() if v.is_floating_point())
    recipe = RECIPES / f"{name}.yaml"
    about = [line[2:] for line in recipe.read_text().splitlines()
             if line.startswith("# ")] if recipe.is_file() else []
    lines = [f"# {name}", "", *about, "",
             f"- pair: {info['pair']}; units: {conf.get('token_type')} "
             f"({len(conf['token_list'])} target units)",
             f"- encoder: {conf['encoder']} {conf.get('encoder_conf', {})}",
             f"- decoder: {conf['decoder']} {conf.get('decoder_conf', {})}",
             f"- parameters: {n_params / 1e6:.2f} M; "
             f"file {(out / 'model.pth').stat().st_size / 2**20:.1f} MiB",
             f"- averaged snapshots: {', '.join(info['averaged'])}; weights stored in "
             f"{info.get('stored', 'float32')}, computed in float32",
             *([f"- started from (ESPnet init_param, file:source:module): "
                f"{', '.join(info['initialized_from'])}"] if info.get("initialized_from")
               else []),
             *([f"- frozen while training: {', '.join(info['frozen'])}"]
               if info.get("frozen") else []),
             *([_simultaneous_line(info["simultaneous_training"])]
               if info.get("simultaneous_training") else []),
             f"- trained on: mini corpus, builder version "
             f"{info.get('corpus_builder_version', 'unrecorded')}",
             "", "Made by:", "", "```", info.get("command") or f"simul train {name}",
             f"simul models pack RUN/exp {name} --pair {info['pair']} "
             f"--average {len(info['averaged'])}",
             f"simul models eval {name}", "```", ""]
    path = out / "metrics.json"
    results = json.loads(path.read_text()) if path.is_file() else {}
    if task == "asr":
        return _finish_card(out, info, lines + _asr_table(results),
                            "; its valid cer and wer are the attention decoder's, "
                            "teacher-forced, valid cer_ctc the CTC's greedy, fractions", task)
    lines += [("Offline quality of translating the gold English transcripts" if task == "mt"
               else "Offline quality") + " (sacrebleu, full splits of the mini corpus); BLEU "
              "per synthesizer of the source speech; length: BLEU's hypothesis/reference "
              "length ratio:", ""]
    engines = sorted({e for r in results.values() for e in r.get("by_engine", {})})
    lines += ["| split | decoding | BLEU | chrF | " + "".join(f"{e} | " for e in engines)
              + "length | ms/utt |", "|---" * (6 + len(engines)) + "|"]
    for key, r in results.items():
        split, beam = key.split("/")
        how = "greedy" if beam == "beam1" else beam.replace("beam", "beam ")
        per = "".join(f"{r['by_engine'][e]['bleu']:.2f} | " if e in r.get("by_engine", {})
                      else "– | " for e in engines)
        ratio = f"{r['length_ratio']:.2f}" if "length_ratio" in r else "–"
        lines.append(f"| {split} | {how} | {r['bleu']:.2f} | {r['chrf']:.2f} | {per}{ratio} "
                     f"| {r['ms_per_utterance']:.0f} |")
    if results:
        lines += ["", f"Signature: `{next(iter(results.values()))['signature']}`"]
    ends = [(k, r["sentence_ends"]) for k, r in results.items() if "sentence_ends" in r]
    if ends:
        lines += ["", "Segments of two or more sentences whose hypothesis has as many sentence "
                  "ends as the reference: " + "; ".join(
                      f"{k.replace('/beam1', ' greedy').replace('/beam', ' beam ')} "
                      f"{100 * e['same_count']:.1f} % of {e['n']}" for k, e in ends) + "."]
    return _finish_card(out, info, lines, "; its valid BLEU is teacher-forced", task)


def _finish_card(out: Path, info: dict, lines: list[str], about_valid: str,
                 task: str = "st") -> Path:
    """The card's learning-curve part (with the dev curve of ``pack --dev-utterances``,
    :data:`DEV_CURVE`), then ``card.md`` written."""
    lines += ["", "Learning curve: `learning_curve.csv` and `learning_curve.png` (ESPnet's "
              f"per-epoch train/valid statistics{about_valid})."]
    if (out / "learning_curve.png").is_file():
        lines += ["", "![learning curve](learning_curve.png)", ""]
    if "dev_wer_ctc_averaged" in info:
        lines += [f"WER of the CTC's greedy transcripts (what the cascade reads) of the first "
                  f"{info['dev_utterances']} dev segments: {info['dev_wer_ctc_averaged']:.2f} % "
                  "for the averaged model; per kept snapshot in the column `dev_wer_ctc`."]
    elif "dev_bleu_greedy_averaged" in info:
        what = ("Greedy BLEU of translating the gold English transcripts of" if task == "mt"
                else "Greedy BLEU on")
        lines += [f"{what} the first {info['dev_utterances']} dev segments: "
                  f"{info['dev_bleu_greedy_averaged']:.2f} for the averaged model; per kept "
                  "snapshot in the column `dev_bleu_greedy`."]
    (out / "card.md").write_text("\n".join(lines) + "\n")
    return out / "card.md"
