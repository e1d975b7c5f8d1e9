"""Augmentation of a training run: rooms, noise and level, as ESPnet's recipes augment.

A recipe's ``simul.augment`` (:data:`DEFAULTS` for what each key means) makes a speech model
robust to the rooms, noise and levels of live input (``simul stream --mic``):

- **rooms and noise, on the fly, by ESPnet's own preprocessor**: :func:`prepare` writes
  simulated room impulse responses and noise recordings under the run directory, and
  returns the ESPnet options that make its preprocessor use them (``rir_scp``,
  ``rir_apply_prob``, ``noise_scp``, ``noise_apply_prob``, ``noise_db_range``): every time
  a training utterance is read, it is heard in a random room, with a random noise at a
  random SNR, each with its probability. Validation utterances are read clean.
- **level, in the exported data**: ESPnet's speech-translation preprocessor has no gain, so
  every exported copy of a training segment gets its own gain (:func:`gain_db`), drawn
  once from the seed; speed perturbation (``simul.speed_perturb``) makes three copies.

Rooms are shoebox rooms of :mod:`simul.corpus.acoustics` with an RT60 drawn uniformly from
``rt60``; noise is babble of other training utterances and coloured noise (white, pink,
brown). Everything is drawn from ``seed`` and the ``"train-…"`` seeds, never from those of
the robustness test (:mod:`simul.corpus.conditions`), so no test room or noise is heard in
training.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import soundfile as sf
from tqdm import tqdm

from simul.corpus import SAMPLE_RATE, acoustics

DEFAULTS: dict = {
    "seed": 0,
    "rooms": 100,             # simulated rooms (impulse responses)
    "rt60": [0.2, 1.0],       # s, RT60 range of the rooms (measured on the response)
    "rir_prob": 0.5,          # share of training reads heard in a room
    "babble": 20,             # babble recordings (5 other training utterances each)
    "coloured": 12,           # coloured-noise recordings (white, pink, brown in turn)
    "noise_seconds": 60,      # length of each noise recording
    "snr_db": [0, 30],        # SNR range of the added noise
    "noise_prob": 0.5,        # share of training reads with noise
    "gain_db": [-40, 6],      # gain range of the exported training copies (none: null)
}
"""``simul.augment``'s keys and defaults; ``simul.augment: {}`` takes them all."""


def spec(recipe_augment, name: str, section: str = "simul") -> dict | None:
    """The recipe's ``simul.augment`` (``meta.augment`` in a meta-learning recipe: ``section``)
    completed with :data:`DEFAULTS` (None: no augmentation), or ``ValueError`` naming the key
    that is wrong."""
    if recipe_augment is None:
        return None
    if not isinstance(recipe_augment, dict):
        raise ValueError(f"recipe {name}: {section}.augment: a mapping of {', '.join(DEFAULTS)}")
    unknown = sorted(set(recipe_augment) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"recipe {name}: {section}.augment.{unknown[0]}: unknown key; known: "
                         f"{', '.join(DEFAULTS)}")
    out = {**DEFAULTS, **recipe_augment}
    for key in ("rt60", "snr_db", "gain_db"):
        value = out[key]
        if value is None and key == "gain_db":
            continue
        if (not isinstance(value, list) or len(value) != 2
                or not all(isinstance(v, int | float) for v in value) or value[0] > value[1]):
            raise ValueError(f"recipe {name}: {section}.augment.{key}: [LOW, HIGH], got "
                             f"{value!r}")
    for key in ("rir_prob", "noise_prob"):
        if not isinstance(out[key], int | float) or not 0 <= out[key] <= 1:
            raise ValueError(f"recipe {name}: {section}.augment.{key}: a probability, got "
                             f"{out[key]!r}")
    for key in ("seed", "rooms", "babble", "coloured", "noise_seconds"):
        if not isinstance(out[key], int) or out[key] < 0:
            raise ValueError(f"recipe {name}: {section}.augment.{key}: a count, got "
                             f"{out[key]!r}")
    return out


def gain_db(aug: dict | None, utterance_id: str) -> float:
    """The gain (dB) of one exported training copy: uniform over ``gain_db``, from the seed
    and the copy's id; 0 without augmentation or without a gain range."""
    if not aug or aug.get("gain_db") is None:
        return 0.0
    low, high = aug["gain_db"]
    return float(acoustics.rng_for("train-gain", aug["seed"], utterance_id).uniform(low, high))


def _write(path: Path, audio: np.ndarray) -> None:
    """Write ``audio`` through a temporary file of this process's own, renamed into place:
    runs at once (``tools/retrain.sh``'s lanes) may simulate the same shared room, and
    neither may write into the other's file."""
    tmp = path.with_name(f"{path.stem}.tmp{os.getpid()}.wav")
    sf.write(tmp, np.asarray(audio, dtype=np.float32), SAMPLE_RATE, subtype="FLOAT")
    tmp.replace(path)


def rooms_dir() -> Path:
    """Where training rooms are kept, shared by runs (``~/.cache/simul/rooms``;
    ``SIMUL_CACHE`` moves it)."""
    return Path(os.environ.get("SIMUL_CACHE") or Path.home() / ".cache" / "simul") / "rooms"


def prepare(aug: dict, out_dir: Path, wav_scp: Path, *, progress: bool = True) -> dict:
    """Write the noises of ``aug`` under ``out_dir`` and its rooms under :func:`rooms_dir`
    (skipping those already there) and return the ESPnet options that train with them.
    ``wav_scp``: the training utterances babble is made of (ESPnet's ``wav.scp``)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    conf: dict = {}
    if aug["rooms"]:  # the same for every run of the same seed and range: simulated once
        low, high = aug["rt60"]
        rir_dir = rooms_dir() / f"train-seed{aug['seed']}-rt60={low:g}-{high:g}"
        rir_dir.mkdir(parents=True, exist_ok=True)
        rows = []
        for i in tqdm(range(aug["rooms"]), desc="rooms", unit="room", disable=not progress):
            path = rir_dir / f"room{i:04d}.wav"
            if not path.is_file():
                rng = acoustics.rng_for("train-room", aug["seed"], i)
                room = acoustics.make_room(float(rng.uniform(*aug["rt60"])), rng)
                _write(path, room.rir)
            rows.append(f"room{i:04d} {path.resolve()}\n")
        (out_dir / "rir.scp").write_text("".join(rows))
        conf.update(rir_scp=str((out_dir / "rir.scp").resolve()), rir_apply_prob=aug["rir_prob"])
    if aug["babble"] or aug["coloured"]:
        noise_dir = out_dir / "noise"
        noise_dir.mkdir(parents=True, exist_ok=True)
        n = int(aug["noise_seconds"] * SAMPLE_RATE)
        wavs = [line.split(maxsplit=1)[1] for line in wav_scp.read_text().splitlines()
                if line.strip()]
        if aug["babble"] and len(wavs) < 5:
            raise ValueError(f"{wav_scp}: babble mixes 5 training recordings, {len(wavs)} "
                             "listed; set augment.babble: 0")
        colours = list(acoustics.COLOURS.items())
        rows = []
        jobs = ([("babble", i) for i in range(aug["babble"])]
                + [("coloured", i) for i in range(aug["coloured"])])
        for kind, i in tqdm(jobs, desc="noises", unit="noise", disable=not progress):
            label = f"{kind}{i:03d}" if kind == "babble" else f"{colours[i % 3][0]}{i:03d}"
            path = noise_dir / f"{label}.wav"
            if not path.is_file():
                rng = acoustics.rng_for("train-noise", aug["seed"], kind, i)
                if kind == "babble":
                    picks = rng.choice(len(wavs), size=5, replace=False)
                    speech = [sf.read(wavs[j], dtype="float32")[0] for j in picks]
                    noise = acoustics.babble(speech, n, rng, talkers=5)
                else:
                    noise = acoustics.coloured_noise(colours[i % 3][1], n, rng)
                _write(path, 0.1 * noise)
            rows.append(f"{label} {path.resolve()}\n")
        (out_dir / "noise.scp").write_text("".join(rows))
        low, high = aug["snr_db"]
        conf.update(noise_scp=str((out_dir / "noise.scp").resolve()),
                    noise_apply_prob=aug["noise_prob"], noise_db_range=f"{low:g}_{high:g}")
    return conf


class Hearing:
    """Rooms, noise and level for a run that reads its audio itself (``simul meta-train``),
    as an ESPnet run hears its training speech: the level of :func:`gain_db` (ESPnet runs
    get it in their exported copies), then ESPnet's own preprocessor (``CommonPreprocessor``)
    with the options :func:`prepare` returns. ESPnet draws rooms, noises and SNRs from
    NumPy's global generator; a call seeds it with ``seed`` and gives it back as it was, so
    the same (audio, key, seed) is heard the same, in any order, on any resume."""

    def __init__(self, aug: dict, options: dict):
        from simul.models.espnet_env import import_espnet

        preprocessor = import_espnet("espnet2.train.preprocessor").CommonPreprocessor
        self.aug = aug
        self._pre = preprocessor(train=True, **options)

    def __call__(self, audio: np.ndarray, key: str, seed: int) -> np.ndarray:
        """``audio`` (1-D) heard in a room, with noise, at a level: 1-D float32, as long."""
        speech = np.asarray(audio, dtype=np.float64) * 10 ** (gain_db(self.aug, key) / 20)
        state = np.random.get_state()
        np.random.seed(int(seed) % 2**32)
        try:
            heard = self._pre(key, {"speech": speech})["speech"]
        finally:
            np.random.set_state(state)
        return np.asarray(heard, dtype=np.float32).reshape(-1)
