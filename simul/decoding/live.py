"""Live translation of one audio stream: ``simul stream``.

A source (:mod:`simul.decoding.sources`: a sound file, one segment of a corpus or a
microphone) is fed to a :class:`~simul.decoding.session.Session` in chunks of
``chunk_ms`` (:func:`stream`); every word is handed over as soon as the policy has written
it, with the source time at which it was written. With ``pace=True`` the chunks are fed
at the speed of speech (each when its audio would have been heard), so the wall time at
which a word appears, minus its source time, is the lag a listener would see.

The session's decisions do not depend on the chunking (:mod:`simul.decoding.session`):
streaming a segment gives the words and delays of :func:`simul.decoding.simulate.simulate`
on it, at any ``chunk_ms`` and with or without pacing. Only the wall and computation times differ.

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
automatic gain (:mod:`simul.decoding.level`) that brings speech to the corpus' speech level
from the audio heard so far. A corpus segment is fed as it is, so that it streams exactly
as the corpus is decoded (``simul decode``, sweeps and notebooks never level anything).
"""

from __future__ import annotations

import math
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from simul.decoding.level import (
    LevelControl,
)
from simul.decoding.session import Session, check_fit
from simul.decoding.sources import (  # noqa: F401 — also importable from here, as before
    CLIPPED_WARN,
    INPUT_COSTS,
    INSTALL_MIC,
    LiveError,
    Source,
    corpus_segment,
    damage_warnings,
    microphone,
    open_source,
    read_wav,
)
from simul.models.adapter import SAMPLE_RATE

LONG_SOURCE_S = 60.0
"""Beyond this much audio, ``simul stream`` notes that the cost grows with the length."""

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


def source_pair(pair: str | None, model, *, needed: bool = True) -> str:
    """The pair a ``--segment`` is read in: the model's own, ``pair`` refused when it is
    not, and needed for a model that records none (:func:`simul.models.registry.pair_for`).
    Without a segment to read (``needed`` False: a file, a microphone) a ``pair`` given is
    still checked against the model's; "" when there is none. ``model``: a name or a
    :class:`~simul.models.registry.Model`."""
    from simul.models import registry

    if not needed and not pair:
        return ""
    model = registry.model(model)
    if not needed and model.pair is None:
        return pair
    return registry.pair_for(model, pair)


LEVELS = ("auto", "off")
"""``simul stream --level``: a :class:`LevelControl` on the input, or the audio as it is."""

def heard_note(model) -> list[str]:
    """What ``simul stream --mic`` or ``--wav`` says first: what ``model`` (a name or a
    :class:`~simul.models.registry.Model`) has heard, with its own offline greedy BLEU by
    synthesizer on tst-HE (its ``metrics.json``: festival's voices there are ones its
    training never heard), or that none is known."""
    from simul.models import registry

    model = registry.model(model)
    name = model.directory.name
    lines = []
    if all(part.info.get("corpus_builder_version") is not None
           for part in model.parts or (model,)):
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


def main_stream(*, model, policy: str, settings: dict[str, str], source: Source,
                chunk_ms: float = 100.0, realtime: bool = False, level: str | None = None,
                out=None, err=None) -> int:
    """``simul stream``: load the model, stream ``source``, print each word as it is
    written, then a summary. ``level``: ``auto``, ``off`` or None (auto for a file or a
    microphone, off for a corpus segment; :func:`level_control`). Input errors are raised
    before the model is loaded. ``model``: a name (resolved once, here) or a
    :class:`~simul.models.registry.Model`."""
    from simul.models import loader, registry
    from simul.policies import make

    model = registry.model(model)
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
