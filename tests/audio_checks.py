"""Independent measurements on waveforms, for checking alignments."""

import numpy as np


def speech_end_ms(audio: np.ndarray, frame: int = 160) -> float:
    """End of the last 10 ms frame whose peak is above 1 % (-40 dB) of the loudest frame."""
    n = audio.size // frame * frame
    peaks = np.abs(audio[:n].astype(np.float64)).reshape(-1, frame).max(axis=1)
    loud = np.nonzero(peaks > peaks.max() / 100)[0]
    return float((loud[-1] + 1) * frame / 16)
