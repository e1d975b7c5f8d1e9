"""Acoustic test conditions: a split heard under noise, in a room, or at another level.

A split name may carry one condition after ``@``: ``tst-COMMON@snr=10`` is tst-COMMON with
noise 10 dB below the speech, ``tst-COMMON@rt60=0.6`` in a room whose reverberation time is
0.6 s, ``tst-COMMON@gain=-20`` 20 dB quieter. Wherever a split is named — ``simul decode
--split``, a sweep's ``splits``, a notebook's parameters — its condition applies, so any
decode, sweep or notebook runs on the robustness test (:data:`ROBUSTNESS`).

Each segment's degradation is drawn from its own id and the condition's kind
(:func:`~simul.corpus.acoustics.rng_for`), so it is the same in every run, process and
machine, and the same noise (or room index) at every level of its kind.

The noise, rooms and voices of this test are never used in training: babble is made of the
*other* test split's speech (tst-HE's for every split but tst-HE, whose voices training
never hears; tst-COMMON's for tst-HE), the rooms are drawn from seeds of their own
(``"test-room"``), and training draws its own (``"train-room"``,
:mod:`simul.models.training.augment`).
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simul.corpus import acoustics
from simul.corpus.mustc import CorpusError

KINDS = {"snr": "dB of speech over noise", "rt60": "s of reverberation (RT60)",
         "gain": "dB of gain"}
"""The kinds of condition and the unit of their value."""

ROBUSTNESS = ("snr=20", "snr=10", "snr=5", "rt60=0.3", "rt60=0.6", "rt60=0.9",
              "gain=-30", "gain=-20", "gain=-10")
"""The robustness test: tst-COMMON under each of these (``tst-COMMON@snr=10`` …)."""

TEST_ROOMS = 4
"""Rooms per reverberation time in the test; a segment is heard in one of them."""

BABBLE_TALKERS = 5
BABBLE_POOL = 40
"""Babble: talkers summed, drawn from the first segments of the other test split."""


@dataclass(frozen=True)
class Condition:
    """One acoustic condition: ``kind`` (:data:`KINDS`) and its value."""

    kind: str
    value: float

    @classmethod
    def parse(cls, text: str, where: str = "condition") -> Condition:
        """``"snr=10"`` → Condition("snr", 10.0); a bad one gives :class:`CorpusError`."""
        kind, sep, value = text.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not sep or kind not in KINDS or not math.isfinite(number):
            raise CorpusError(f"{where} {text!r}: expected snr=DB, rt60=SECONDS or gain=DB "
                              "(e.g. tst-COMMON@snr=10)")
        if kind == "rt60" and not 0.1 <= number <= 2.0:
            raise CorpusError(f"{where} {text!r}: rt60 between 0.1 and 2.0 s")
        if kind == "snr" and not -10 <= number <= 60:
            raise CorpusError(f"{where} {text!r}: snr between -10 and 60 dB")
        if kind == "gain" and not -80 <= number <= 20:
            raise CorpusError(f"{where} {text!r}: gain between -80 and 20 dB")
        return cls(kind, number)

    @property
    def label(self) -> str:
        return f"{self.kind}={self.value:g}"

    def apply(self, audio: np.ndarray, segment_id: str, babble_pool=None) -> np.ndarray:
        """``audio`` (one segment, 16 kHz) under this condition; ``babble_pool``: a callable
        giving the utterances babble is made of (needed for ``snr`` only)."""
        # drawn from the kind, not the value: a segment hears the same noise (or the same
        # room index) at every SNR (RT60), so a condition's levels are paired comparisons
        rng = acoustics.rng_for("test", self.kind, segment_id)
        if self.kind == "gain":
            return acoustics.fit_peak(acoustics.gain(audio, self.value), peak=1.0)
        if self.kind == "rt60":
            room = test_room(self.value, int(rng.integers(TEST_ROOMS)))
            return acoustics.fit_peak(acoustics.reverberate(audio, room))
        if rng.random() < 0.5:  # snr: babble or a coloured noise, one in two
            noise = acoustics.babble(babble_pool(), len(audio), rng, talkers=BABBLE_TALKERS)
        else:
            beta = list(acoustics.COLOURS.values())[int(rng.integers(len(acoustics.COLOURS)))]
            noise = acoustics.coloured_noise(beta, len(audio), rng)
        return acoustics.fit_peak(acoustics.add_noise(audio, noise, self.value))


def split_condition(split: str) -> tuple[str, Condition | None]:
    """``"tst-COMMON@snr=10"`` → ("tst-COMMON", Condition("snr", 10)); no ``@``: no condition."""
    base, sep, cond = str(split).partition("@")
    if not sep:
        return base, None
    return base, Condition.parse(cond, where=f"split {split!r}: condition")


def _cache_dir() -> Path:
    root = os.environ.get("SIMUL_CACHE") or Path.home() / ".cache" / "simul"
    return Path(root) / "rooms"


@functools.lru_cache(maxsize=64)
def test_room(rt60: float, index: int) -> np.ndarray:
    """The impulse response of test room ``index`` at ``rt60`` (drawn from the seed
    ``("test-room", rt60, index)``), cached on disk (``~/.cache/simul/rooms``; a room takes
    up to seconds to simulate)."""
    path = _cache_dir() / f"test-rt60={rt60:g}-{index}.npy"
    if path.is_file():
        return np.load(path)
    room = acoustics.make_room(rt60, acoustics.rng_for("test-room", f"{rt60:g}", index))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}.npy")
    np.save(tmp, room.rir)
    os.replace(tmp, path)
    return room.rir


def babble_split(split: str) -> str:
    """The split whose speech makes the babble of ``split``'s noisy condition."""
    return "tst-COMMON" if split == "tst-HE" else "tst-HE"
