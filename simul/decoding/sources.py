"""The audio a live stream translates (``simul stream``): a sound file (:func:`read_wav`,
optionally a part of it), one segment of a corpus (:func:`corpus_segment`) or a microphone
(:func:`microphone`, with the optional ``sounddevice`` package), each a :class:`Source` of
16 kHz mono audio with what was done to it (resampled, mixed down) and what is wrong with
it (narrowband, clipped, silent: :func:`damage_warnings` says what each costs, measured).
:mod:`simul.decoding.live` streams a source through a session.
"""

from __future__ import annotations

import difflib
import math
import queue
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simul.corpus import Alignment
from simul.decoding.level import SPEECH_FLOOR_DBFS, clipped_fraction, speech_level_dbfs
from simul.models.adapter import SAMPLE_RATE

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


def damage_warnings(source: Source, model) -> list[str]:
    """One warning line for each kind of damage found in ``source`` (``Source.damage``:
    narrowband, clipped, silent), with what it costs: the measured numbers of ``model``
    (:data:`INPUT_COSTS`), or of the first measured model, named. ``model``: a name or a
    :class:`~simul.models.registry.Model`."""
    from simul.models import registry

    name = registry.model(model).directory.name
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
