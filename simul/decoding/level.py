"""The level of live input: a causal automatic gain that brings speech to the corpus' level.

The shipped models heard speech at the level of the embedded corpus only, and translate quiet
audio badly (``conformer_bpe_en-es``, first 30 tst-COMMON segments: offline greedy BLEU 71.1
as built, 15.5 at ×0.1, 0.4 at ×0.03). :class:`LevelControl` levels a live stream (``simul
stream --wav`` or ``--mic``, :mod:`simul.decoding.live`) from what it has heard so far, never from
what comes next: the gain applied to a frame depends only on the frames before it. Corpus
evaluation never goes through it. Measured with ``python benchmarks/input_level.py``.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from simul.corpus import SAMPLE_RATE

CORPUS_LEVEL_DBFS = -19.0
"""The speech level of the corpus the shipped models were trained on: the energy mean, in
dBFS, of 20 ms frames above :data:`SPEECH_FLOOR_DBFS` (:func:`speech_level_dbfs`) — −19.3
over the talks of the mini corpus' train split (espeak-ng −18.5, festival −21.5; talks from
−26.4 to −12.2), −20.5 / −19.3 / −19.6 over dev / tst-COMMON / tst-HE
(``python benchmarks/input_level.py --corpus-level``)."""

SPEECH_FLOOR_DBFS = -70.0
"""Frames below this level are never taken for speech (:class:`LevelControl`)."""

LEVEL_FRAME_MS = 20.0


def _frame_stats(frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Level (dBFS, floored at −120) and peak of each frame (rows of ``frames``)."""
    power = np.mean(np.square(frames, dtype=np.float64), axis=-1)
    return 10 * np.log10(np.maximum(power, 1e-12)), np.max(np.abs(frames), axis=-1)


def speech_level_dbfs(audio: np.ndarray, *, floor_dbfs: float = SPEECH_FLOOR_DBFS,
                      frame_ms: float = LEVEL_FRAME_MS) -> float:
    """The speech level of ``audio`` (16 kHz): the energy mean, in dBFS, of its frames of
    ``frame_ms`` above ``floor_dbfs`` (−inf when there is none). The measure of
    :data:`CORPUS_LEVEL_DBFS`, on the whole audio at once (not causal)."""
    size = max(1, round(frame_ms * SAMPLE_RATE / 1000))
    n = audio.size // size
    if n == 0:
        return -math.inf
    level, _ = _frame_stats(np.asarray(audio[: n * size], np.float32).reshape(n, size))
    speech = level[level > floor_dbfs]
    return float(10 * np.log10(np.mean(10 ** (speech / 10)))) if speech.size else -math.inf


CLIP_LEVEL = 0.999
"""A sample this close to full scale (in magnitude) is at the rail: clipped, when its
neighbour is there too (:func:`clipped_fraction`)."""


def clipped_fraction(audio: np.ndarray, *, rail: float = CLIP_LEVEL) -> float:
    """The fraction of ``audio``'s samples that are clipped: at the rail (``|x| ≥ rail``)
    next to a sample at the same rail. One sample at full scale is a peak; two or more in a
    row, a waveform cut flat (a recording overdriven, a gain applied without a limiter)."""
    x = np.asarray(audio, np.float32)
    if x.size < 2:
        return 0.0
    side = np.where(x >= rail, 1, np.where(x <= -rail, -1, 0))
    same = (side[1:] == side[:-1]) & (side[1:] != 0)  # sample i+1 and i on one rail
    flat = np.zeros(x.size, bool)
    flat[1:] |= same
    flat[:-1] |= same
    return float(flat.mean())


def soft_limit(x: np.ndarray, knee: float = 0.9) -> np.ndarray:
    """Samples up to ``knee`` in magnitude as they are, those above it bent smoothly (tanh)
    towards ±1, which none passes: the level control never clips."""
    y = np.asarray(x, np.float32)
    over = np.abs(y) > knee
    if not over.any():
        return y
    y = y.copy()
    a = np.abs(y[over]).astype(np.float64)
    bent = knee + (1 - knee) * np.tanh((a - knee) / (1 - knee))
    y[over] = np.clip(np.sign(y[over]) * bent, -1.0, 1.0)
    return y


class LevelControl:
    """A causal automatic gain for live input: it brings speech to ``target_dbfs`` (the
    corpus' level, :data:`CORPUS_LEVEL_DBFS`) using only audio already heard.

    The audio is cut in frames of ``frame_ms`` counted from the start of the stream. After
    each frame:

    * a noise floor follows the quietest frames (down at once, up by
      ``noise_rise_db_per_s``); a frame above ``floor_dbfs`` and more than ``gate_db``
      above the noise floor is speech (a frame heard before the floor was known — speech
      from the first frame — is looked at again for ``recheck_s``);
    * the speech level is a running energy mean of the speech frames (their mean so far,
      then over about the last ``window_s`` of speech): :data:`CORPUS_LEVEL_DBFS`'s measure;
    * once ``first_s`` of speech is heard, the gain wanted is ``target_dbfs`` minus the
      speech level, less ``doubt_db / sqrt(speech frames)`` in size (a short estimate moves
      the gain only where it is far off), bounded to [−``max_cut_db``, ``max_gain_db``] and
      so that the loudest recent peak (decaying by ``peak_decay_db_per_s``) stays below 1;
    * the gain moves towards it by at most ``rise_db_per_s`` up, ``fall_db_per_s`` down.

    Within a frame the gain goes linearly from its value at the end of the frame before to
    the one decided then: the gain of a sample depends only on the frames before its own,
    so the output depends on nothing after it, nor on how the audio is cut into chunks.
    Before any speech the gain is 1 (0 dB), and it holds through pauses. The output goes
    through :func:`soft_limit`: it never passes ±1.

    ``process(chunk)`` returns the chunk, levelled; ``gain_db`` is the gain now and
    ``speech_dbfs`` the speech level heard so far (None before any speech)."""

    def __init__(self, target_dbfs: float = CORPUS_LEVEL_DBFS, *, max_gain_db: float = 30.0,
                 max_cut_db: float = 20.0, floor_dbfs: float = SPEECH_FLOOR_DBFS,
                 gate_db: float = 12.0, window_s: float = 4.0, rise_db_per_s: float = 100.0,
                 fall_db_per_s: float = 100.0, noise_rise_db_per_s: float = 3.0,
                 peak_decay_db_per_s: float = 10.0, doubt_db: float = 12.0,
                 recheck_s: float = 2.0, first_s: float = 0.2, frame_ms: float = LEVEL_FRAME_MS,
                 sample_rate: int = SAMPLE_RATE):
        if not (max_gain_db >= 0 and max_cut_db >= 0):
            raise ValueError("max_gain_db and max_cut_db must be >= 0")
        if not (frame_ms > 0 and window_s > 0 and rise_db_per_s > 0 and fall_db_per_s > 0):
            raise ValueError("frame_ms, window_s and the gain rates must be > 0")
        self.target_dbfs, self.max_gain_db, self.max_cut_db = target_dbfs, max_gain_db, max_cut_db
        self.floor_dbfs, self.gate_db = floor_dbfs, gate_db
        self.frame = max(1, round(frame_ms * sample_rate / 1000))
        seconds = self.frame / sample_rate  # one frame
        self._window = max(1.0, window_s / seconds)  # frames of speech in the running mean
        self._doubt = doubt_db
        self._first = max(1, round(first_s / seconds))  # frames of speech before any change
        self._recheck = max(0, round(recheck_s / seconds))  # frames
        self._waiting: deque[tuple[int, float]] = deque()  # (frame, level) not counted yet
        self._frames = 0
        self._rise, self._fall = rise_db_per_s * seconds, fall_db_per_s * seconds
        self._noise_rise = noise_rise_db_per_s * seconds
        self._peak_decay = 10 ** (-peak_decay_db_per_s * seconds / 20)
        self._pending = np.zeros(0, np.float32)  # input of the frame under way
        self._noise: float | None = None  # noise floor (dBFS)
        self._power = 0.0  # running mean power of the speech frames
        self._speech_frames = 0
        self._peak = 0.0  # recent peak of the input
        self._gain_db = 0.0  # at the end of the last complete frame
        self._next_db = 0.0  # at the end of the frame under way
        self._ramp = np.arange(1, self.frame + 1, dtype=np.float64) / self.frame

    @property
    def gain_db(self) -> float:
        return self._gain_db

    @property
    def speech_dbfs(self) -> float | None:
        return 10 * math.log10(self._power) if self._speech_frames else None

    def process(self, chunk: np.ndarray) -> np.ndarray:
        x = np.asarray(chunk, np.float32)
        if x.ndim != 1:
            raise ValueError(f"expected mono audio (one dimension), got shape {x.shape}")
        out = np.empty(x.size, np.float32)
        done = 0
        while done < x.size:
            at = self._pending.size
            take = min(self.frame - at, x.size - done)
            a0, a1 = 10 ** (self._gain_db / 20), 10 ** (self._next_db / 20)
            gain = a0 + (a1 - a0) * self._ramp[at : at + take]
            out[done : done + take] = x[done : done + take] * gain
            self._pending = np.concatenate([self._pending, x[done : done + take]])
            done += take
            if self._pending.size == self.frame:
                self._update(self._pending)
                self._pending = np.zeros(0, np.float32)
        return soft_limit(out)

    def _update(self, frame: np.ndarray) -> None:
        """Frame ``k`` is complete: decide the gain at the end of frame ``k + 1``."""
        level, peak = (float(v) for v in _frame_stats(frame))
        self._noise = level if self._noise is None else min(level, self._noise + self._noise_rise)
        self._peak = max(float(peak), self._peak * self._peak_decay)
        self._frames += 1
        if level > self.floor_dbfs:
            self._waiting.append((self._frames, level))
        # frames heard before the noise floor was known (speech from the first frame) are
        # taken for speech once it is: each frame above the floor is looked at again, in
        # order, until it is speech or ``recheck_s`` old
        gate = max(self.floor_dbfs, self._noise + self.gate_db)
        waiting: deque[tuple[int, float]] = deque()
        for at, heard in self._waiting:
            if heard > gate:
                self._speech_frames += 1
                weight = 1 / min(self._speech_frames, self._window)
                self._power += weight * (10 ** (heard / 10) - self._power)
            elif self._frames - at < self._recheck:
                waiting.append((at, heard))
        self._waiting = waiting
        self._gain_db = self._next_db
        if self._speech_frames < self._first:
            return
        want = self.target_dbfs - 10 * math.log10(self._power)
        doubt = self._doubt / math.sqrt(self._speech_frames)  # a few frames say little
        want = min(math.copysign(max(0.0, abs(want) - doubt), want), self.max_gain_db)
        if self._peak > 0:
            want = min(want, -20 * math.log10(self._peak))  # the peak heard stays below 1
        want = max(want, -self.max_cut_db)
        step = max(-self._fall, min(self._rise, want - self._gain_db))
        self._next_db = self._gain_db + step
