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

Text of every split, speech of the splits asked for: a build plans every split (sentences
are drawn in order across the splits, and dev's voices are those train's talks drew) and
writes the text of each (``.en``, the targets, ``.links``), but speaks, and writes the
``wav/``, ``.yaml`` and ``.align.jsonl`` of, only the splits asked for; ``manifest.json``
lists them under ``splits``. :func:`add_splits` speaks another split into a built corpus
later (``simul corpus build --splits train``, or ``simul train`` on a corpus without
train). The files of a split are the same bytes either way.

The corpus is written into ``<root>.tmp-<pid>`` and renamed into place only when complete,
with ``manifest.json`` (checksums of every file) written last, so a crash never leaves a
partial corpus where the reader looks; a split added later is spoken there too, moved in,
and made visible by the manifest that lists it, replaced last. The audio files of ``en-pt``
and ``en-de`` are hard links to those of ``en-es`` (same speech, other target).
"""

from __future__ import annotations

import contextlib
import fcntl
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
from simul.corpus.built import (  # noqa: F401 — the builder's names, also read from here
    BUILDER_VERSION,
    PAIR_VERSIONS,
    SECONDS_PER_SEGMENT,
    SPLITS,
    built_sizes,
    built_splits,
    minutes_to_build,
    not_built,
    pair_version,
)
from simul.corpus.mini import festival, grammar, translate
from simul.corpus.mini import german as german_mod
from simul.corpus.mini.festival import Festival, FestivalVoice
from simul.corpus.mini.speech import TARGET_RATE, Espeak, Voice
from simul.corpus.mustc import CorpusError

#: The splits that tests and notebooks read: what ``simul corpus build`` speaks by default
#: (train, nine tenths of the audio, when training needs it).
EVAL_SPLITS: tuple[str, ...] = ("dev", "tst-COMMON", "tst-HE")
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


def parse_splits(text: str) -> tuple[str, ...]:
    """``"dev,tst-COMMON"`` → the splits to speak, in :data:`SPLITS` order; ``all``: every
    split; empty: :data:`EVAL_SPLITS`."""
    names = [p.strip() for p in text.split(",") if p.strip()]
    if not names:
        return EVAL_SPLITS
    if names == ["all"]:
        return tuple(SPLITS)
    bad = [n for n in names if n not in SPLITS]
    if bad:
        raise ValueError(f"--splits: no split {bad[0]!r}: expected 'all' or names from "
                         f"{', '.join(SPLITS)}")
    return tuple(s for s in SPLITS if s in names)


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


def _write_text(pair_dir: Path, split: str, src: list[str], tgt: list[str], tgt_lang: str,
                links: list[list[tuple[int, int]]] | None = None) -> None:
    """A split's text: ``.en``, the target and (German) the gold links, one segment a line."""
    txt = pair_dir / "data" / split / "txt"
    txt.mkdir(parents=True, exist_ok=True)
    (txt / f"{split}.en").write_text("".join(f"{s}\n" for s in src))
    (txt / f"{split}.{tgt_lang}").write_text("".join(f"{t}\n" for t in tgt))
    if links is not None:
        (txt / f"{split}.links").write_text(
            "".join(" ".join(f"{i}-{j}" for i, j in pairs) + "\n" for pairs in links))


def _write_speech(root: Path, split: str, segs: list[dict]) -> None:
    """A spoken split's ``.yaml`` and ``.align.jsonl`` in every pair, and its audio, spoken
    into the first pair's ``wav/``, hard-linked into the others'."""
    src_wav = root / PAIRS[0] / "data" / split / "wav"
    for pair in PAIRS:
        txt = root / pair / "data" / split / "txt"
        txt.mkdir(parents=True, exist_ok=True)
        (txt / f"{split}.yaml").write_text("".join(_yaml_line(s) for s in segs))
        with open(txt / f"{split}.align.jsonl", "w") as f:
            for s in segs:
                a = s["align"]
                f.write(json.dumps({"words": _round_times(a["words"]),
                                    "phonemes": _round_times(a["phonemes"])}) + "\n")
        if pair != PAIRS[0]:
            _link_tree(src_wav, root / pair / "data" / split / "wav")


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


def _speak_splits(talks: list[TalkPlan], splits, root: Path, workers: int,
                  progress: bool) -> dict[str, list[dict]]:
    """Speak the talks of ``splits`` into ``root/<first pair>/data/<split>/wav``; each
    split's segments (yaml fields and alignments), in corpus order."""
    jobs = []
    for talk in talks:
        if talk.split in splits:
            wav_dir = root / PAIRS[0] / "data" / talk.split / "wav"
            wav_dir.mkdir(parents=True, exist_ok=True)
            jobs.append((talk, wav_dir / f"{talk.name}.wav"))
    results = _speak(jobs, workers, progress) if jobs else []
    segs_by_split: dict[str, list[dict]] = {s: [] for s in splits}
    for (talk, _), segs in zip(jobs, results, strict=True):
        segs_by_split[talk.split] += segs
    return segs_by_split


def build(root: str | Path, *, seed: int = 0, sizes: dict[str, int] | None = None,
          splits=None, workers: int | None = None, progress: bool = True) -> dict:
    """Build the corpus at ``root`` (atomically): the text of every split of ``sizes``, the
    speech of ``splits`` (None: of every split); return its manifest."""
    root = Path(root)
    sizes = dict(SPLITS if sizes is None else sizes)
    spoken = [s for s in sizes if splits is None or s in splits]
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
        segs_by_split = _speak_splits(talks, spoken, tmp, workers, progress)
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
                _write_text(tmp / pair, split, src, tgt, lang, links)
            if split in spoken:
                _write_speech(tmp, split, segs_by_split[split])
            start += n_sent
        info = {
            "builder_version": BUILDER_VERSION,
            "seed": seed,
            "sizes": sizes,
            "splits": spoken,
            "pairs": list(PAIRS),
            "pair_versions": {pair: pair_version(pair) for pair in PAIRS},
            **_tool_versions(),
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


def add_splits(root: str | Path, splits, *, workers: int | None = None,
               progress: bool = True) -> dict:
    """Speak ``splits`` into the corpus at ``root``, built by simul with their text only;
    return its new manifest (the same as before when they are all spoken already).

    The talks are planned again from the manifest's seed and sizes (sentences and voices,
    not the targets: apertium is not needed), spoken into ``<root>.tmp-<pid>``, and their
    ``wav/``, ``.yaml`` and ``.align.jsonl`` moved into ``root``; the manifest, written
    last, makes them part of the corpus, and no other file changes. Refused, in one line,
    when the corpus's text is not what its seed plans, or the synthesizers are not those
    that spoke the other splits (``espeak_ng``, ``festival``, ``sox`` in the manifest). A
    second process adding the same split waits for the first and finds it done.
    """
    root = Path(root)
    manifest_mod.read(root)  # a missing corpus in one line, before the lock
    workers = workers or os.cpu_count() or 1
    with _locked(root):
        found = manifest_mod.verify(root, builder_version=BUILDER_VERSION)
        sizes, seed, built = built_sizes(found), found["seed"], built_splits(found)
        todo = [s for s in sizes if s in splits and s not in built]
        if not todo:
            return found
        t0 = time.monotonic()
        for field, now in _tool_versions().items():
            if found.get(field) != now:
                raise CorpusError(
                    f"{root / manifest_mod.NAME}: field {field!r} is {found.get(field)!r}, "
                    f"this machine has {now!r}: {', '.join(todo)} would not sound like the "
                    "other splits; rebuild the corpus with `simul corpus build --force "
                    "--splits all`")
        segments = plan_segments(sizes, seed)
        for split in todo:
            _check_source(root, split, seed, segments[split])
        talks = plan_talks(segments, seed)
        tmp = root.with_name(f"{root.name}.tmp-{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            segs_by_split = _speak_splits(talks, todo, tmp, workers, progress)
            for split in todo:
                _write_speech(tmp, split, segs_by_split[split])
            for split in todo:
                for pair in PAIRS:
                    _move_speech(tmp / pair / "data" / split, root / pair / "data" / split)
            info = {k: v for k, v in found.items() if k != "files"}
            info["splits"] = [s for s in sizes if s in built or s in todo]
            info["build_seconds"] = round(found.get("build_seconds", 0)
                                          + time.monotonic() - t0, 1)
            return manifest_mod.write(root, info)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def ensure_splits(root: str | Path, splits, *, workers: int | None = None,
                  progress: bool = True) -> None:
    """Speak whichever of ``splits`` the simul-built corpus at ``root`` (or above it, for a
    pair's folder) has not spoken yet, saying so first on stderr: what training calls
    before it reads train. A corpus simul did not build (MuST-C) is left as it is."""
    import sys

    from simul.corpus import manifest_root

    base = manifest_root(Path(root))
    if base is None:
        return
    found = manifest_mod.read(base)
    missing = [s for s in splits if s in found.get("sizes", {}) and s not in built_splits(found)]
    if not missing:
        return
    n = sum(found["sizes"][s] for s in missing)
    what = f"split {missing[0]} is" if len(missing) == 1 else f"splits {', '.join(missing)} are"
    print(f"{base}: {what} not built yet: building {'it' if len(missing) == 1 else 'them'} "
          f"first (≈ {minutes_to_build(n)} min)", file=sys.stderr)
    add_splits(base, missing, workers=workers, progress=progress)


def _check_source(root: Path, split: str, seed: int, segments: list[tuple[str, ...]]) -> None:
    """Refuse to speak ``split`` unless the corpus's English is what the seed plans."""
    path = root / PAIRS[0] / "data" / split / "txt" / f"{split}.en"
    if not path.is_file() or path.read_text() != "".join(f"{' '.join(seg)}\n"
                                                         for seg in segments):
        raise CorpusError(f"{path}: not the English that seed {seed} plans for {split} (built "
                          "by another builder?); rebuild the corpus with `simul corpus build "
                          "--force --splits all`")


def _move_speech(src: Path, dst: Path) -> None:
    """Move a split's ``wav/``, ``.yaml`` and ``.align.jsonl`` from ``src`` into ``dst`` (on
    the same file system), replacing what an add stopped before its manifest left there."""
    split = dst.name
    if (dst / "wav").exists():
        shutil.rmtree(dst / "wav")
    os.rename(src / "wav", dst / "wav")
    for name in (f"{split}.yaml", f"{split}.align.jsonl"):
        os.replace(src / "txt" / name, dst / "txt" / name)


@contextlib.contextmanager
def _locked(root: Path):
    """Hold an exclusive lock on the directory ``root`` while the block runs (the system
    releases it if the process dies)."""
    fd = os.open(root, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _tool_versions() -> dict[str, str]:
    """The versions of the programs that make the audio, as the manifest records them."""
    return {"espeak_ng": _espeak_version(), "festival": festival.version(),
            "sox": _sox_version()}


def _link_tree(src: Path, dst: Path) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    for f in sorted(src.iterdir()):
        os.link(f, dst / f.name)


def _espeak_version() -> str:
    return Espeak().version


def _sox_version() -> str:
    out = subprocess.run(["sox", "--version"], capture_output=True, text=True, check=False)
    return out.stdout.strip()


def main_build(root: str | Path, *, seed: int = 0, sizes: str = "", splits: str = "",
               workers: int | None = None, force: bool = False, progress: bool = True) -> int:
    """``simul corpus build``: build the corpus at ``root`` with the text of every split and
    the speech of ``splits`` (:func:`parse_splits`: the evaluation splits by default), unless
    it is up to date (same builder version, seed and sizes, every file as its manifest
    says); a corpus that is, but lacks the speech of a split asked for, gets it added
    (:func:`add_splits`), its other files untouched."""
    import sys

    wanted = parse_sizes(sizes or "")
    asked = parse_splits(splits or "")
    root = Path(root)
    if not force and (root / manifest_mod.NAME).is_file():
        try:
            found = manifest_mod.verify(root, builder_version=BUILDER_VERSION)
        except CorpusError as e:
            print(f"rebuilding: {e}", file=sys.stderr)
        else:
            if found.get("seed") == seed and found.get("sizes") == wanted:
                missing = [s for s in asked if s not in built_splits(found)]
                if not missing:
                    print(f"{root}: up to date (seed {seed}, spoken: "
                          f"{', '.join(built_splits(found))}); --force rebuilds it")
                    return 0
                t0 = time.monotonic()
                add_splits(root, missing, workers=workers, progress=progress)
                print(f"added {', '.join(missing)} to {root} in {time.monotonic() - t0:.0f} s")
                return 0
            print(f"{root}: built with other settings; rebuilding", file=sys.stderr)
    t0 = time.monotonic()
    build(root, seed=seed, sizes=wanted, splits=asked, workers=workers, progress=progress)
    text_only = [s for s in wanted if s not in asked]
    print(f"built {root} in {time.monotonic() - t0:.0f} s (spoken: {', '.join(asked)}"
          + (f"; text only: {', '.join(text_only)}, `--splits all` speaks it too)"
             if text_only else ")"))
    return 0


def main_verify(root: str | Path) -> int:
    """``simul corpus verify``: every file of the corpus at ``root`` against its manifest."""
    found = manifest_mod.verify(Path(root), builder_version=BUILDER_VERSION, deep=True)
    print(f"{root}: {len(found['files'])} files match manifest.json")
    for split in built_sizes(found):
        if split not in built_splits(found):
            print(not_built(root, split, found))
    return 0
