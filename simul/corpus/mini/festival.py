"""Speech synthesis with festival, with word and phoneme times from its utterance relations.

A second English synthesizer beside espeak-ng (:mod:`.speech`), so that a model trained on
the mini corpus hears more than one engine. :class:`Festival` keeps one ``festival --pipe``
process for many utterances: starting it and loading a voice costs about 0.8 s, more than
synthesizing a sentence (≈ 20 ms with a diphone voice, ≈ 0.2 s with the HTS voice). The
corpus builder gives each talk its own process (see ``build._speak``).

For every utterance festival reports its ``Segment`` relation (phones, with end times in
seconds; ``pau`` is silence) and its ``Word`` relation; a word's span runs from the end of
the segment before its first phone to the end of its last phone. These are the oracle
alignments, as espeak-ng's events are for the other engine.

Speakers are made from the few English voices Debian ships by changing the speaking rate
inside the synthesizer (``Duration_Stretch`` for diphone voices, the HTS engine's ``-r``),
so the times stay the synthesizer's own, and the pitch with sox's ``pitch`` effect, which
keeps the length of the audio.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

import numpy as np
import soundfile as sf

from simul.corpus.mini.speech import TARGET_RATE, Utterance

#: English festival voices in Debian (package → voice): festvox-kallpc16k, festvox-kdlpc16k,
#: festvox-us-slt-hts. The 8 kHz packages conflict with the 16 kHz ones and are not used.
VOICES: tuple[str, ...] = ("kal_diphone", "ked_diphone", "cmu_us_slt_arctic_hts")

_END = "@@simul-end"
_OK = "@@simul-ok"
# Defined once per process. Prints one line per phone and per word, then _OK; the caller
# prints _END as a separate top-level form, so an error inside still ends the reply.
_PRELUDE = rf"""
(define (simul_say text wavfile)
  (let ((utt (SynthText text)))
    (utt.save.wave utt wavfile 'riff)
    (mapcar
      (lambda (s) (format t "S %s %s %s\n" (item.name s) (item.feat s "end")
                    (item.feat s "R:SylStructure.parent.parent.name")))
      (utt.relation.items utt 'Segment))
    (mapcar
      (lambda (w)
        (format t "W %s %s %s\n" (item.name w)
          (item.feat w "R:SylStructure.daughter1.daughter1.R:Segment.p.end")
          (item.feat w "R:SylStructure.daughtern.daughtern.end")))
      (utt.relation.items utt 'Word))
    (format t "{_OK}\n")))
"""


class FestivalError(RuntimeError):
    pass


@dataclass(frozen=True)
class FestivalVoice:
    """A festival speaker: a Debian voice, a speaking rate (> 1 is faster) and a pitch shift."""

    name: str
    rate: float = 1.0
    pitch_cents: int = 0

    engine = "festival"

    @property
    def voice_id(self) -> str:
        """The voice itself: what "a voice never heard in train" refers to."""
        return f"festival/{self.name}"

    @property
    def speaker_id(self) -> str:
        return f"festival/{self.name}_r{self.rate:.2f}_p{self.pitch_cents:+d}"

    @property
    def is_hts(self) -> bool:
        return self.name.endswith("_hts")


def _require() -> None:
    if shutil.which("festival") is None:
        raise FestivalError("festival not found: install the Debian package 'festival' "
                            "(make setup)")


def version() -> str:
    """``festival --version`` (its first line)."""
    _require()
    out = subprocess.run(["festival", "--version"], capture_output=True, text=True, check=False)
    return (out.stdout or out.stderr).strip().splitlines()[0]


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Festival:
    """One ``festival --pipe`` process, kept for many utterances (close it when done)."""

    def __init__(self) -> None:
        _require()
        self._dir = tempfile.mkdtemp(prefix="simul-festival-")
        self._wav = os.path.join(self._dir, "utt.wav")
        self._proc = subprocess.Popen(
            ["festival", "--pipe"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, bufsize=1,
        )
        self._voice: FestivalVoice | None = None
        self._call(_PRELUDE)

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> Festival:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _call(self, forms: str) -> list[str]:
        """Send Scheme ``forms``; return the lines festival printed before the end mark."""
        try:
            self._proc.stdin.write(f'{forms}\n(format t "{_END}\\n")\n(fflush nil)\n')
            self._proc.stdin.flush()
        except BrokenPipeError as e:
            raise FestivalError("festival exited") from e
        lines = []
        while True:
            line = self._proc.stdout.readline()
            if not line:
                raise FestivalError("festival exited: " + " ".join(lines[-5:]))
            if line.rstrip("\n") == _END:
                return lines
            lines.append(line.rstrip("\n"))

    def _select(self, voice: FestivalVoice) -> None:
        if voice.name not in VOICES:
            raise FestivalError(f"no festival voice {voice.name!r} (known: {list(VOICES)})")
        if self._voice is not None and self._voice.name == voice.name \
                and self._voice.rate == voice.rate:
            return
        # Selecting the voice resets its modules; the rate is set explicitly every time, so
        # an utterance depends only on its voice, never on what the process spoke before.
        forms = f"(voice_{voice.name})\n(Parameter.set 'Duration_Stretch {1 / voice.rate:.6f})"
        if voice.is_hts:
            forms += (f"\n(set! hts_engine_params (append {voice.name}::hts_engine_params "
                      f"(list (list \"-r\" {voice.rate:.6f}))))")
        out = self._call(forms)
        if any("error" in line.lower() for line in out):
            raise FestivalError(f"festival could not select voice {voice.name!r}: {out}")
        self._voice = voice

    def synthesize(self, text: str, voice: FestivalVoice) -> Utterance:
        """Speak ``text``; return 16 kHz audio and word/phoneme times (ms)."""
        import soxr

        self._select(voice)
        out = self._call(f"(simul_say {_quote(text)} {_quote(self._wav)})")
        if _OK not in out:
            raise FestivalError(
                f"festival failed on {text!r} with voice {voice.speaker_id}: "
                + " | ".join(out[-5:])
            )
        words, phonemes = _parse(out)
        # festival's Word relation spells some words its own way ("A" → "a"): the labels
        # are the text's tokens, which match festival's words one for one
        tokens = [t.strip(".,?!") for t in text.split()]
        if len(tokens) == len(words) and all(
                t.lower() == w.lower() for t, (w, _, _) in zip(tokens, words, strict=True)):
            words = tuple((t, s, e) for t, (_, s, e) in zip(tokens, words, strict=True))
        raw, rate = sf.read(self._wav, dtype="float32")
        if raw.ndim != 1 or raw.size == 0:
            raise FestivalError(f"festival wrote no mono audio for {text!r} ({voice.speaker_id})")
        audio = soxr.resample(raw, rate, TARGET_RATE) if rate != TARGET_RATE else raw
        if voice.pitch_cents:
            audio = pitch_shift(audio, voice.pitch_cents)
        audio16 = np.clip(np.round(audio * 32768.0), -32768, 32767).astype(np.int16)
        if phonemes:
            # After the last phone comes festival's closing pause. kal_diphone now and then
            # writes a burst of noise there (up to full scale, ≈ 150 ms, seen after questions
            # in 2 of ≈ 7,000 utterances, and not the same ones in two builds): festival's
            # trailing pause is made digital silence, as the gaps between segments are.
            audio16[int(np.ceil(phonemes[-1][2] * TARGET_RATE / 1000)):] = 0
        return Utterance(audio=audio16, words=words, phonemes=phonemes)


def pitch_shift(audio: np.ndarray, cents: int) -> np.ndarray:
    """sox ``pitch`` on float audio at 16 kHz; the result has exactly the input's length."""
    proc = subprocess.run(
        ["sox", "-t", "f32", "-r", str(TARGET_RATE), "-c", "1", "-",
         "-t", "f32", "-", "pitch", str(cents)],
        input=audio.astype("<f4").tobytes(), capture_output=True, check=False,
    )
    if proc.returncode != 0:
        raise FestivalError(f"sox pitch {cents} failed: {proc.stderr.decode()[:300]}")
    out = np.frombuffer(proc.stdout, "<f4")
    if out.size >= audio.size:
        return out[: audio.size].copy()
    return np.concatenate([out, np.zeros(audio.size - out.size, np.float32)])


def _parse(lines: list[str]) -> tuple[tuple, tuple]:
    """Word and phone spans (ms) from ``simul_say``'s lines; pauses are dropped.

    A phone that festival's post-lexical rules add after a word (a linking "r") belongs to
    no word: it is given to the word it directly follows, so words cover every phone.
    """
    phonemes, orphans, words, prev_end = [], [], [], 0.0
    for line in lines:
        kind, _, rest = line.partition(" ")
        if kind == "S":
            name, end, word = rest.split(" ")
            end_ms = 1000.0 * float(end)
            if name != "pau":
                phonemes.append((name, prev_end, end_ms))
                if word == "0":  # in no word's syllables
                    orphans.append((prev_end, end_ms))
            prev_end = end_ms
        elif kind == "W":
            name, start, end = rest.rsplit(" ", 2)
            words.append([name.strip(".,?!"), 1000.0 * float(start), 1000.0 * float(end)])
    for word in words:
        for start, end in orphans:
            if start == word[2]:
                word[2] = end
    return tuple(tuple(w) for w in words), tuple(phonemes)
