"""Speech synthesis with libespeak-ng, with word and phoneme times from the synthesizer.

espeak-ng is driven through its C API (``speak_lib.h``) with ctypes, in synchronous mode,
so that every audio chunk arrives together with the events that fall inside it: a WORD
event at the start of every word and a PHONEME event at the start of every phoneme
(pauses are phonemes whose name starts with ``_``). A phoneme ends where the next
event's sample begins; a word spans its non-pause phonemes. These are the oracle
alignments of the mini corpus.

espeak-ng speaks at 22,050 Hz; :func:`synthesize` resamples to 16 kHz with python-soxr
(deterministic) and scales the times accordingly (times stay in milliseconds).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import re
from dataclasses import dataclass

import numpy as np

TARGET_RATE = 16000

# speak_lib.h constants (API revision 12).
_AUDIO_OUTPUT_SYNCHRONOUS = 2
_INITIALIZE_PHONEME_EVENTS = 0x0001
_INITIALIZE_DONT_EXIT = 0x8000
_EVENT_LIST_TERMINATED = 0
_EVENT_WORD = 1
_EVENT_END = 5
_EVENT_MSG_TERMINATED = 6
_EVENT_PHONEME = 7
_POS_CHARACTER = 1
_CHARS_UTF8 = 1
_PARAM_RATE = 1
_PARAM_PITCH = 3
_PARAM_RANGE = 4


class _EventId(ctypes.Union):
    _fields_ = [("number", ctypes.c_int), ("name", ctypes.c_char_p), ("string", ctypes.c_char * 8)]


class _Event(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("unique_identifier", ctypes.c_uint),
        ("text_position", ctypes.c_int),
        ("length", ctypes.c_int),
        ("audio_position", ctypes.c_int),
        ("sample", ctypes.c_int),
        ("user_data", ctypes.c_void_p),
        ("id", _EventId),
    ]


_CALLBACK = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(_Event)
)


@dataclass(frozen=True)
class Voice:
    """An espeak-ng speaker: voice name (accent) + variant, rate (words/min), pitch 0–100."""

    accent: str
    variant: str
    rate_wpm: int
    pitch: int
    pitch_range: int = 50

    engine = "espeak-ng"

    @property
    def espeak_name(self) -> str:
        return f"{self.accent}+{self.variant}" if self.variant else self.accent

    @property
    def voice_id(self) -> str:
        """The accent × variant pair: what "a voice never heard in train" refers to."""
        return self.espeak_name

    @property
    def speaker_id(self) -> str:
        return f"{self.espeak_name}_r{self.rate_wpm}_p{self.pitch}"


@dataclass(frozen=True)
class Utterance:
    """Synthesized speech at 16 kHz with per-word and per-phoneme times in ms."""

    audio: np.ndarray  # (n_samples,) int16 at TARGET_RATE
    words: tuple[tuple[str, float, float], ...]
    phonemes: tuple[tuple[str, float, float], ...]

    @property
    def duration_ms(self) -> float:
        return 1000.0 * len(self.audio) / TARGET_RATE


class EspeakError(RuntimeError):
    pass


class Espeak:
    """One libespeak-ng instance (the library is process-global: use one per process)."""

    def __init__(self) -> None:
        path = ctypes.util.find_library("espeak-ng")
        if path is None:
            raise EspeakError(
                "libespeak-ng not found: install the Debian package 'espeak-ng' (make setup)"
            )
        self._lib = ctypes.CDLL(path)
        self._lib.espeak_Info.restype = ctypes.c_char_p
        self._lib.espeak_Info.argtypes = [ctypes.c_void_p]
        self._lib.espeak_TextToPhonemes.restype = ctypes.c_char_p
        self._lib.espeak_TextToPhonemes.argtypes = [
            ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_int,
        ]
        rate = self._lib.espeak_Initialize(
            _AUDIO_OUTPUT_SYNCHRONOUS, 0, None,
            _INITIALIZE_PHONEME_EVENTS | _INITIALIZE_DONT_EXIT,
        )
        if rate <= 0:
            raise EspeakError(f"espeak_Initialize failed ({rate})")
        self.sample_rate = rate
        self._chunks: list[np.ndarray] = []
        self._events: list[tuple[int, int, int, int, str]] = []
        self._callback = _CALLBACK(self._on_audio)  # keep a reference: C holds the pointer
        self._lib.espeak_SetSynthCallback(self._callback)
        self._lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        self._lib.espeak_Synth.argtypes = [
            ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int, ctypes.c_uint,
            ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p,
        ]

    @property
    def version(self) -> str:
        return self._lib.espeak_Info(None).decode()

    def _on_audio(self, wav, n_samples, events) -> int:
        if n_samples > 0:
            self._chunks.append(np.ctypeslib.as_array(wav, shape=(n_samples,)).copy())
        i = 0
        while events[i].type != _EVENT_LIST_TERMINATED:
            e = events[i]
            name = e.id.string.decode("utf-8", "replace") if e.type == _EVENT_PHONEME else ""
            self._events.append((e.type, e.sample, e.text_position, e.length, name))
            i += 1
        return 0

    def _set(self, voice: Voice) -> None:
        if self._lib.espeak_SetVoiceByName(voice.espeak_name.encode()) != 0:
            raise EspeakError(f"espeak-ng has no voice {voice.espeak_name!r}")
        for param, value in (
            (_PARAM_RATE, voice.rate_wpm), (_PARAM_PITCH, voice.pitch),
            (_PARAM_RANGE, voice.pitch_range),
        ):
            self._lib.espeak_SetParameter(param, value, 0)

    def synthesize_raw(self, text: str, voice: Voice):
        """Audio (int16 at ``self.sample_rate``) and raw events (type, sample, pos, len, name)."""
        self._set(voice)
        self._chunks, self._events = [], []
        data = text.encode("utf-8")
        err = self._lib.espeak_Synth(
            data, len(data) + 1, 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None
        )
        if err != 0:
            raise EspeakError(f"espeak_Synth failed ({err}) on {text!r}")
        self._lib.espeak_Synchronize()
        audio = np.concatenate(self._chunks) if self._chunks else np.zeros(0, np.int16)
        return audio, self._events

    def phoneme_count(self, word: str) -> int:
        """Number of phonemes espeak-ng gives ``word`` spoken alone (current voice)."""
        buf = ctypes.create_string_buffer(word.encode("utf-8"))
        ptr = ctypes.c_void_p(ctypes.addressof(buf))
        out = self._lib.espeak_TextToPhonemes(ctypes.byref(ptr), _CHARS_UTF8, ord("|") << 8)
        return sum(len(w.split("|")) for w in out.decode("utf-8").split()) if out else 0

    def synthesize(self, text: str, voice: Voice) -> Utterance:
        """Speak ``text``; return 16 kHz audio and word/phoneme times (ms)."""
        import soxr

        raw, events = self.synthesize_raw(text, voice)
        words, phonemes = _align(text, events, raw.size, 1000.0 / self.sample_rate,
                                 self.phoneme_count)
        audio = soxr.resample(raw.astype(np.float32) / 32768.0, self.sample_rate, TARGET_RATE)
        audio16 = np.clip(np.round(audio * 32768.0), -32768, 32767).astype(np.int16)
        return Utterance(audio=audio16, words=words, phonemes=phonemes)


def _tokens(text: str) -> list[tuple[int, str]]:
    """Whitespace tokens with their 1-based character position (espeak's text_position)."""
    return [(m.start() + 1, m.group().strip(".,?!")) for m in re.finditer(r"\S+", text)]


def _split(spans: list, counts: list[int]) -> list[list]:
    """Divide a run of phoneme spans among words with ``counts`` phonemes in isolation.

    Exact when the counts add up; otherwise proportional to them (at least one each while
    phonemes last).
    """
    total = sum(counts)
    if total != len(spans):
        scale = len(spans) / max(total, 1)
        bounds = [round(scale * sum(counts[: i + 1])) for i in range(len(counts))]
        counts = [max(b - a, 1) for a, b in zip([0, *bounds[:-1]], bounds, strict=True)]
    out, start = [], 0
    for c in counts:
        out.append(spans[start : start + c])
        start += c
    if start < len(spans) and out:
        out[-1] = out[-1] + spans[start:]
    return out


def _align(text, events, n_samples, ms_per_sample, phoneme_count):
    """Turn espeak events into word and phoneme spans (ms).

    Every PHONEME event starts a phoneme that ends at the next PHONEME/WORD/END event (or at
    the end of the audio); pauses (names starting with ``_``) are dropped. A WORD event owns
    the phonemes up to the next WORD event; WORD events without phonemes (clause ends) are
    dropped. When there are as many WORD events as text words they pair up in order (the
    reported text positions are not always exact). Otherwise espeak-ng spoke some words as
    one (e.g. "did not"): the text words whose position falls inside one WORD event share its
    phonemes, split by each word's phoneme count in isolation (:func:`_split`).
    """
    marks = [e for e in events if e[0] in (_EVENT_WORD, _EVENT_PHONEME, _EVENT_END)]
    phonemes: list[tuple[str, float, float]] = []
    groups: list[tuple[int, list]] = []  # (text position of the WORD event, phoneme spans)
    for k, (kind, sample, pos, _length, name) in enumerate(marks):
        if kind == _EVENT_WORD:
            groups.append((pos, []))
        elif kind == _EVENT_PHONEME and not name.startswith("_") and name.strip():
            end = marks[k + 1][1] if k + 1 < len(marks) else n_samples
            span = (name, sample * ms_per_sample, end * ms_per_sample)
            phonemes.append(span)
            if groups:
                groups[-1][1].append(span)
    groups = [(pos, spans) for pos, spans in groups if spans]  # clause-end events: no sound
    tokens = _tokens(text)
    if len(groups) == len(tokens):  # the usual case: one WORD event per text word, in order
        members = [[w] for _, w in tokens]
    else:
        bounds = [pos for pos, _ in groups[1:]] + [len(text) + 2]
        members = [[w for p, w in tokens if pos <= p < nxt]
                   for (pos, _), nxt in zip(groups, bounds, strict=True)]
    words: list[tuple[str, float, float]] = []
    for (_, spans), group in zip(groups, members, strict=True):
        if not group:
            continue
        parts = _split(spans, [phoneme_count(w) for w in group]) if len(group) > 1 else [spans]
        for word, part in zip(group, parts, strict=True):
            if part:
                words.append((word, part[0][1], part[-1][2]))
    return tuple(words), tuple(phonemes)
