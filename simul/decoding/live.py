"""Live translation of one audio stream: ``simul stream``.

A source — a sound file (:func:`read_wav`, optionally a part of it), one segment of a corpus
(:func:`corpus_segment`) or a microphone (:func:`microphone`, with the optional
``sounddevice`` package) — is fed to a :class:`~simul.decoding.session.Session` in chunks of
``chunk_ms`` (:func:`stream`); every word is handed over as soon as the policy has written
it, with the source time at which it was written. With ``pace=True`` the chunks are fed
at the speed of speech (each when its audio would have been heard), so the wall time at
which a word appears, minus its source time, is the lag a listener would see.

The session's decisions do not depend on the chunking (:mod:`simul.decoding.session`): streaming a
segment gives the words and delays of :func:`simul.decoding.simulate.simulate` on it, at any
``chunk_ms`` and with or without pacing. Only the wall and computation times differ.

Cost. An offline model re-encodes the whole prefix read at every decision, so a stream's
computation grows with the square of its length: a talk of minutes is slow. Stream a part
of it (``start_s``/``duration_s``) or a segment of the corpus.

Ctrl-C during :func:`stream` ends the input there and finishes the translation of what was
heard (a second Ctrl-C aborts).

What the models can hear. The shipped models have heard two synthesizers (espeak-ng and
festival), at the corpus' level only; other voices, microphones and rooms translate worse,
and so does quieter audio (their features are normalised with the corpus' global
statistics, so the absolute level counts). conformer_bpe_en-es, offline greedy: BLEU 26.1
on tst-HE's held-out festival voice against 69.1 on its espeak-ng speech (the model's card);
on the first 30 segments of tst-COMMON scaled ×1 / ×0.3 / ×0.1 / ×0.03, 71.1 / 65.4 / 15.5 /
0.4 as they are, 71.3 / 71.4 / 64.7 / 62.9 through a fresh :class:`LevelControl` each and
71.3 / 70.9 / 70.9 / 70.6 through one that has heard the segment before
(``benchmarks/input_level.py``; ``docs/reference/streaming.md``). So live input (a file, a
microphone) goes through a level control by default (``level``: ``auto``): a causal
automatic gain (:mod:`simul.decoding.level`) that brings speech to the corpus' speech level from the
audio heard so far. A corpus segment is fed as it is, so that it streams exactly
as the corpus is decoded (``simul decode``, sweeps and notebooks never level anything).
"""

from __future__ import annotations

import difflib
import math
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from simul.corpus import Alignment
from simul.decoding.level import (
    SPEECH_FLOOR_DBFS,
    LevelControl,
    clipped_fraction,
    speech_level_dbfs,
)
from simul.decoding.session import Session, check_fit
from simul.models.adapter import SAMPLE_RATE

LONG_SOURCE_S = 60.0
"""Beyond this much audio, ``simul stream`` notes that the cost grows with the length."""

INSTALL_MIC = ("pip install 'simul[live]' (or pip install sounddevice; on Debian/Ubuntu "
               "also apt-get install libportaudio2)")


class LiveError(ValueError):
    """Bad input to a live stream; the message names the file, segment or device."""


@dataclass(frozen=True)
class Source:
    """What ``simul stream`` translates: the whole audio (a file or a segment, 16 kHz mono)
    or a live source of chunks (``chunks(stopped)`` yields them as they come, until
    ``stopped()``)."""

    name: str
    audio: np.ndarray | None = None
    chunks: Callable[[Callable[[], bool]], Iterator[np.ndarray]] | None = None
    alignment: Alignment | None = None  # oracle word times (corpus segments)
    reference: str = ""  # the reference translation (corpus segments)
    notices: tuple[str, ...] = ()  # what was done to the audio (resampled, mixed down)
    # what is wrong with the audio: ("narrowband", rate Hz), ("clipped", fraction of the
    # samples), ("silence", 0.0); damage_warnings() says what each costs
    damage: tuple[tuple[str, float], ...] = ()
    origin: str = ""  # the file or device the damage is found in
    from_corpus: bool = False  # a corpus segment: fed as it is (no level control)

    @property
    def duration_s(self) -> float | None:
        return None if self.audio is None else self.audio.size / SAMPLE_RATE


# ---------------------------------------------------------------------------- input checks

INPUT_COSTS = {
    "conformer_bpe_en-es": {"clean": 73.2, "narrowband": 28.1,
                            "clipped": ((10.1, 68.4), (33.4, 13.9)), "silence_words": 3.0},
    "conformer_bpe_en-de": {"clean": 57.7, "narrowband": 18.3,
                            "clipped": ((10.1, 53.0), (33.4, 7.6)), "silence_words": 6.0},
}
"""What damaged input costs, measured (``python benchmarks/input_damage.py --model M
[--clip-gain 30]``; the table in ``docs/reference/streaming.md``): offline greedy BLEU of
each model on the first :data:`COST_SEGMENTS` segments of tst-COMMON fed as ``simul stream
--wav`` feeds a file (through a fresh level control): as built (``clean``), band-limited to
8 kHz and back (``narrowband``), amplified ×8 and ×30 and cut flat at full scale
(``clipped``: the % of samples clipped, BLEU); and the words it writes on average for
silence as long as those segments (``silence_words``, for :data:`COST_SILENCE_S` s). The
warnings of :func:`damage_warnings` quote the model in use's, else the first model's."""

COST_SEGMENTS = 20
COST_SILENCE_S = 9.1

CLIPPED_WARN = 0.001
"""A file with at least this fraction of its samples clipped (:func:`simul.decoding.level.
clipped_fraction`) is warned about; the corpus' dev and test segments have at most 0.019 %."""


def damage_warnings(source: Source, model: str) -> list[str]:
    """One warning line for each kind of damage found in ``source`` (``Source.damage``:
    narrowband, clipped, silent), with what it costs: the measured numbers of ``model``
    (:data:`INPUT_COSTS`), or of the first measured model, named."""
    from simul.models import registry

    name = registry.resolve(model).name
    measured = name if name in INPUT_COSTS else next(iter(INPUT_COSTS))
    c = INPUT_COSTS[measured]

    def cost(what: str) -> str:
        return (f"{measured}, offline greedy, first {COST_SEGMENTS} tst-COMMON segments: BLEU "
                f"{c['clean']:.1f} as built, {what}; docs/reference/streaming.md")

    (less, less_bleu), (more, more_bleu) = c["clipped"]
    lines = []
    for kind, value in source.damage:
        if kind == "narrowband":
            lines.append(f"warning: {source.origin}: {value:g} Hz: narrowband audio (nothing "
                         f"above {value / 2000:g} kHz), resampled to {SAMPLE_RATE} Hz; the "
                         f"models heard 16 kHz speech and translate it much worse ("
                         + cost(f"{c['narrowband']:.1f} band-limited to 8 kHz") + ")")
        elif kind == "clipped":
            lines.append(f"warning: {source.origin}: {100 * value:.2g} % of the samples are "
                         "clipped (cut flat at full scale): distorted speech translates worse ("
                         + cost(f"{less_bleu:.1f} with {less:.0f} % of the samples clipped, "
                                f"{more_bleu:.1f} with {more:.0f} %") + ")")
        elif kind == "silence":
            lines.append(f"warning: {source.origin}: no speech (no 20 ms frame above "
                         f"{SPEECH_FLOOR_DBFS:g} dBFS): any words written are made up "
                         f"({measured} writes {c['silence_words']:.1f} words on average for "
                         f"{COST_SILENCE_S:.1f} s of silence)")
    return lines


# ---------------------------------------------------------------------------- sources

def read_wav(path: str | Path, *, start_s: float = 0.0,
             duration_s: float | None = None) -> Source:
    """A sound file (any format soundfile reads), from ``start_s`` for ``duration_s``
    seconds (to the end by default), as 16 kHz mono: other rates are resampled with soxr,
    several channels are mixed down (their mean); each is noted in ``notices``. Audio the
    models cannot serve well is listed in ``damage``: sampled below 16 kHz, clipped
    (:data:`CLIPPED_WARN`), without speech (:func:`damage_warnings` says what each costs)."""
    import soundfile as sf
    import soxr

    path = Path(path)
    if not path.exists():
        raise LiveError(f"{path}: no such file")
    if not path.is_file():
        raise LiveError(f"{path}: not a file")
    if not (math.isfinite(start_s) and start_s >= 0):
        raise LiveError(f"--start must be a number of seconds >= 0, got {start_s}")
    if duration_s is not None and not (math.isfinite(duration_s) and duration_s > 0):
        raise LiveError(f"--duration must be a number of seconds > 0, got {duration_s}")
    try:
        info = sf.info(str(path))
    except (sf.SoundFileError, RuntimeError, OSError) as e:
        raise LiveError(f"{path}: not an audio file soundfile can read ({e})") from e
    rate, frames = int(info.samplerate), int(info.frames)
    if frames <= 0 or rate <= 0:
        raise LiveError(f"{path}: contains no audio samples")
    length_s = frames / rate
    start = round(start_s * rate)
    if start >= frames:
        raise LiveError(f"{path} lasts {length_s:.2f} s: --start {start_s:g} is past its end")
    stop = frames if duration_s is None else min(frames, start + max(1, round(duration_s * rate)))
    try:
        audio, _ = sf.read(str(path), start=start, stop=stop, dtype="float32", always_2d=True)
    except (sf.SoundFileError, RuntimeError, OSError) as e:
        raise LiveError(f"{path}: cannot read its audio ({e})") from e
    if audio.shape[0] == 0:
        raise LiveError(f"{path}: no audio samples read")
    notices = []
    if audio.shape[1] > 1:
        notices.append(f"{path}: {audio.shape[1]} channels, mixed down to mono (their mean)")
        audio = audio.mean(axis=1, dtype=np.float32)
    else:
        audio = audio[:, 0]
    damage: list[tuple[str, float]] = []
    clipped = clipped_fraction(audio)  # before resampling smooths the flat runs
    if rate < SAMPLE_RATE:
        damage.append(("narrowband", float(rate)))
    elif rate != SAMPLE_RATE:
        notices.append(f"{path}: {rate} Hz, resampled to {SAMPLE_RATE} Hz (soxr)")
    if rate != SAMPLE_RATE:
        audio = soxr.resample(audio, rate, SAMPLE_RATE).astype(np.float32, copy=False)
    audio = np.clip(audio, -1.0, 1.0)
    if clipped >= CLIPPED_WARN:
        damage.append(("clipped", clipped))
    if speech_level_dbfs(audio) == -math.inf:
        damage.append(("silence", 0.0))
    part = ""
    if start or stop < frames:
        part = f" {start / rate:.2f}–{stop / rate:.2f} s"
    return Source(f"{path}{part}", audio=np.ascontiguousarray(audio), notices=tuple(notices),
                  damage=tuple(damage), origin=str(path))


def corpus_segment(segment_id: str, *, corpus: str | Path, pair: str, split: str) -> Source:
    """One segment of a corpus split (the mini corpus or MuST-C) by its id
    (``<talk>_<n>``, e.g. ``talk_0480_2``): its audio, oracle alignment and reference."""
    from simul.corpus import load

    ids = []
    for segment in load(corpus, pair, split):  # audio read lazily, segment by segment
        if segment.id == segment_id:
            return Source(segment.id, audio=segment.audio, alignment=segment.alignment,
                          reference=segment.target, from_corpus=True)
        ids.append(segment.id)
    close = difflib.get_close_matches(segment_id, ids, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    listed = f"{ids[0]} … {ids[-1]}" if ids else "none"
    raise LiveError(f"segment {segment_id!r} is not in {corpus} {pair} {split} "
                    f"({len(ids)} segments: {listed}; ids are <talk>_<n>){hint}")


def _sounddevice():
    try:
        import sounddevice
    except ImportError as e:
        raise LiveError(f"--mic needs the sounddevice package, which is not installed: "
                        f"{INSTALL_MIC}") from e
    except OSError as e:  # sounddevice is there but the PortAudio library is not
        raise LiveError(f"--mic: sounddevice cannot load PortAudio ({e}); "
                        f"{INSTALL_MIC}") from e
    return sounddevice


def microphone(*, chunk_ms: float, duration_s: float | None = None,
               device: int | str | None = None) -> Source:
    """The default (or ``device``) audio input, recorded at 16 kHz mono where the device
    allows it, resampled with soxr otherwise; it stops after ``duration_s`` seconds, or on
    Ctrl-C. Needs ``sounddevice`` (:data:`INSTALL_MIC`) and an input device."""
    sd = _sounddevice()
    try:
        info = sd.query_devices(device, kind="input")
    except (sd.PortAudioError, ValueError) as e:
        raise LiveError(f"--mic: no audio input device ({e})") from e
    rate, notices, damage = SAMPLE_RATE, [f"microphone: {info['name']}"], []
    try:
        sd.check_input_settings(device, channels=1, dtype="float32", samplerate=SAMPLE_RATE)
    except (sd.PortAudioError, ValueError):
        rate = int(info["default_samplerate"])
        if rate < SAMPLE_RATE:
            damage.append(("narrowband", float(rate)))
        else:
            notices.append(f"microphone: {rate} Hz, resampled to {SAMPLE_RATE} Hz (soxr)")
    limit = None if duration_s is None else round(duration_s * SAMPLE_RATE)

    def chunks(stopped: Callable[[], bool]) -> Iterator[np.ndarray]:
        import soxr

        heard: queue.Queue[np.ndarray] = queue.Queue()
        resampler = soxr.ResampleStream(rate, SAMPLE_RATE, 1, dtype="float32") \
            if rate != SAMPLE_RATE else None

        def callback(indata, frames, time_info, status):
            heard.put(indata[:, 0].copy())

        got = 0
        with sd.InputStream(samplerate=rate, channels=1, dtype="float32", device=device,
                            blocksize=max(1, round(chunk_ms * rate / 1000)),
                            callback=callback):
            while not stopped() and (limit is None or got < limit):
                try:
                    chunk = heard.get(timeout=0.05)
                except queue.Empty:
                    continue
                if resampler is not None:
                    chunk = resampler.resample_chunk(chunk)
                if limit is not None:
                    chunk = chunk[: limit - got]
                got += chunk.size
                yield np.clip(chunk, -1.0, 1.0)

    return Source("microphone", chunks=chunks, notices=tuple(notices), damage=tuple(damage),
                  origin="microphone")


# ---------------------------------------------------------------------------- streaming

@dataclass(frozen=True)
class Shown:
    """A word of the translation as it appeared: the source read when it was written
    (``delay_ms``), that plus the computation so far (``elapsed_ms``) and the wall time
    since the stream started when :func:`stream` handed it over (``wall_ms``)."""

    text: str
    delay_ms: float
    elapsed_ms: float
    wall_ms: float

    @property
    def lag_ms(self) -> float:
        """How long after it was spoken (paced input: heard) the word appeared."""
        return self.wall_ms - self.delay_ms


@dataclass
class Result:
    words: list[Shown]
    audio_ms: float  # source streamed (to the end, or to where it was interrupted)
    compute_ms: float  # computation spent by the session (encoding, policy, model)
    wall_ms: float  # from the first chunk to the end of the translation
    paced: bool  # the input came at the speed of speech (pace=True, or a microphone)
    interrupted: bool = False  # Ctrl-C ended the input early
    session: Session | None = field(default=None, repr=False)
    level: LevelControl | None = field(default=None, repr=False)  # the gain applied, if any

    @property
    def rtf(self) -> float:
        """Real-time factor: computation per second of audio."""
        return self.compute_ms / self.audio_ms if self.audio_ms else math.nan

    @property
    def max_lag(self) -> Shown | None:
        return max(self.words, key=lambda w: w.lag_ms, default=None)

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)


class _Stop:
    """Ctrl-C, deferred: the first one asks the stream to stop (after the chunk being
    decided), a second one aborts."""

    def __init__(self, notice: Callable[[str], None]):
        self.requested = False
        self.notice = notice

    def __call__(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        self.notice("stopping: finishing the translation of what was heard "
                    "(Ctrl-C again aborts)")


@contextmanager
def _deferred_interrupt(notice: Callable[[str], None]):
    stop = _Stop(notice)
    if threading.current_thread() is not threading.main_thread():
        yield stop  # signals reach the main thread only: nothing to defer here
        return
    previous = signal.signal(signal.SIGINT, stop)
    try:
        yield stop
    finally:
        signal.signal(signal.SIGINT, previous)


def _chunks_of(audio: np.ndarray, chunk_ms: float) -> list[np.ndarray]:
    size = max(1, round(chunk_ms * SAMPLE_RATE / 1000))
    return [audio[a : a + size] for a in range(0, audio.size, size)]


def stream(session: Session,
           source: np.ndarray | Iterable[np.ndarray] | Callable[..., Iterable[np.ndarray]], *,
           chunk_ms: float = 100.0, pace: bool = False,
           on_word: Callable[[Shown], None] = lambda w: None,
           notice: Callable[[str], None] = lambda m: None,
           clock: Callable[[], float] = time.monotonic,
           sleep: Callable[[float], None] = time.sleep,
           level: LevelControl | None = None) -> Result:
    """Feed ``source`` to ``session`` and finish it; ``on_word`` gets every word as soon as
    it is complete.

    ``source``: the whole audio (16 kHz mono), fed in chunks of ``chunk_ms`` — the last one
    with the end, so the words and delays are those of the whole segment — at the speed of
    speech with ``pace``; or an iterable of chunks as they come (a microphone: already at
    that speed), ended after the last; or a function of ``stopped()`` that returns such an
    iterable (a live source that waits for audio can then end on Ctrl-C). Ctrl-C (in the
    main thread) stops the input after the chunk being decided and finishes the translation
    of what was heard; ``notice`` tells it. ``level``: a :class:`LevelControl` every chunk
    goes through before the session hears it (None: the audio as it is)."""
    if not chunk_ms > 0:
        raise LiveError(f"--chunk-ms must be > 0, got {chunk_ms}")
    words: list[Shown] = []
    whole = isinstance(source, np.ndarray)
    ended = False
    with _deferred_interrupt(notice) as stop:
        if whole:
            chunks: Iterable[np.ndarray] = _chunks_of(source, chunk_ms)
        else:
            chunks = source(lambda: stop.requested) if callable(source) else source
        last = len(chunks) - 1 if whole else -1  # type: ignore[arg-type]
        t0 = clock()

        def take(update) -> None:
            now = 1000.0 * (clock() - t0)
            for w in update.words:
                shown = Shown(w.text, w.delay_ms, w.elapsed_ms, now)
                words.append(shown)
                on_word(shown)

        try:
            for i, chunk in enumerate(chunks):
                if pace and whole:  # each chunk when its audio would have been heard
                    due = t0 + (session.received_ms / 1000 + chunk.size / SAMPLE_RATE)
                    while not stop.requested and (left := due - clock()) > 0:
                        sleep(min(left, 0.05))
                if stop.requested:
                    break
                if level is not None:
                    chunk = level.process(chunk)
                if i == last:
                    take(session.finish(chunk))
                    ended = True
                else:
                    take(session.push(chunk))
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()  # a live source stops recording
        if not ended:
            if session.received_ms == 0:
                raise LiveError("the stream stopped before any audio arrived")
            take(session.finish())
        return Result(words, session.received_ms, session.compute_ms,
                      1000.0 * (clock() - t0), paced=pace or not whole,
                      interrupted=stop.requested, session=session, level=level)


# ---------------------------------------------------------------------------- the command

def word_line(word: Shown, paced: bool) -> str:
    """``  2.80 s  hola`` (paced: ``  2.80 s  hola  (lag 0.35 s)``)."""
    line = f"{word.delay_ms / 1000:6.2f} s  {word.text}"
    return f"{line}  (lag {word.lag_ms / 1000:.2f} s)" if paced else line


def summary(result: Result) -> list[str]:
    """The lines printed after the words: counts and times, real-time factor, lag."""
    lines = [f"{len(result.words)} words, {result.audio_ms / 1000:.2f} s of source, "
             f"{result.compute_ms / 1000:.2f} s of compute: real-time factor "
             f"{result.rtf:.2f}"]
    if result.paced:
        worst = result.max_lag
        lag = (f"max lag {worst.lag_ms / 1000:.2f} s ({worst.text!r}: written at "
               f"{worst.delay_ms / 1000:.2f} s of source, shown at {worst.wall_ms / 1000:.2f} s)"
               if worst else "no words, no lag")
        lines.append(f"real time: {result.audio_ms / 1000:.2f} s of source in "
                     f"{result.wall_ms / 1000:.2f} s of wall time; {lag}")
    return lines


def source_pair(pair: str | None, model: str, *, needed: bool = True) -> str:
    """The pair a ``--segment`` is read in: the model's own, ``pair`` refused when it is
    not, and needed for a model that records none (:func:`simul.models.registry.pair_for`).
    Without a segment to read (``needed`` False: a file, a microphone) a ``pair`` given is
    still checked against the model's; "" when there is none."""
    from simul.models import registry

    if not needed and not pair:
        return ""
    if not needed and registry.pair(model) is None:
        return pair
    return registry.pair_for(model, pair)


def open_source(*, wav: str | None = None, segment: str | None = None, mic: bool = False,
                start_s: float | None = None, duration_s: float | None = None,
                chunk_ms: float = 100.0, corpus: str | Path = "", pair: str = "",
                split: str = "") -> Source:
    """The source ``simul stream`` names (exactly one of ``wav``, ``segment``, ``mic``)."""
    if [wav is not None, segment is not None, mic].count(True) != 1:
        raise LiveError("give one source: --wav FILE, --segment ID or --mic")
    if not chunk_ms > 0:
        raise LiveError(f"--chunk-ms must be > 0, got {chunk_ms}")
    if segment is not None:
        if start_s is not None or duration_s is not None:
            raise LiveError("--start/--duration cut a --wav file (or --duration a --mic "
                            "recording); a --segment is streamed whole")
        return corpus_segment(segment, corpus=corpus, pair=pair, split=split)
    if mic:
        if start_s is not None:
            raise LiveError("--start applies to --wav; a microphone starts now")
        if duration_s is not None and not duration_s > 0:
            raise LiveError(f"--duration must be > 0, got {duration_s}")
        return microphone(chunk_ms=chunk_ms, duration_s=duration_s)
    return read_wav(wav, start_s=start_s or 0.0, duration_s=duration_s)


LEVELS = ("auto", "off")
"""``simul stream --level``: a :class:`LevelControl` on the input, or the audio as it is."""

def heard_note(model: str) -> list[str]:
    """What ``simul stream --mic`` or ``--wav`` says first: what ``model`` has heard, with
    its own offline greedy BLEU by synthesizer on tst-HE (its ``metrics.json``: festival's
    voices there are ones its training never heard), or that none is known."""
    from simul.models import registry

    directory = registry.resolve(model)
    name = directory.name
    parts = registry.cascade_parts(directory) if registry.is_cascade(directory) else (directory,)
    lines = []
    if all(registry.info(part).get("corpus_builder_version") is not None for part in parts):
        # trained on the mini corpus (a cascade: both its models)
        lines.append(f"note: {name} has heard two synthesizers (espeak-ng, festival) at the "
                     "corpus' level only; other voices, microphones and rooms translate worse")
    by_engine = registry.metrics(model).get("tst-HE/beam1", {}).get("by_engine", {})
    if {"festival", "espeak-ng"} <= set(by_engine):
        lines.append(f"  ({name}, offline greedy BLEU from its metrics.json: "
                     f"{by_engine['festival']['bleu']:.1f} for tst-HE's festival voice, "
                     f"which its training never heard, against "
                     f"{by_engine['espeak-ng']['bleu']:.1f} for its espeak-ng speech)")
    else:
        lines.append(f"note: {name}: no quality by voice is known (its metrics.json has no "
                     "tst-HE/beam1 by synthesizer; simul models eval measures it)")
    return lines


def level_control(level: str | None, source: Source) -> LevelControl | None:
    """``--level``: ``auto`` (the default for a file or a microphone) gives a fresh
    :class:`LevelControl`; ``off`` (the default for a corpus segment, so that it streams
    exactly as the corpus is decoded) gives None."""
    if level is None:
        level = "off" if source.from_corpus else "auto"
    if level not in LEVELS:
        raise LiveError(f"--level must be one of {', '.join(LEVELS)}, got {level!r}")
    return LevelControl() if level == "auto" else None


def level_line(control: LevelControl) -> str:
    """What the level control did, said after the stream."""
    heard = control.speech_dbfs
    if heard is None:
        return "level: no speech heard above the noise floor; the audio went as it was"
    return (f"level: speech heard at {heard:.1f} dBFS, gain at the end "
            f"{control.gain_db:+.1f} dB towards the corpus' {control.target_dbfs:g} dBFS (at "
            f"most {control.max_gain_db:+g} dB)")


def main_stream(*, model: str, policy: str, settings: dict[str, str], source: Source,
                chunk_ms: float = 100.0, realtime: bool = False, level: str | None = None,
                out=None, err=None) -> int:
    """``simul stream``: load the model, stream ``source``, print each word as it is
    written, then a summary. ``level``: ``auto``, ``off`` or None (auto for a file or a
    microphone, off for a corpus segment; :func:`level_control`). Input errors are raised
    before the model is loaded."""
    from simul.models import loader
    from simul.policies import make

    out, err = out or sys.stdout, err or sys.stderr

    def tell(message: str) -> None:
        print(message, file=err, flush=True)

    the_policy = make(policy, settings)  # bad settings fail before the model loads
    control = level_control(level, source)
    if not source.from_corpus:  # a microphone or a recording: voices the models never heard
        for line in heard_note(model):
            tell(line)
    for line in (*source.notices, *damage_warnings(source, model)):
        tell(line)
    seconds = source.duration_s
    if seconds is not None and seconds > LONG_SOURCE_S:
        tell(f"note: {seconds:.0f} s of audio: an offline model re-encodes the whole prefix "
             f"at every read, so the cost grows with the square of the length; "
             f"--start/--duration stream a part (or --segment one sentence of a corpus)")
    paced = realtime or source.audio is None
    try:
        st_model = loader.load(model)
        setting = ", ".join(f"{k}={v}" for k, v in the_policy.settings().items())
        length = f"{seconds:.2f} s" if seconds is not None else "Ctrl-C to stop"
        tell(f"streaming {source.name} ({length}) — {model}, {the_policy.name}({setting}), "
             f"{chunk_ms:g} ms chunks{', in real time' if realtime and seconds else ''}")
        if control is not None:
            tell(f"level: auto — a causal gain brings speech to the corpus' level "
                 f"({control.target_dbfs:g} dBFS, at most {control.max_gain_db:+g} dB); "
                 f"--level off feeds the audio as it is")
        for note in check_fit(st_model, the_policy):
            tell(f"note: {note}")
        session = Session(st_model, the_policy, alignment=source.alignment)
        result = stream(session, source.audio if source.audio is not None else source.chunks,
                        chunk_ms=chunk_ms, pace=realtime, notice=tell, level=control,
                        on_word=lambda w: print(word_line(w, paced), file=out, flush=True))
    except KeyboardInterrupt:  # before the stream began, or a second Ctrl-C
        tell("simul: aborted")
        return 130
    if control is not None:
        tell(level_line(control))
    if result.interrupted:
        tell(f"interrupted after {result.audio_ms / 1000:.2f} s of source: translated what "
             f"was heard")
    print(f"translation: {result.text}", file=out)
    if source.reference:
        print(f"reference:   {source.reference}", file=out)
    for line in summary(result):
        print(line, file=out)
    if result.rtf > 1:
        tell(f"simul: warning: the model falls behind real time: {result.rtf:.2f} s of "
             f"compute per second of audio, so the lag grows as the stream goes on (an "
             f"offline model re-encodes the whole prefix at every read: stream less audio, "
             f"use larger chunks of the policy, or a cheaper policy)")
    return 0
