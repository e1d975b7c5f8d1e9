"""Deterministic builder of the embedded mini corpus, in MuST-C's layout.

Pipeline: English sentences from the seeded grammar (:mod:`.grammar`) → Spanish and
Portuguese by apertium (:mod:`.translate`) → speech by espeak-ng with word and phoneme
times (:mod:`.speech`) → talks (one wav per talk, one speaker per talk, short silences
between segments) → ``<root>/<pair>/data/<split>/{wav,txt}`` for ``en-es`` and ``en-pt``.

The corpus is written into ``<root>.tmp-<pid>`` and renamed into place only when complete,
with ``manifest.json`` (checksums of every file) written last, so a crash never leaves a
partial corpus where the reader looks. The audio files of ``en-pt`` are hard links to those
of ``en-es`` (same speech, other target).
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import random
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf
from tqdm import tqdm

from simul.corpus import manifest as manifest_mod
from simul.corpus.mini import grammar, translate
from simul.corpus.mini.speech import TARGET_RATE, Espeak, Voice

#: Bump when a change to the builder changes its output: the reader then calls a corpus stale.
BUILDER_VERSION = 1

SPLITS: dict[str, int] = {"train": 12000, "dev": 500, "tst-COMMON": 500, "tst-HE": 400}
PAIRS: tuple[str, ...] = ("en-es", "en-pt")

#: English accents of espeak-ng (voice files under gmw/).
ACCENTS: tuple[str, ...] = (
    "en", "en-us", "en-gb-scotland", "en-gb-x-rp", "en-029", "en-us-nyc",
    "en-gb-x-gbclan", "en-gb-x-gbcwmd",
)
#: Voice variants (``!v/``) heard in train, dev and tst-COMMON.
SEEN_VARIANTS: tuple[str, ...] = (
    "m1", "m2", "m3", "m4", "m5", "m6", "f1", "f2", "f3", "f4", "klatt", "klatt2", "klatt3",
    "adam", "anika", "belinda", "benjamin", "david", "edward", "john", "linda", "max",
    "norbert", "paul",
)
#: Variants heard only in tst-HE: every tst-HE voice is new to a model trained on train.
HELD_OUT_VARIANTS: tuple[str, ...] = (
    "m7", "m8", "f5", "klatt4", "iven", "steph", "robert", "Annie",
)
RATE_WPM = (100, 160)  # espeak-ng words/min; gives ~5.3 s mean segments (MuST-C-like)
PITCH = (30, 70)
PITCH_RANGE = (35, 70)
TALK_SEGMENTS = (12, 40)
GAP_MS = (250, 900)
EDGE_MS = 400  # silence at the start and end of every talk


@dataclass(frozen=True)
class TalkPlan:
    name: str
    split: str
    voice: Voice
    sentences: tuple[str, ...]
    gaps_ms: tuple[int, ...]  # silence before each segment (the first one after EDGE_MS)


def parse_sizes(text: str) -> dict[str, int]:
    """``"train=200,dev=20"`` → sizes; splits not named keep their default."""
    sizes = dict(SPLITS)
    for item in filter(None, (p.strip() for p in text.split(","))):
        name, _, value = item.partition("=")
        if name not in SPLITS or not value.isdigit() or int(value) < 1:
            raise ValueError(f"bad size {item!r}: expected SPLIT=N with SPLIT in {list(SPLITS)}")
        sizes[name] = int(value)
    return sizes


def plan_talks(sentences: dict[str, list[str]], seed: int) -> list[TalkPlan]:
    """Group each split's sentences into talks and draw one speaker per talk."""
    talks: list[TalkPlan] = []
    for split, sents in sentences.items():
        rng = random.Random(f"{seed}:{split}:talks")
        variants = HELD_OUT_VARIANTS if split == "tst-HE" else SEEN_VARIANTS
        start = 0
        while start < len(sents):
            n = rng.randint(*TALK_SEGMENTS)
            chunk = tuple(sents[start : start + n])
            voice = Voice(
                accent=rng.choice(ACCENTS), variant=rng.choice(variants),
                rate_wpm=rng.randint(*RATE_WPM), pitch=rng.randint(*PITCH),
                pitch_range=rng.randint(*PITCH_RANGE),
            )
            gaps = tuple([EDGE_MS] + [rng.randint(*GAP_MS) for _ in chunk[1:]])
            talks.append(TalkPlan(f"talk_{len(talks) + 1:04d}", split, voice, chunk, gaps))
            start += n
    return talks


_ESPEAK: Espeak | None = None


def _init_worker() -> None:
    global _ESPEAK
    _ESPEAK = Espeak()


def synthesize_talk(plan: TalkPlan, wav_path: Path) -> list[dict]:
    """Speak one talk into ``wav_path``; return its segments' yaml fields and alignments."""
    assert _ESPEAK is not None, "worker not initialised"
    pieces, segments, cursor = [], [], 0
    for sentence, gap_ms in zip(plan.sentences, plan.gaps_ms, strict=True):
        gap = np.zeros(gap_ms * TARGET_RATE // 1000, np.int16)
        utt = _ESPEAK.synthesize(sentence, plan.voice)
        n_words = len(sentence.split())
        if len(utt.words) != n_words:
            raise RuntimeError(
                f"espeak-ng gave {len(utt.words)} word times for {n_words} words: {sentence!r}"
            )
        pieces += [gap, utt.audio]
        cursor += gap.size
        segments.append({
            "offset": cursor / TARGET_RATE,
            "duration": utt.audio.size / TARGET_RATE,
            "speaker_id": plan.voice.speaker_id,
            "voice": plan.voice.voice_id,
            "wav": wav_path.name,
            "align": {"words": [list(w) for w in utt.words],
                      "phonemes": [list(p) for p in utt.phonemes]},
        })
        cursor += utt.audio.size
    pieces.append(np.zeros(EDGE_MS * TARGET_RATE // 1000, np.int16))
    sf.write(wav_path, np.concatenate(pieces), TARGET_RATE, subtype="PCM_16")
    return segments


def _synthesize_job(args: tuple[TalkPlan, Path]) -> list[dict]:
    return synthesize_talk(*args)


def _yaml_line(seg: dict) -> str:
    return (
        f"- {{duration: {seg['duration']:.6f}, offset: {seg['offset']:.6f}, "
        f"speaker_id: {seg['speaker_id']}, voice: {seg['voice']}, wav: {seg['wav']}}}\n"
    )


def _round_times(spans: list[list]) -> list[list]:
    return [[label, round(start, 2), round(end, 2)] for label, start, end in spans]


def _write_split(pair_dir: Path, split: str, segs: list[dict], src: list[str],
                 tgt: list[str], tgt_lang: str) -> None:
    txt = pair_dir / "data" / split / "txt"
    txt.mkdir(parents=True, exist_ok=True)
    (txt / f"{split}.yaml").write_text("".join(_yaml_line(s) for s in segs))
    (txt / f"{split}.en").write_text("".join(f"{s}\n" for s in src))
    (txt / f"{split}.{tgt_lang}").write_text("".join(f"{t}\n" for t in tgt))
    with open(txt / f"{split}.align.jsonl", "w") as f:
        for s in segs:
            a = s["align"]
            f.write(json.dumps({"words": _round_times(a["words"]),
                                "phonemes": _round_times(a["phonemes"])}) + "\n")


def build(root: str | Path, *, seed: int = 0, sizes: dict[str, int] | None = None,
          workers: int | None = None, progress: bool = True) -> dict:
    """Build the corpus at ``root`` (atomically); return its manifest."""
    root = Path(root)
    sizes = dict(SPLITS if sizes is None else sizes)
    workers = workers or os.cpu_count() or 1
    t0 = time.monotonic()
    tmp = root.with_name(f"{root.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        sentences = grammar.generate(sum(sizes.values()), seed)
        by_split, start = {}, 0
        for split, n in sizes.items():
            by_split[split] = sentences[start : start + n]
            start += n
        targets = translate.translate(sentences, ("es", "pt"), workers=workers)
        talks = plan_talks(by_split, seed)
        src_dir = tmp / PAIRS[0] / "data"
        jobs = []
        for talk in talks:
            wav_dir = src_dir / talk.split / "wav"
            wav_dir.mkdir(parents=True, exist_ok=True)
            jobs.append((talk, wav_dir / f"{talk.name}.wav"))
        # espeak-ng keeps state from one utterance to the next (the same sentence comes out
        # a few samples different after other voices), so every talk is spoken by a fresh
        # process: the output then depends only on the talk, not on how talks were scheduled.
        # The fork server is a clean process (never a copy of one that already used espeak).
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["simul.corpus.mini.build"])
        with ctx.Pool(workers, initializer=_init_worker, maxtasksperchild=1) as pool:
            results = list(tqdm(pool.imap(_synthesize_job, jobs, chunksize=1), total=len(jobs),
                                desc="espeak-ng talks", unit="talk", disable=not progress))
        segs_by_split: dict[str, list[dict]] = {s: [] for s in sizes}
        for talk, segs in zip(talks, results, strict=True):
            segs_by_split[talk.split] += segs
        start = 0
        for split, n in sizes.items():
            src = sentences[start : start + n]
            for pair in PAIRS:
                lang = pair.split("-")[1]
                tgt = targets[lang][start : start + n]
                _write_split(tmp / pair, split, segs_by_split[split], src, tgt, lang)
                if pair != PAIRS[0]:
                    _link_tree(src_dir / split / "wav", tmp / pair / "data" / split / "wav")
            start += n
        info = {
            "builder_version": BUILDER_VERSION,
            "seed": seed,
            "sizes": sizes,
            "pairs": list(PAIRS),
            "espeak_ng": _init_version(),
            "apertium": translate.apertium_version(),
            "build_seconds": round(time.monotonic() - t0, 1),
        }
        manifest = manifest_mod.write(tmp, info)
        if root.exists():
            shutil.rmtree(root)
        tmp.rename(root)
        return manifest
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _link_tree(src: Path, dst: Path) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    for f in sorted(src.iterdir()):
        os.link(f, dst / f.name)


def _init_version() -> str:
    return Espeak().version
