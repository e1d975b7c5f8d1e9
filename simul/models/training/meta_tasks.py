"""The tasks of H20's meta-learning on the embedded corpus: a data-scarce target task and
the high-resource source tasks (Han et al. 2020 §2.2–2.3).

The target task is English→German speech translation on a subset of the en-de train split;
the source tasks come from the rest of train: English ASR, English→German text MT, and
speech translation into Spanish and Portuguese (the corpus' other pairs, which hear the same
English audio), as H20 meta-learns over ASR, MT and ST. Target and source tasks never share
a talk.

How scarce: H20's target task had 1 example for every 12.7 of its source tasks' (its
speech translation data against the ASR, MT and ST data it meta-learns on). With n train
segments and four source tasks drawn from the n − t segments the target task leaves,
4 (n − t) / t = 12.7 gives t = 4n / 16.7 (:func:`target_size`): 2874 of 12000 segments.

One vocabulary serves every task (H20's universal vocabulary): a SentencePiece BPE model
trained on the English transcripts and the German, Spanish and Portuguese references of
train, with the decoder's language tags (:data:`simul.models.adapters.meta_st.TAGS`) as pieces of
their own (:func:`universal_vocabulary`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from simul.models.adapters.meta_st import TAGS, Batch
from simul.models.training.meta import StepBatches, step_seed

SOURCE_TASKS = ("asr_en", "mt_en-de", "st_en-es", "st_en-pt")
TARGET_TASK = "st_en-de"
RATIO = 12.7
"""H20's source-task examples per target-task example."""
BATCH = {"speech": 10, "text": 40}
"""Segments per batch: speech (≈ 55 s of audio), text."""


def target_size(n_train: int, n_sources: int = len(SOURCE_TASKS), ratio: float = RATIO) -> int:
    """Target-task segments t such that ``n_sources`` · (n − t) / t = ``ratio``."""
    return round(n_sources * n_train / (ratio + n_sources))


def split_talks(segments, size: int, seed: int = 0) -> tuple[list, list]:
    """Whole talks drawn at random until they hold ``size`` segments (the target task's),
    and the segments of the other talks; each list in corpus order."""
    per_talk = Counter(s.talk for s in segments)
    talks = sorted(per_talk)
    order = np.random.default_rng(seed).permutation(len(talks))
    chosen, count = set(), 0
    for i in order:
        if count >= size:
            break
        chosen.add(talks[i])
        count += per_talk[talks[i]]
    return ([s for s in segments if s.talk in chosen],
            [s for s in segments if s.talk not in chosen])


@dataclass(frozen=True)
class Example:
    """One training example: audio (a wav and its sample range) or source units, and
    target units."""

    target: tuple[int, ...]
    wav: str | None = None
    start: int = 0
    stop: int = 0
    source: tuple[int, ...] = ()


@dataclass(frozen=True)
class Task:
    name: str
    modality: str  # "speech" | "text"
    language: str  # of the targets: "en", "de", "es", "pt"
    examples: tuple[Example, ...]


def universal_vocabulary(texts: list[str], prefix: Path, size: int) -> Path:
    """A SentencePiece BPE model of ``size`` pieces over ``texts``, the language tags among
    its pieces; returns the model file (kept if it exists)."""
    from simul.models.training import prepare

    lines = prefix.with_suffix(".text")  # ESPnet's text layout: an id, then the text
    if not prefix.with_suffix(".model").is_file():
        lines.write_text("".join(f"u{i} {t}\n" for i, t in enumerate(texts)))
    return prepare.train_sentencepiece(lines, prefix, size, "bpe",
                                       symbols=tuple(TAGS.values()))


def _samples(ms: float, rate: int) -> int:
    return int(round(ms * rate / 1000))


def make_task(name: str, segments, encode, *, rate: int = 16000) -> Task:
    """A task over corpus segments: ``asr_en`` (audio → transcript), ``mt_en-de`` (transcript
    → reference) or ``st_<pair>`` (audio → reference). ``encode(text)`` gives unit ids."""
    if name == "asr_en":
        modality, language = "speech", "en"
    elif name.startswith("mt_"):
        modality, language = "text", name.split("-")[-1]
    elif name.startswith("st_"):
        modality, language = "speech", name.split("-")[-1]
    else:
        raise ValueError(f"task: {name!r} is not asr_en, mt_<pair> or st_<pair>")
    examples = []
    for s in segments:
        target = tuple(encode(s.source if language == "en" else s.target))
        if modality == "speech":
            examples.append(Example(target, str(s.wav), _samples(s.offset_ms, rate),
                                    _samples(s.offset_ms + s.duration_ms, rate)))
        else:
            examples.append(Example(target, source=tuple(encode(s.source))))
    return Task(name, modality, language, tuple(examples))


def _pad(rows: list, value, dtype) -> tuple[torch.Tensor, torch.Tensor]:
    lengths = torch.tensor([len(r) for r in rows])
    out = torch.full((len(rows), int(lengths.max())), value, dtype=dtype)
    for i, r in enumerate(rows):
        out[i, : len(r)] = torch.as_tensor(np.asarray(r), dtype=dtype)
    return out, lengths


def make_batch(task: Task, indices, start_unit: int, *, hear=None, seeds=()) -> Batch:
    """The batch of ``task``'s examples at ``indices``; ``start_unit``: the decoder's first
    unit for the task's language. ``hear`` (an :class:`simul.models.training.augment.Hearing`):
    each example's audio as ``hear(audio, key, seed)`` gives it, with ``seeds`` one per
    example; its key is the example's wav and first sample (its level's draw)."""
    import soundfile as sf

    chosen = [task.examples[i] for i in indices]
    targets, target_lengths = _pad([e.target for e in chosen], 0, torch.long)
    if task.modality == "speech":
        audio = [sf.read(e.wav, start=e.start, stop=e.stop, dtype="float32")[0]
                 for e in chosen]
        if hear is not None:
            audio = [hear(a, f"{e.wav}@{e.start}", seed)
                     for a, e, seed in zip(audio, chosen, seeds, strict=True)]
        inputs, lengths = _pad(audio, 0.0, torch.float32)
    else:
        inputs, lengths = _pad([e.source for e in chosen], 0, torch.long)
    return Batch(task.modality, inputs, lengths, targets, target_lengths, start_unit)


class Sampler:
    """Step n's batches, from (seed, n) alone: a task drawn uniformly (H20 §2.2), then two
    disjoint batches of its examples, D and D′ (``pairs``), or one."""

    def __init__(self, tasks: list[Task], start_units: dict[str, int], *, pairs: bool,
                 batch: dict[str, int] | None = None, hear=None):
        if not tasks:
            raise ValueError("no task to sample from")
        self.tasks, self.start_units, self.pairs = list(tasks), start_units, pairs
        self.batch = {**BATCH, **(batch or {})}
        self.hear = hear  # augmentation of speech examples (make_batch), or None

    def __call__(self, seed: int, n: int) -> StepBatches:
        rng = np.random.default_rng(step_seed(seed, n))
        task = self.tasks[int(rng.integers(len(self.tasks)))]
        size = min(self.batch[task.modality], len(task.examples) // (2 if self.pairs else 1))
        picked = rng.choice(len(task.examples), size=size * (2 if self.pairs else 1),
                            replace=False)
        start = self.start_units[task.language]
        hear = self.hear if task.modality == "speech" else None
        # drawn after the examples, so that augmentation leaves which ones a step reads as is
        seeds = rng.integers(2**32, size=len(picked)).tolist() if hear else [None] * len(picked)
        first = make_batch(task, picked[:size], start, hear=hear, seeds=seeds[:size])
        second = (make_batch(task, picked[size:], start, hear=hear, seeds=seeds[size:])
                  if self.pairs else None)
        return StepBatches(task.name, first, second)
