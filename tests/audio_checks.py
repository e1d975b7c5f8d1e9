"""Independent measurements on waveforms, for checking alignments."""

import numpy as np


def _loud_frames(audio: np.ndarray, frame: int, share: float) -> np.ndarray:
    n = audio.size // frame * frame
    peaks = np.abs(audio[:n].astype(np.float64)).reshape(-1, frame).max(axis=1)
    return np.nonzero(peaks > peaks.max() * share)[0]


def speech_end_ms(audio: np.ndarray, frame: int = 160) -> float:
    """End of the last 10 ms frame whose peak is above 1 % (-40 dB) of the loudest frame."""
    return float((_loud_frames(audio, frame, 0.01)[-1] + 1) * frame / 16)


def speech_start_ms(audio: np.ndarray, frame: int = 160, share: float = 0.01) -> float:
    """Start of the first 10 ms frame whose peak is above ``share`` of the loudest frame."""
    return float(_loud_frames(audio, frame, share)[0] * frame / 16)
