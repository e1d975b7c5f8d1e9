"""Corpus → ESPnet2 data directories, SentencePiece models and token lists.

ESPnet's sound reader takes one file per utterance (no Kaldi ``segments``), so every
segment of the splits used for training is written as its own 16 kHz wav under
``<workdir>/data/<split>/wav/``. Text files follow ESPnet's ``<utt-id> <text>`` convention.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf
from tqdm import tqdm

from simul.corpus import SAMPLE_RATE, load

SPECIAL_FIRST = ("<blank>", "<unk>")
SPECIAL_LAST = ("<sos/eos>",)


def perturb_speed(audio: np.ndarray, factor: float) -> np.ndarray:
    """Speed perturbation as Kaldi's and ESPnet's data preparation do it (sox ``speed``):
    tempo and pitch both scaled by ``factor``, length by 1 / ``factor`` — the samples are
    read as if recorded at ``factor`` × 16 kHz and resampled to 16 kHz."""
    import torch
    import torchaudio.functional as F

    if factor <= 0:
        raise ValueError(f"speed factor must be positive, got {factor}")
    if factor == 1.0:
        return np.asarray(audio, dtype=np.float32)
    wave = torch.as_tensor(np.asarray(audio, dtype=np.float32))
    return F.resample(wave, orig_freq=round(SAMPLE_RATE * factor), new_freq=SAMPLE_RATE).numpy()


def speed_prefix(factor: float) -> str:
    """Kaldi's utterance- and speaker-id prefix of a perturbed copy ("" for 1.0)."""
    return "" if factor == 1.0 else f"sp{factor:g}-"


def export_split(corpus_root: str | Path, pair: str, split: str, out_dir: Path,
                 *, speed_factors=(1.0,), progress: bool = True, audio: bool = True,
                 gain_db=None) -> int:
    """Write ``wav.scp``, ``text`` (target), ``src_text`` (source) and ``utt2spk``; with
    several ``speed_factors`` (e.g. 0.9, 1.0, 1.1 for training) one copy of every segment
    per factor, Kaldi-style ids ``sp0.9-<id>``. Without ``audio`` (text tasks) no wav is
    written and there is no ``wav.scp``. A split of the mini corpus that is not spoken yet
    (train, by default) is built first. ``gain_db`` (id → dB): each copy's level
    (:func:`simul.models.training.augment.gain_db`), clipped to full scale (16-bit still: a copy
    40 dB down keeps its speech about 40 dB above the quantization noise, as a quiet
    recording does)."""
    out_dir = Path(out_dir)
    done = out_dir / ".done"
    if done.is_file():
        return int(done.read_text())
    from simul.corpus.mini.build import ensure_splits

    ensure_splits(corpus_root, [split], progress=progress)
    wav_dir = out_dir / "wav"
    wav_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for seg in tqdm(load(corpus_root, pair, split, with_audio=audio),
                    desc=f"export {pair} {split}",
                    unit="seg", disable=not progress):
        for factor in speed_factors:
            uid = f"{speed_prefix(factor)}{split}_{seg.index:06d}"
            path = wav_dir / f"{uid}.wav"
            if audio:
                wave = perturb_speed(seg.audio, factor)
                if gain_db is not None:
                    wave = np.clip(wave * 10 ** (gain_db(uid) / 20), -1.0, 1.0)
                sf.write(path, wave, SAMPLE_RATE, subtype="PCM_16")
            rows.append((uid, path.resolve(), seg.target, seg.source,
                         speed_prefix(factor) + seg.speaker_id))
    rows.sort()  # Kaldi's sorted-id convention
    for name, col in (("wav.scp", 1), ("text", 2), ("src_text", 3), ("utt2spk", 4)):
        if name != "wav.scp" or audio:
            (out_dir / name).write_text("".join(f"{r[0]} {r[col]}\n" for r in rows))
    done.write_text(str(len(rows)))
    return len(rows)


BOUNDARIES = ("word", "phoneme")


def export_boundaries(corpus_root: str | Path, pair: str, split: str, out_dir: Path,
                      kind: str, *, speed_factors=(1.0,), progress: bool = True) -> Path:
    """Write ``<kind>_ends``: per utterance (ids as :func:`export_split` gives them) the end
    times (ms) of its oracle words or phonemes (``kind``), sorted, duplicates merged, as
    ESPnet's ``text_float`` reads them; a perturbed copy's times are divided by its factor.
    What M20's oracle pre-decision triggers on, for a decoder that trains with it
    (:mod:`simul.models.extensions.mma_decoder`)."""
    if kind not in BOUNDARIES:
        raise ValueError(f"boundaries: {kind!r} is not one of {BOUNDARIES}")
    out = Path(out_dir) / f"{kind}_ends"
    if out.is_file():
        return out
    from simul.corpus.mini.build import ensure_splits

    ensure_splits(corpus_root, [split], progress=progress)
    rows = []
    for seg in tqdm(load(corpus_root, pair, split, with_audio=False),
                    desc=f"{kind} ends {pair} {split}", unit="seg", disable=not progress):
        if seg.alignment is None:
            raise ValueError(f"{corpus_root}: {pair} {split} segment {seg.id} has no "
                             f"alignment; {kind} boundaries need the oracle times")
        spans = seg.alignment.words if kind == "word" else seg.alignment.phonemes
        ends = sorted({float(w.end_ms) for w in spans if w.end_ms > 0}) or [seg.duration_ms]
        for factor in speed_factors:
            uid = f"{speed_prefix(factor)}{split}_{seg.index:06d}"
            rows.append((uid, " ".join(f"{t / factor:.2f}" for t in ends)))
    rows.sort()
    tmp = out.with_suffix(".tmp")
    tmp.write_text("".join(f"{uid} {times}\n" for uid, times in rows))
    tmp.rename(out)
    return out


def train_sentencepiece(lines_file: Path, prefix: Path, vocab_size: int,
                        model_type: str = "bpe", symbols: tuple[str, ...] = ()) -> Path:
    """Train a SentencePiece model on the text column of an ESPnet ``text`` file;
    ``symbols``: pieces of their own (never split, never merged)."""
    import sentencepiece as spm

    model = prefix.with_suffix(".model")
    if model.is_file():
        return model
    plain = prefix.with_suffix(".train.txt")
    plain.write_text("".join(line.split(" ", 1)[1] if " " in line else "\n"
                             for line in lines_file.read_text().splitlines(keepends=True)))
    spm.SentencePieceTrainer.train(
        input=str(plain), model_prefix=str(prefix), vocab_size=vocab_size,
        model_type=model_type, character_coverage=1.0, input_sentence_size=10**8,
        num_threads=1, unk_id=0, bos_id=-1, eos_id=-1, pad_id=-1,
        user_defined_symbols=list(symbols), minloglevel=2,
    )
    return model


def token_list(sp_model: Path, out: Path) -> Path:
    """ESPnet token list: <blank>, <unk>, the model's pieces, <sos/eos>."""
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(sp_model))
    pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size())
              if not (sp.is_control(i) or sp.is_unknown(i))]
    out.write_text("\n".join([*SPECIAL_FIRST, *pieces, *SPECIAL_LAST]) + "\n")
    return out


def char_token_list(text_file: Path, out: Path) -> Path:
    """ESPnet char token list from a ``text`` file (space becomes <space>)."""
    chars = sorted({c for line in text_file.read_text().splitlines()
                    for c in (line.split(" ", 1)[1] if " " in line else "")})
    symbols = ["<space>" if c == " " else c for c in chars]
    out.write_text("\n".join([*SPECIAL_FIRST, *symbols, *SPECIAL_LAST]) + "\n")
    return out
