"""Learning curves of a training run: ESPnet's per-epoch statistics from ``train.log``,
the dev curve that packing measures by decoding (greedy BLEU, or an ASR's CTC WER), and
their plot.
"""

from __future__ import annotations

import re
from pathlib import Path


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

    curve = exp_dir / "curve.jsonl"  # simul's own loops (simul meta-train) write rows
    if curve.is_file() and not (exp_dir / "train.log").is_file():
        import json

        return [json.loads(line) for line in curve.read_text().splitlines() if line]
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


def dev_bleu(model_dir: Path, pair: str, utterances: int, *, corpus_root=None,
             task: str = "st") -> float:
    """Greedy BLEU of a model directory on the first ``utterances`` dev segments: an ST
    model's translations of the speech, an ``mt`` model's of the gold English transcripts
    (:func:`simul.decoding.decode_split.text_offline`)."""
    from simul.corpus import DEFAULT_ROOT
    from simul.decoding import decode_split
    from simul.metrics.quality import corpus_quality
    from simul.models.loader import load_dir

    kw = {"model_name": model_dir.name, "pair": pair, "split": "dev",
          "max_utterances": utterances, "corpus_root": corpus_root or DEFAULT_ROOT,
          "progress": False}
    if task == "mt":
        from simul.models.adapters.cascade import TextMT

        done = list(decode_split.text_offline(TextMT.from_dir(model_dir), **kw))
        return corpus_quality([t.prediction for t in done], [t.reference for t in done]).bleu
    recs = list(decode_split.offline_records(load_dir(model_dir), **kw))
    return corpus_quality([r.prediction for r in recs], [r.reference for r in recs]).bleu


def dev_wer_ctc(model_dir: Path, pair: str, utterances: int, *, corpus_root=None) -> float:
    """WER in % of an ASR model directory's greedy CTC transcripts (what the cascade
    policy reads, :func:`simul.decoding.decode_split.ctc_offline`) of the first ``utterances`` dev
    segments against their English source text (:func:`simul.metrics.quality.word_error_rate`)."""
    from simul.corpus import DEFAULT_ROOT
    from simul.decoding import decode_split
    from simul.metrics.quality import word_error_rate
    from simul.models.adapters.cascade import SpeechASR

    done = list(decode_split.ctc_offline(SpeechASR.from_dir(model_dir), model_name=model_dir.name,
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

