"""Shipped models (``data/models/<name>/``) and packing a trained run into one.

A shipped model directory holds everything ESPnet needs, with paths relative to it:
``config.yaml``, ``model.pth`` (checkpoints averaged), SentencePiece models, the global-MVN
statistics, the learning curve (``learning_curve.csv``/``.png``), ``metrics.json`` and a
``card.md`` with the command that made it and its measured offline BLEU.
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


def corpus_version(name: str) -> int | None:
    """Builder version of the mini corpus a shipped model was trained on (simul.json)."""
    info = json.loads((MODELS_DIR / name / "simul.json").read_text())
    return info.get("corpus_builder_version")


def stale(name: str) -> bool:
    """Whether a shipped model was trained on an older mini corpus than the one simul builds
    now: its numbers on today's corpus say how much harder the corpus became, not what the
    papers' policies do with a model that knows its data."""
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
    split the greedy BLEU (per synthesizer in brackets) and the beam BLEU. A cascade is
    named with its two models."""
    from simul.models import cascade

    if cascade.is_cascade(MODELS_DIR / name):
        try:
            asr, mt = cascade.parts(MODELS_DIR / name)
        except ValueError as e:
            return f"{name}  (a cascade that does not load: {e})"
        return f"{name}  (cascade: ASR {asr.name} → MT {mt.name})"
    head = f"{name}  (trained and scored on corpus v{corpus_version(name)}"
    head += ": stale, retrain on the current corpus)" if stale(name) else ")"
    m = metrics(name)
    if not m:
        return head + "  not evaluated (simul models eval NAME)"
    rows = {}
    for key, r in m.items():
        split, beam = key.split("/")
        cell = f"{'greedy' if beam == 'beam1' else beam} {r['bleu']:.1f}"
        if r.get("by_engine"):
            cell += " (" + ", ".join(f"{e} {v['bleu']:.1f}"
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


def learning_curve(exp_dir: Path) -> list[dict]:
    """Per-epoch train/valid statistics from ESPnet's ``train.log``."""
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
                if key in ("loss", "acc", "bleu", "loss_st", "loss_asr", "cer_ctc"):
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


def dev_bleu(model_dir: Path, pair: str, utterances: int, *, corpus_root=None) -> float:
    """Greedy BLEU of a model directory on the first ``utterances`` dev segments."""
    from simul import decode
    from simul.corpus import DEFAULT_ROOT
    from simul.metrics.quality import corpus_quality

    model = ESPnetST.from_dir(model_dir)
    recs = list(decode.offline_records(model, model_name=model_dir.name, pair=pair,
                                       split="dev", max_utterances=utterances,
                                       corpus_root=corpus_root or DEFAULT_ROOT,
                                       progress=False))
    return corpus_quality([r.prediction for r in recs], [r.reference for r in recs]).bleu


def plot_curve(curve: list[dict], path: Path) -> None:
    """Loss, accuracy and BLEU per epoch, three panels, as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [("loss", ["train_loss", "valid_loss"]), ("accuracy", ["train_acc", "valid_acc"]),
              ("BLEU", ["valid_bleu", "dev_bleu_greedy"])]
    labels = {"valid_bleu": "valid, teacher-forced (ESPnet)",
              "dev_bleu_greedy": "dev, greedy decoding"}
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
    for ax, (title, keys) in zip(axes, panels, strict=True):
        for key in keys:
            pts = [(r["epoch"], r[key]) for r in curve if r.get(key) not in (None, "")]
            if pts:
                ax.plot(*zip(*pts, strict=True), marker="o",
                        label=labels.get(key, key.split("_")[0]))
        ax.set_xlabel("epoch")
        ax.set_ylabel(title)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def pack(exp_dir: str | Path, name: str, *, pair: str, n_average: int = 3,
         out_root: Path = MODELS_DIR, command: str = "", dev_utterances: int = 0,
         corpus_root=None, progress: bool = True, float16: bool = True) -> Path:
    """Copy a trained ESPnet ST run into ``out_root/name`` with relative paths.

    The averaged weights are stored in float16 unless ``float16`` is False (see :func:`half`).

    ``dev_utterances`` > 0 also decodes that many dev segments greedily with every kept
    epoch snapshot and with the average, for the learning curve (ESPnet's own validation
    BLEU is teacher-forced)."""
    exp_dir = Path(exp_dir)
    out = out_root / name
    out.mkdir(parents=True, exist_ok=True)
    _packed_config(exp_dir, out)
    snapshots = epoch_files(exp_dir)
    files = snapshots[-n_average:]
    state = average(files)
    torch.save(half(state) if float16 else state, out / "model.pth")
    curve = learning_curve(exp_dir)
    info = {"pair": pair, "averaged": [f.name for f in files], "command": command,
            "run": str(exp_dir), "stored": "float16" if float16 else "float32"}
    from simul.corpus import DEFAULT_ROOT, manifest

    corpus = Path(corpus_root or DEFAULT_ROOT)
    if (corpus / manifest.NAME).is_file():  # the corpus the run was exported from
        info["corpus_builder_version"] = manifest.read(corpus).get("builder_version")
    run_conf = yaml.safe_load((exp_dir / "config.yaml").read_text())
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

        by_epoch = {r["epoch"]: r for r in curve}
        for f in tqdm(snapshots, desc="dev BLEU per snapshot", disable=not progress):
            with tempfile.TemporaryDirectory() as tmp:
                shutil.copy(out / "config.yaml", tmp)
                for extra in ("bpe.model", "src_bpe.model", "feats_stats.npz"):
                    if (out / extra).is_file():
                        (Path(tmp) / extra).symlink_to(out / extra)
                (Path(tmp) / "model.pth").symlink_to(f.resolve())
                epoch = int(f.name.split("epoch")[0])
                by_epoch.setdefault(epoch, {"epoch": epoch})["dev_bleu_greedy"] = round(
                    dev_bleu(Path(tmp), pair, dev_utterances, corpus_root=corpus_root), 2)
        curve = sorted(by_epoch.values(), key=lambda r: r["epoch"])
        info["dev_utterances"] = dev_utterances
        info["dev_bleu_greedy_averaged"] = round(
            dev_bleu(out, pair, dev_utterances, corpus_root=corpus_root), 2)
    if curve:
        keys = sorted({k for r in curve for k in r}, key=lambda k: (k != "epoch", k))
        lines = [",".join(keys)] + [",".join(str(r.get(k, "")) for k in keys) for r in curve]
        (out / "learning_curve.csv").write_text("\n".join(lines) + "\n")
        plot_curve(curve, out / "learning_curve.png")
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


def evaluate(name: str | Path, *, splits=("tst-COMMON", "tst-HE"), beams=(1, 5),
             max_utterances: int | None = None, progress: bool = True) -> dict:
    """Offline quality of a shipped model, or of a model packed elsewhere (a directory with
    ``simul.json``, e.g. a snapshot packed with ``--out-root`` to compare training runs):
    greedy and beam (see :func:`offline_summary`), written to the model's metrics.json and
    card."""
    from simul import decode
    from simul.corpus import DEFAULT_ROOT, stats

    out = Path(name) if (Path(name) / "simul.json").is_file() else MODELS_DIR / str(name)
    if not (out / "simul.json").is_file():
        raise ValueError(f"no model {name!r}: neither a shipped model "
                         f"({', '.join(shipped())}) nor a packed directory with simul.json")
    model = load(out)
    pair = json.loads((out / "simul.json").read_text())["pair"]
    results = {}
    for split in splits:
        engines = stats.engines(DEFAULT_ROOT, pair, split)
        for beam in beams:
            recs = list(decode.offline_records(
                model, model_name=out.name, pair=pair, split=split, beam=beam,
                max_utterances=max_utterances, progress=progress))
            timed = [r.elapsed[0] - r.source_length for r in recs if r.elapsed]
            results[f"{split}/beam{beam}"] = {
                **offline_summary([r.prediction for r in recs], [r.reference for r in recs],
                                  [engines[r.index] for r in recs]),
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


def write_card(name: str, root: Path = MODELS_DIR) -> Path:
    """``card.md``: what the model is, the command that made it, its measured BLEU."""
    from simul.models.train import RECIPES

    out = root / name
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
             f"simul models eval {name}", "```", "",
             "Offline quality (sacrebleu, full splits of the mini corpus); BLEU per "
             "synthesizer of the source speech; length: BLEU's hypothesis/reference "
             "length ratio:", ""]
    path = out / "metrics.json"
    results = json.loads(path.read_text()) if path.is_file() else {}
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
    lines += ["", "Learning curve: `learning_curve.csv` and `learning_curve.png` (ESPnet's "
              "per-epoch train/valid statistics; its valid BLEU is teacher-forced)."]
    if (out / "learning_curve.png").is_file():
        lines += ["", "![learning curve](learning_curve.png)", ""]
    if "dev_bleu_greedy_averaged" in info:
        lines += [f"Greedy BLEU on the first {info['dev_utterances']} dev segments: "
                  f"{info['dev_bleu_greedy_averaged']:.2f} for the averaged model; per kept "
                  "snapshot in the column `dev_bleu_greedy`."]
    (out / "card.md").write_text("\n".join(lines) + "\n")
    return out / "card.md"
