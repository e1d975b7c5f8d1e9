"""Rooms, noise and level: the acoustic conditions models train on and are tested under.

Everything is generated from a seed, nothing is downloaded:

- **Rooms**: impulse responses of shoebox rooms from pyroomacoustics' image-source model,
  geometry and positions drawn from the seed, the walls' absorption set so that the RT60
  *measured* on the response (Schroeder's backward integration,
  ``pyroomacoustics.experimental.measure_rt60``) is within 5 % of the one asked for —
  Sabine's formula, which the library inverts, overestimates how fast a small room with
  uniform walls decays, by 20 to 50 % here.
- **Noise**: coloured noise (white, pink, brown: power falling as 1/f^β, β = 0, 1, 2) and
  babble (several utterances of other speakers summed at equal power).
- **Level**: a gain in dB.

Speech is mixed as ESPnet's preprocessor mixes it while training (``CommonPreprocessor``:
``rir_scp``, ``noise_scp``, ``noise_db_range``), so that a test condition means what the same
words mean in a training recipe: the impulse response convolved and cut to the speech's
length, then scaled back to the speech's power; noise scaled to the SNR over the speech's
power, both powers taken on the samples ESPnet counts as non-silent (:func:`non_silent`)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from simul.corpus.mustc import SAMPLE_RATE

RT60_TOLERANCE = 0.05
"""Relative tolerance of a room's measured RT60 against the one asked for."""


def rng_for(*parts: object) -> np.random.Generator:
    """A generator seeded by ``parts`` (e.g. ``("test", "snr", 10, segment_id)``): the same
    parts give the same draws on every machine and in every process."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


# ------------------------------------------------------------------------------- rooms


@dataclass(frozen=True)
class Room:
    """A shoebox room: size (m), source and microphone positions (m), its impulse response
    at 16 kHz, and its RT60 (s) as asked for and as measured on the response."""

    size: tuple[float, float, float]
    source: tuple[float, float, float]
    mic: tuple[float, float, float]
    rt60: float
    measured_rt60: float
    rir: np.ndarray


def _simulate(size, source, mic, sabine_rt60: float, fs: int) -> np.ndarray:
    import pyroomacoustics as pra

    absorption, max_order = pra.inverse_sabine(sabine_rt60, size)
    room = pra.ShoeBox(size, fs=fs, materials=pra.Material(absorption), max_order=max_order)
    room.add_source(list(source))
    room.add_microphone(list(mic))
    room.compute_rir()
    return np.asarray(room.rir[0][0], dtype=np.float64)


def measure_rt60(rir: np.ndarray, fs: int = SAMPLE_RATE) -> float:
    """RT60 (s) of an impulse response: Schroeder's backward integration, the T30 decay
    extrapolated to 60 dB (pyroomacoustics' implementation)."""
    import pyroomacoustics as pra

    return float(pra.experimental.measure_rt60(rir, fs=fs))


def make_room(rt60: float, rng: np.random.Generator, *, fs: int = SAMPLE_RATE,
              tries: int = 6) -> Room:
    """A room drawn from ``rng`` (floor 4–10 m × 3–8 m, height 2.5–4 m, source and
    microphone at least 0.5 m from the walls) whose measured RT60 is ``rt60`` within
    :data:`RT60_TOLERANCE`: the absorption is corrected from the measured RT60 (secant on
    Sabine's target) until it is. A room too large to decay that fast even with fully
    absorbing walls is drawn again."""
    if not 0.05 <= rt60 <= 3.0:
        raise ValueError(f"rt60 {rt60}: expected 0.05 to 3 s")
    best = None
    for _ in range(20):  # room shapes
        size = (rng.uniform(4, 10), rng.uniform(3, 8), rng.uniform(2.5, 4))
        source = tuple(rng.uniform(0.5, s - 0.5) for s in size)
        mic = tuple(rng.uniform(0.5, s - 0.5) for s in size)
        sabine = 0.7 * rt60
        for _ in range(tries):
            try:
                rir = _simulate(size, source, mic, sabine, fs)
            except ValueError:  # no absorption gives so short a decay here: another room
                break
            measured = measure_rt60(rir, fs)
            if best is None or abs(measured - rt60) < abs(best[-1] - rt60):
                best = (size, source, mic, rir, measured)
            if abs(measured - rt60) <= RT60_TOLERANCE * rt60:
                size, source, mic, rir, measured = best
                return Room(tuple(map(float, size)), tuple(map(float, source)),
                            tuple(map(float, mic)), rt60, measured, rir)
            sabine = min(max(sabine * rt60 / measured, 0.02), 5.0)
    if best is None:
        raise ValueError(f"rt60 {rt60}: no room of the drawn sizes decays that fast")
    size, source, mic, rir, measured = best
    return Room(tuple(map(float, size)), tuple(map(float, source)), tuple(map(float, mic)),
                rt60, measured, rir)


# ------------------------------------------------------------------------------- noise

COLOURS = {"white": 0.0, "pink": 1.0, "brown": 2.0}
"""Coloured noises by name: the exponent β of their power spectrum 1/f^β."""


def coloured_noise(beta: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` samples of Gaussian noise whose power spectrum falls as 1/f^β (white 0, pink 1,
    brown 2), shaped in the frequency domain, zero mean, unit variance."""
    spectrum = rng.standard_normal(n // 2 + 1) + 1j * rng.standard_normal(n // 2 + 1)
    freqs = np.fft.rfftfreq(n)
    freqs[0] = freqs[1] if n > 1 else 1.0
    noise = np.fft.irfft(spectrum / freqs ** (beta / 2), n)
    noise -= noise.mean()
    return noise / max(float(noise.std()), 1e-12)


def babble(utterances: Sequence[np.ndarray], n: int, rng: np.random.Generator, *,
           talkers: int = 5) -> np.ndarray:
    """``n`` samples of babble: ``talkers`` utterances drawn from ``utterances``, each
    brought to unit power, repeated to length ``n`` from a random start, summed; unit
    variance."""
    if len(utterances) < talkers:
        raise ValueError(f"babble needs at least {talkers} utterances, got {len(utterances)}")
    out = np.zeros(n)
    for i in rng.choice(len(utterances), size=talkers, replace=False):
        speech = np.asarray(utterances[i], dtype=np.float64)
        speech = speech / max(float(np.sqrt(np.mean(speech**2))), 1e-12)
        out += np.resize(np.roll(speech, -int(rng.integers(len(speech)))), n)
    out -= out.mean()
    return out / max(float(out.std()), 1e-12)


# ------------------------------------------------------------------------------- mixing


def non_silent(speech: np.ndarray, *, frame: int = 1024, shift: int = 512,
               threshold: float = 0.01) -> np.ndarray:
    """The samples ESPnet counts as speech when it mixes (its ``detect_non_silence``, whose
    defaults these are): frames of ``frame`` samples every ``shift``, the last zero-padded,
    kept when their power exceeds ``threshold`` times the mean frame power; each frame's
    verdict covers its first ``shift`` samples, the last one's the rest."""
    x = np.asarray(speech, dtype=np.float64)
    if len(x) < frame:
        return np.ones(len(x), dtype=bool)
    padded = np.pad(x, (0, (-(len(x) - frame) % shift) % frame))
    frames = np.lib.stride_tricks.sliding_window_view(padded, frame)[::shift]
    power = np.mean(frames**2, axis=1)
    if not power.mean() > 0:
        return np.ones(len(x), dtype=bool)
    mask = np.repeat(power / power.mean() > threshold, shift)
    return np.pad(mask, (0, len(x) - len(mask)), mode="edge")


def speech_power(speech: np.ndarray) -> float:
    """Mean power of the non-silent samples (:func:`non_silent`)."""
    x = np.asarray(speech, dtype=np.float64)
    return float(np.mean(x[non_silent(x)] ** 2)) if len(x) else 0.0


def reverberate(speech: np.ndarray, rir: np.ndarray) -> np.ndarray:
    """``speech`` heard in a room: convolved with ``rir``, cut to its own length, scaled
    back to its power (as ESPnet's preprocessor does while training)."""
    from scipy.signal import fftconvolve

    x = np.asarray(speech, dtype=np.float64)
    wet = fftconvolve(x, np.asarray(rir, dtype=np.float64))[: len(x)]
    return wet * np.sqrt(speech_power(x) / max(speech_power(wet), 1e-10))


def add_noise(speech: np.ndarray, noise: np.ndarray, snr_db: float) -> np.ndarray:
    """``speech`` plus ``noise`` (at least as long) scaled to ``snr_db`` below the speech's
    power."""
    x = np.asarray(speech, dtype=np.float64)
    n = np.asarray(noise, dtype=np.float64)[: len(x)]
    scale = 10 ** (-snr_db / 20) * np.sqrt(speech_power(x)) / np.sqrt(max(np.mean(n**2), 1e-10))
    return x + scale * n


def gain(speech: np.ndarray, db: float) -> np.ndarray:
    """``speech`` scaled by ``db`` decibels."""
    return np.asarray(speech, dtype=np.float64) * 10 ** (db / 20)


def fit_peak(audio: np.ndarray, peak: float = 0.99) -> np.ndarray:
    """``audio`` scaled down so its peak is at most ``peak`` (a mixture may exceed full scale,
    which ESPnet's preprocessor divides out too); float32."""
    top = float(np.max(np.abs(audio))) if len(audio) else 0.0
    out = audio / (top / peak) if top > peak else audio
    return np.asarray(out, dtype=np.float32)
