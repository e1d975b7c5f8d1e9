"""Simultaneous text translation: a text source that arrives a word at a time.

Han et al. 2020 set their speech systems beside text-to-text wait-k (their Tables 1–5), and
Nguyen et al. 2021's cascade feeds a text MT word by word. A :class:`TextSession` is
:class:`simul.decoding.session.Session` with source words in place of audio:
:meth:`TextSession.push`
takes words, and a policy's reads and the record's delays count source words, as SimulEval's
text-to-text evaluation counts them (a word written after the W-th source word arrived has
delay W; ``source_length`` is the source's words). Everything else — the policy protocol,
complete words, the chunking invariance, records, scores — is the speech session's. Policies
that run on text declare ``runs_on = "mt"`` (:mod:`simul.policies.text`) and get a text MT
model (:class:`simul.models.adapters.cascade.TextMT`), whose ``encode_words`` encodes the words
read.

:func:`simulate_text` decodes a corpus segment's gold transcript (its words as split on
spaces, punctuation attached: what the MT models were trained on); records say
``source_type: "text"`` (:mod:`simul.records`) and :func:`simul.metrics.score.score_records`
scores them in source words, as SimulEval does (ATD with word tokens, no computation-aware
forms). :func:`delays_at_word_ends` puts a text record's delays on the audio's clock, each
source word arriving when it ends in the segment's speech (its oracle alignment), so text and
speech decodes of the same segments compare in ms.

:func:`translate_text` translates a sentence of one's own as it arrives, a word at a time,
and :func:`main_stream_text` is ``simul stream --text "…"`` (or ``--text-file F``, a
sentence a line).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from simul.corpus import Segment
from simul.decoding.session import Session, StreamError, Update, Word
from simul.models.adapter import TextMTAdapter
from simul.policies.base import Policy
from simul.records import Record

__all__ = ["TextSession", "delays_at_word_ends", "main_stream_text", "simulate_text",
           "source_words", "translate_text"]


def source_words(segment: Segment) -> list[str]:
    """The gold transcript of ``segment`` as the words a text source sends."""
    return segment.source.split()


class TextSession(Session):
    """A simultaneous translation of one text stream, a word at a time (see the module doc).

    Positions count source words: ``read_ms``, ``received_ms``, the policy's ``Read`` and
    ``first_read_ms`` and the units' delays are numbers of source words (the speech
    session's names are kept so that every policy and reader works unchanged)."""

    def __init__(self, model: TextMTAdapter, policy: Policy, *, max_steps: int = 100_000,
                 clock: Callable[[], float] | None = None):
        super().__init__(model, policy, max_steps=max_steps, clock=clock)
        self._words: list[str] = []

    @property
    def received_ms(self) -> float:
        """Source words received so far."""
        return float(len(self._words))

    @property
    def words(self) -> list[str]:
        """The source words received so far."""
        return list(self._words)

    def push(self, words: Sequence[str] | str, *, last: bool = False) -> Update:
        """Add source ``words`` (a list, or a string split on spaces; any number, also none)
        and decide as far as they allow. ``last``: the source ends with them."""
        if self._ended:
            raise StreamError("this session has finished; start a new TextSession for "
                              "another stream")
        words = words.split() if isinstance(words, str) else list(words)
        for w in words:
            if not isinstance(w, str) or not w or w != w.strip() or len(w.split()) != 1:
                raise StreamError(f"source word {w!r}: a text source sends one word at a time "
                                  "(non-empty, no spaces)")
        if last and not self._words and not words:
            raise StreamError("empty stream: no source word was pushed before the end")
        self._words += words
        self._ended = last
        return self._advance()

    def finish(self, words: Sequence[str] | str = ()) -> Update:
        """End the source (with last ``words``, if given) and decide to the end."""
        return self.push(words, last=True)

    def _encode_read(self):
        return self.model.encode_words(self._words[: int(round(self.read_ms))])

    def record(self, *, index: int = 0, reference: str = "", segment_id: str = "",
               source: list[str] | None = None, source_text: str = "",
               model_name: str = "") -> Record:
        """The record of the finished stream: delays in source words, no elapsed times
        (SimulEval has no computation-aware latency for text input)."""
        rec = super().record(index=index, reference=reference, segment_id=segment_id,
                             source=source, source_text=source_text or " ".join(self._words),
                             model_name=model_name)
        rec.elapsed = []
        rec.source_type = "text"
        return rec


def simulate_text(model: TextMTAdapter, policy: Policy, segment: Segment, *, model_name: str = "",
                  max_steps: int = 100_000,
                  clock: Callable[[], float] | None = None) -> Record:
    """Decode ``segment``'s gold transcript, a word at a time, with ``policy`` on the text
    MT ``model``; the record counts source words (see the module doc)."""
    session = TextSession(model, policy, max_steps=max_steps, clock=clock)
    session.finish(source_words(segment))
    return session.record(index=segment.index, reference=segment.target,
                          segment_id=segment.id, source=[segment.source, segment.id],
                          source_text=segment.source, model_name=model_name)


def delays_at_word_ends(record: Record, segment: Segment) -> list[float]:
    """A text record's delays on the audio's clock (ms): a delay of W source words is the
    end of the W-th word in ``segment``'s speech (its oracle alignment)."""
    if record.source_type != "text":
        raise ValueError(f"record {record.index}: delays already in ms (source_type "
                         f"{record.source_type!r})")
    if segment.alignment is None:
        raise ValueError(f"segment {segment.id}: no word alignment (the mini corpus has one)")
    ends = [w.end_ms for w in segment.alignment.words]
    if len(ends) != record.source_length:
        raise ValueError(f"segment {segment.id}: {len(ends)} aligned words, the record read "
                         f"{record.source_length:g}")
    return [ends[int(d) - 1] for d in record.delays]



def translate_text(model: TextMTAdapter, policy: Policy, sentence: str, *,
                   on_word: Callable[[Word], None] | None = None) -> Record:
    """Translate ``sentence`` with ``policy`` on the text MT ``model``, its words pushed one
    at a time as a text stream sends them; ``on_word`` gets each target word as it is
    written (its ``delay_ms``: the source words read by then). The record counts source
    words (its ``source_length``: the sentence's words)."""
    words = sentence.split()
    if not words:
        raise ValueError("an empty sentence: nothing to translate")
    session = TextSession(model, policy)
    for k, word in enumerate(words):
        update = session.push([word], last=k == len(words) - 1)
        for written in update.words:
            if on_word is not None:
                on_word(written)
    return session.record(source=[sentence], source_text=sentence)


def _sentences(text: str | None, text_file: str | Path | None) -> tuple[str, list[str]]:
    """What ``--text`` or ``--text-file`` holds: its name and its non-empty lines."""
    if text_file is not None:
        path = Path(text_file)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as e:
            raise ValueError(f"--text-file {path}: cannot read it ({e})") from e
        where = f"--text-file {path}"
    else:
        lines, where = (text or "").splitlines(), "--text"
    sentences = [" ".join(line.split()) for line in lines if line.strip()]
    if not sentences:
        raise ValueError(f"{where}: no source words (a sentence a line)")
    return where, sentences


def main_stream_text(*, model, policy: str, settings: dict[str, str],
                     text: str | None = None, text_file: str | Path | None = None,
                     out=None, err=None) -> int:
    """``simul stream --text "…"`` (or ``--text-file F``: a sentence a line, each its own
    stream): a text MT model translates the sentence as its words arrive; each target word is
    printed as it is written, after the number of source words read by then, then the whole
    translation. Refused in one line, before the model loads: an empty text, a speech model,
    a policy that does not run on text. ``model``: a name or a
    :class:`~simul.models.registry.Model`."""
    import sys

    from simul.models import loader, registry
    from simul.policies import make

    out, err = out or sys.stdout, err or sys.stderr
    where, sentences = _sentences(text, text_file)
    the_policy = make(policy, settings)  # bad settings fail before the model loads
    if the_policy.runs_on != "mt":
        raise ValueError(f"{where}: policy {the_policy.name!r} runs on speech; text input "
                         "takes a policy that runs on text (wait_k_text: simul policies "
                         "wait_k_text)")
    model = registry.model(model)
    kind = "a cascade" if model.family == "cascade" else f"task {model.task!r}"
    if kind != "task 'mt'":
        raise ValueError(f"{where}: model {model.name!r} is {kind}, not a text MT model (e.g. "
                         "mt_transformer_bpe_en-de; simul models lists them)")
    mt = loader.load(model)
    setting = ", ".join(f"{k}={v}" for k, v in the_policy.settings().items())
    print(f"streaming {where} ({len(sentences)} sentence{'s' * (len(sentences) > 1)}, a word "
          f"at a time) — {model}, {the_policy.name}({setting}); each word after the source "
          "words read when it was written", file=err, flush=True)
    for k, sentence in enumerate(sentences):
        if k:
            print(file=out)
        if len(sentences) > 1:
            print(f"source:      {sentence}", file=out, flush=True)
        record = translate_text(mt, the_policy, sentence,
                                on_word=lambda w: print(f"{w.delay_ms:4.0f}  {w.text}",
                                                        file=out, flush=True))
        print(f"translation: {record.prediction}", file=out)
        print(f"{len(record.delays)} words from {record.source_length:g} source words",
              file=out, flush=True)
    return 0
