"""Deterministic builder of the embedded mini corpus, in MuST-C's layout.

Pipeline: English sentences from the seeded grammar (:mod:`.grammar`), grouped into
segments of one to three sentences → Spanish and Portuguese by apertium, sentence by
sentence (:mod:`.translate`), and German by the grammar's own German realiser
(:mod:`.german`), with the gold word links of every German word, joined per segment →
speech by espeak-ng (:mod:`.speech`) or festival (:mod:`.festival`), with word and phoneme
times from the synthesizer → talks (one wav per talk, one speaker per talk, short silences
between segments) → ``<root>/<pair>/data/<split>/{wav,txt}`` for ``en-es``, ``en-pt`` and
``en-de`` (``en-de`` adds ``<split>.links``: Pharaoh ``source-target`` word pairs).

Like MuST-C's, a segment may hold several sentences, so a target goes on after a "." or
"?": about half the segments hold one sentence, a third two and the rest three, the
sentences of longer segments being shorter ones, which keeps segment durations MuST-C-like
(mean 5–8 s, a tail past 15 s).

Who speaks what: train, dev and tst-COMMON mix both engines with the same voices; tst-HE is
spoken only by voices that train never uses (held-out espeak-ng variants and a festival
voice of its own).

The corpus is written into ``<root>.tmp-<pid>`` and renamed into place only when complete,
with ``manifest.json`` (checksums of every file) written last, so a crash never leaves a
partial corpus where the reader looks. The audio files of ``en-pt`` and ``en-de`` are hard
links to those of ``en-es`` (same speech, other target).
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import random
import shutil
import subprocess
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf
from tqdm import tqdm

from simul.corpus import manifest as manifest_mod
from simul.corpus.mini import festival, grammar, translate
from simul.corpus.mini import german as german_mod
from simul.corpus.mini.festival import Festival, FestivalVoice
from simul.corpus.mini.speech import TARGET_RATE, Espeak, Voice

#: Bump when a change to the builder changes its output: the reader then calls a corpus stale.
BUILDER_VERSION = 3
#: The builder version that last changed each pair's files: a model trained on a pair is
#: stale only when its pair changed since (version 3 added en-de and left en-es and en-pt
#: byte-identical).
PAIR_VERSIONS: dict[str, int] = {"en-es": 2, "en-pt": 2, "en-de": 3}


def pair_version(pair: str) -> int:
    """The builder version of ``pair``'s files (see :data:`PAIR_VERSIONS`)."""
    return PAIR_VERSIONS.get(pair, BUILDER_VERSION)


#: Segments per split (each of one to three sentences).
SPLITS: dict[str, int] = {"train": 12000, "dev": 500, "tst-COMMON": 500, "tst-HE": 400}
PAIRS: tuple[str, ...] = ("en-es", "en-pt", "en-de")
#: Pairs whose targets apertium gives (the others come from the grammar itself).
APERTIUM_PAIRS: tuple[str, ...] = ("en-es", "en-pt")

#: Sentences per segment and how often: one (about half), two (a third), three.
SENTENCES_PER_SEGMENT: tuple[tuple[int, float], ...] = ((1, 0.5), (2, 0.33), (3, 0.17))
#: Longest sentence (words) in a segment of n sentences: keeps segments MuST-C-like in length.
MAX_SENTENCE_WORDS: dict[int, int] = {1: grammar.MAX_WORDS, 2: 10, 3: 8}

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
#: Festival voices heard in train, dev and tst-COMMON, and the one kept for tst-HE.
SEEN_FESTIVAL: tuple[str, ...] = ("kal_diphone", "cmu_us_slt_arctic_hts")
HELD_OUT_FESTIVAL: tuple[str, ...] = ("ked_diphone",)
#: Share of talks spoken by festival (the rest by espeak-ng), in every split.
P_FESTIVAL = 0.35
FESTIVAL_RATES = (0.85, 0.9, 0.95, 1.0, 1.05, 1.1, 1.15, 1.2)
FESTIVAL_PITCH_CENTS = tuple(range(-300, 301, 50))
RATE_WPM = (100, 160)  # espeak-ng words/min
PITCH = (30, 70)
PITCH_RANGE = (35, 70)
TALK_SEGMENTS = (12, 40)
GAP_MS = (250, 900)
EDGE_MS = 400  # silence at the start and end of every talk


@dataclass(frozen=True)
class TalkPlan:
    name: str
    split: str
    voice: Voice | FestivalVoice
    segments: tuple[tuple[str, ...], ...]  # the sentences of each segment
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


def plan_segments(sizes: dict[str, int], seed: int,
                  german: dict[str, tuple[str, list[tuple[int, int]]]] | None = None,
                  ) -> dict[str, list[tuple[str, ...]]]:
    """Draw each split's segments: tuples of one to three distinct grammar sentences.

    Sentences come from one ``Grammar(seed)`` stream and are never shared between segments
    or splits. A segment of n sentences takes the oldest unused sentences of at most
    ``MAX_SENTENCE_WORDS[n]`` words; the sentences left unused at the end are dropped.
    ``german``, if given, receives the German of every sentence taken, with its links
    (:func:`simul.corpus.mini.german.translate`).
    """
    g = grammar.Grammar(seed)
    rng = random.Random(f"{seed}:segments")
    counts, weights = zip(*SENTENCES_PER_SEGMENT, strict=True)
    caps = sorted(set(MAX_SENTENCE_WORDS.values()))
    pools: dict[int, deque[tuple[int, str, Any, Any]]] = {cap: deque() for cap in caps}
    seen: set[str] = set()
    drawn = 0

    def take(cap: int) -> str:
        nonlocal drawn
        while True:
            heads = [(pools[c][0][0], c) for c in caps if c <= cap and pools[c]]
            if heads:
                _, sentence, tokens, node = pools[min(heads)[1]].popleft()
                if german is not None:
                    german[sentence] = german_mod.translate(tokens, node)
                return sentence
            sentence, tokens, node = g.parsed()
            if sentence in seen:
                continue
            seen.add(sentence)
            n_words = len(sentence.split())
            pools[next(c for c in caps if n_words <= c)].append((drawn, sentence, tokens, node))
            drawn += 1

    out: dict[str, list[tuple[str, ...]]] = {}
    for split, n in sizes.items():
        segments = []
        for _ in range(n):
            k = rng.choices(counts, weights)[0]
            segments.append(tuple(take(MAX_SENTENCE_WORDS[k]) for _ in range(k)))
        out[split] = segments
    return out


def _voice(rng: random.Random, split: str, use_festival: bool,
           heard: list[tuple[str, str]] | None) -> Voice | FestivalVoice:
    """A speaker for a talk of ``split``; ``heard``: the espeak-ng (accent, variant) pairs of
    train, from which dev and tst-COMMON draw (None while planning train itself)."""
    held_out = split == "tst-HE"
    if use_festival:
        return FestivalVoice(
            name=rng.choice(HELD_OUT_FESTIVAL if held_out else SEEN_FESTIVAL),
            rate=rng.choice(FESTIVAL_RATES), pitch_cents=rng.choice(FESTIVAL_PITCH_CENTS),
        )
    if held_out:
        accent, variant = rng.choice(ACCENTS), rng.choice(HELD_OUT_VARIANTS)
    elif heard:
        accent, variant = rng.choice(heard)
    else:
        accent, variant = rng.choice(ACCENTS), rng.choice(SEEN_VARIANTS)
    return Voice(accent=accent, variant=variant, rate_wpm=rng.randint(*RATE_WPM),
                 pitch=rng.randint(*PITCH), pitch_range=rng.randint(*PITCH_RANGE))


def plan_talks(segments: dict[str, list[tuple[str, ...]]], seed: int) -> list[TalkPlan]:
    """Group each split's segments into talks and draw one speaker per talk."""
    talks: list[TalkPlan] = []
    heard: list[tuple[str, str]] | None = None
    # train first: dev and tst-COMMON speak with voices heard in train
    for split in sorted(segments, key=lambda s: s != "train"):
        segs = segments[split]
        if split != "train" and heard is None:
            heard = sorted({(t.voice.accent, t.voice.variant) for t in talks
                            if isinstance(t.voice, Voice)})
        rng = random.Random(f"{seed}:{split}:talks")
        start = n_talks = n_festival = 0
        while start < len(segs):
            n = rng.randint(*TALK_SEGMENTS)
            chunk = tuple(segs[start : start + n])
            # a quota rather than a coin per talk: small splits get their share of festival
            n_talks += 1
            use_festival = n_festival < round(P_FESTIVAL * n_talks)
            n_festival += use_festival
            voice = _voice(rng, split, use_festival, heard)
            gaps = tuple([EDGE_MS] + [rng.randint(*GAP_MS) for _ in chunk[1:]])
            talks.append(TalkPlan(f"talk_{len(talks) + 1:04d}", split, voice, chunk, gaps))
            start += n
    return talks


def synthesize_talk(plan: TalkPlan, wav_path: Path) -> list[dict]:
    """Speak one talk into ``wav_path``; return its segments' yaml fields and alignments.

    The talk gets a synthesizer of its own, kept for all its segments and closed at the end.
    """
    if isinstance(plan.voice, FestivalVoice):
        with Festival() as engine:
            return _speak_talk(engine, plan, wav_path)
    return _speak_talk(Espeak(), plan, wav_path)


def _speak_talk(engine: Espeak | Festival, plan: TalkPlan, wav_path: Path) -> list[dict]:
    pieces, segments, cursor = [], [], 0
    for sentences, gap_ms in zip(plan.segments, plan.gaps_ms, strict=True):
        text = " ".join(sentences)
        gap = np.zeros(gap_ms * TARGET_RATE // 1000, np.int16)
        try:
            utt = engine.synthesize(text, plan.voice)
        except Exception as e:
            raise RuntimeError(f"{plan.voice.engine} failed on {text!r} with voice "
                               f"{plan.voice.speaker_id} ({plan.name}, {plan.split}): {e}") from e
        n_words = len(text.split())
        if len(utt.words) != n_words:
            raise RuntimeError(
                f"{plan.voice.engine} ({plan.voice.speaker_id}) gave {len(utt.words)} word "
                f"times for {n_words} words: {text!r}"
            )
        pieces += [gap, utt.audio]
        cursor += gap.size
        segments.append({
            "offset": cursor / TARGET_RATE,
            "duration": utt.audio.size / TARGET_RATE,
            "speaker_id": plan.voice.speaker_id,
            "voice": plan.voice.voice_id,
            "engine": plan.voice.engine,
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
        f"speaker_id: {seg['speaker_id']}, voice: {seg['voice']}, engine: {seg['engine']}, "
        f"wav: {seg['wav']}}}\n"
    )


def _round_times(spans: list[list]) -> list[list]:
    return [[label, round(start, 2), round(end, 2)] for label, start, end in spans]


def _write_split(pair_dir: Path, split: str, segs: list[dict], src: list[str],
                 tgt: list[str], tgt_lang: str,
                 links: list[list[tuple[int, int]]] | None = None) -> None:
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
    if links is not None:
        (txt / f"{split}.links").write_text(
            "".join(" ".join(f"{i}-{j}" for i, j in pairs) + "\n" for pairs in links))


def _segment_german(sentences: tuple[str, ...],
                    german: dict[str, tuple[str, list[tuple[int, int]]]],
                    ) -> tuple[str, list[tuple[int, int]]]:
    """A segment's German and links: its sentences' joined, indices shifted."""
    words: list[str] = []
    links: list[tuple[int, int]] = []
    n_src = 0
    for sentence in sentences:
        text, pairs = german[sentence]
        links += [(i + n_src, j + len(words)) for i, j in pairs]
        words += text.split()
        n_src += len(sentence.split())
    return " ".join(words), links


def _speak(jobs: list[tuple[TalkPlan, Path]], workers: int, progress: bool) -> list[list[dict]]:
    """Synthesize every talk, each in a fresh worker process; results in the order of ``jobs``.

    espeak-ng keeps state from one utterance to the next (the same sentence comes out a few
    samples different after other voices), and festival's output may depend on more than
    its input (see festival.py): so a talk is spoken by a process that spoke nothing before
    it, and the output depends only on the talk, not on how talks were scheduled. Within a
    talk, one synthesizer serves every segment (festival's start-up, 0.8 s, is shared by the
    talk's ~40 sentences). The fork server is a clean process (never a copy of one that used
    a synthesizer).
    """
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["simul.corpus.mini.build"])
    with ctx.Pool(workers, maxtasksperchild=1) as pool:
        return list(tqdm(pool.imap(_synthesize_job, jobs, chunksize=1), total=len(jobs),
                         desc="talks (espeak-ng, festival)", unit="talk",
                         disable=not progress))


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
        german: dict[str, tuple[str, list[tuple[int, int]]]] = {}
        segments = plan_segments(sizes, seed, german)
        sentences = [s for split in sizes for seg in segments[split] for s in seg]
        by_sentence = translate.translate(sentences, ("es", "pt"), workers=workers)
        talks = plan_talks(segments, seed)
        src_dir = tmp / PAIRS[0] / "data"
        jobs = []
        for talk in talks:
            wav_dir = src_dir / talk.split / "wav"
            wav_dir.mkdir(parents=True, exist_ok=True)
            jobs.append((talk, wav_dir / f"{talk.name}.wav"))
        results = _speak(jobs, workers, progress)
        segs_by_split: dict[str, list[dict]] = {s: [] for s in sizes}
        for talk, segs in zip(talks, results, strict=True):
            segs_by_split[talk.split] += segs
        start = 0
        for split in sizes:
            src = [" ".join(seg) for seg in segments[split]]
            n_sent = sum(len(seg) for seg in segments[split])
            for pair in PAIRS:
                lang = pair.split("-")[1]
                tgt, k = [], start
                links = None
                if pair in APERTIUM_PAIRS:
                    for seg in segments[split]:
                        tgt.append(" ".join(by_sentence[lang][k : k + len(seg)]))
                        k += len(seg)
                else:
                    done = [_segment_german(seg, german) for seg in segments[split]]
                    tgt, links = [t for t, _ in done], [pairs for _, pairs in done]
                _write_split(tmp / pair, split, segs_by_split[split], src, tgt, lang, links)
                if pair != PAIRS[0]:
                    _link_tree(src_dir / split / "wav", tmp / pair / "data" / split / "wav")
            start += n_sent
        info = {
            "builder_version": BUILDER_VERSION,
            "seed": seed,
            "sizes": sizes,
            "pairs": list(PAIRS),
            "pair_versions": {pair: pair_version(pair) for pair in PAIRS},
            "espeak_ng": _espeak_version(),
            "festival": festival.version(),
            "sox": _sox_version(),
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


def _espeak_version() -> str:
    return Espeak().version


def _sox_version() -> str:
    out = subprocess.run(["sox", "--version"], capture_output=True, text=True, check=False)
    return out.stdout.strip()


def main_build(root: str | Path, *, seed: int = 0, sizes: str = "", workers: int | None = None,
               force: bool = False, progress: bool = True) -> int:
    """``simul corpus build``: build the corpus at ``root`` unless it is up to date (same
    builder version, seed and sizes, every file as its manifest says)."""
    import sys
    import time

    from simul.corpus import CorpusError

    wanted = parse_sizes(sizes or "")
    root = Path(root)
    if not force and (root / manifest_mod.NAME).is_file():
        try:
            found = manifest_mod.verify(root, builder_version=BUILDER_VERSION)
        except CorpusError as e:
            print(f"rebuilding: {e}", file=sys.stderr)
        else:
            if found.get("seed") == seed and found.get("sizes") == wanted:
                print(f"{root}: up to date (seed {seed}); --force rebuilds it")
                return 0
            print(f"{root}: built with other settings; rebuilding", file=sys.stderr)
    t0 = time.monotonic()
    build(root, seed=seed, sizes=wanted, workers=workers, progress=progress)
    print(f"built {root} in {time.monotonic() - t0:.0f} s")
    return 0


def main_verify(root: str | Path) -> int:
    """``simul corpus verify``: every file of the corpus at ``root`` against its manifest."""
    found = manifest_mod.verify(Path(root), builder_version=BUILDER_VERSION, deep=True)
    print(f"{root}: {len(found['files'])} files match manifest.json")
    return 0
