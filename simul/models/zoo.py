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

from simul.models.espnet_st import ESPnetST

MODELS_DIR = Path(__file__).resolve().parents[2] / "data" / "models"


def shipped() -> list[str]:
    return sorted(p.parent.name for p in MODELS_DIR.glob("*/config.yaml"))


def load(name_or_dir: str | Path, device: str = "cpu") -> ESPnetST:
    """A shipped model by name, or any ESPnet2 ST model directory."""
    if (MODELS_DIR / str(name_or_dir) / "config.yaml").is_file():
        return ESPnetST.from_dir(MODELS_DIR / str(name_or_dir), device)
    path = Path(name_or_dir)
    if path.is_dir():
        return ESPnetST.from_dir(path, device)
    raise ValueError(
        f"no model {name_or_dir!r}: not a shipped model ({', '.join(shipped()) or 'none yet'})"
        " nor a directory"
    )


def metrics(name: str) -> dict:
    path = MODELS_DIR / name / "metrics.json"
    return json.loads(path.read_text()) if path.is_file() else {}


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


def pack(exp_dir: str | Path, name: str, *, pair: str, n_average: int = 3,
         out_root: Path = MODELS_DIR, command: str = "") -> Path:
    """Copy a trained ESPnet ST run into ``out_root/name`` with relative paths."""
    exp_dir = Path(exp_dir)
    out = out_root / name
    out.mkdir(parents=True, exist_ok=True)
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
    conf["output_dir"] = "."
    for key in ("train_data_path_and_name_and_type", "valid_data_path_and_name_and_type",
                "train_shape_file", "valid_shape_file"):
        conf.pop(key, None)
    (out / "config.yaml").write_text(yaml.safe_dump(conf, allow_unicode=True, sort_keys=False))
    files = epoch_files(exp_dir)[-n_average:]
    torch.save(average(files), out / "model.pth")
    curve = learning_curve(exp_dir)
    if curve:
        keys = sorted({k for r in curve for k in r}, key=lambda k: (k != "epoch", k))
        lines = [",".join(keys)] + [",".join(str(r.get(k, "")) for k in keys) for r in curve]
        (out / "learning_curve.csv").write_text("\n".join(lines) + "\n")
    info = {"pair": pair, "averaged": [f.name for f in files], "command": command,
            "run": str(exp_dir)}
    (out / "simul.json").write_text(json.dumps(info, indent=1) + "\n")
    return out


def evaluate(name: str, *, splits=("tst-COMMON", "tst-HE"), beams=(1, 5),
             max_utterances: int | None = None, progress: bool = True) -> dict:
    """Offline BLEU of a shipped model (greedy and beam), written to metrics.json."""
    from simul import decode
    from simul.metrics.quality import corpus_quality

    model = load(name)
    pair = json.loads((MODELS_DIR / name / "simul.json").read_text())["pair"]
    results = {}
    for split in splits:
        for beam in beams:
            recs = list(decode.offline_records(
                model, model_name=name, pair=pair, split=split, beam=beam,
                max_utterances=max_utterances, progress=progress))
            q = corpus_quality([r.prediction for r in recs], [r.reference for r in recs])
            timed = [r.elapsed[0] - r.source_length for r in recs if r.elapsed]
            ms = sum(timed) / max(len(timed), 1)
            results[f"{split}/beam{beam}"] = {
                "bleu": round(q.bleu, 2), "chrf": round(q.chrf, 2), "n": q.n,
                "signature": q.bleu_signature, "ms_per_utterance": round(ms, 1),
            }
    (MODELS_DIR / name / "metrics.json").write_text(json.dumps(results, indent=1) + "\n")
    write_card(name)
    return results


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
             f"- averaged snapshots: {', '.join(info['averaged'])}",
             "", "Made by:", "", "```", info.get("command") or f"simul train {name}",
             f"simul models pack RUN/exp {name} --pair {info['pair']}",
             f"simul models eval {name}", "```", "",
             "Offline BLEU (sacrebleu, full splits of the mini corpus):", "",
             "| split | decoding | BLEU | chrF | ms/utt |", "|---|---|---|---|---|"]
    path = out / "metrics.json"
    results = json.loads(path.read_text()) if path.is_file() else {}
    for key, r in results.items():
        split, beam = key.split("/")
        how = "greedy" if beam == "beam1" else beam.replace("beam", "beam ")
        lines.append(f"| {split} | {how} | {r['bleu']:.2f} | {r['chrf']:.2f} "
                     f"| {r['ms_per_utterance']:.0f} |")
    if results:
        lines += ["", f"Signature: `{next(iter(results.values()))['signature']}`"]
    lines += ["", "Learning curve: `learning_curve.csv` (ESPnet's per-epoch train/valid stats)."]
    (out / "card.md").write_text("\n".join(lines) + "\n")
    return out / "card.md"
