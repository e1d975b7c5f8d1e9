"""Wait-k over detected source words for offline-trained ST models — Papi et al. 2022.

"Does Simultaneous Speech Translation need Simultaneous Models?" (Findings of EMNLP 2022),
§2.2, §3 and Appendix A; the authors' agent is FBK-fairseq's ``simul_offline_waitk.py``.

The audio is read in chunks of ``chunk_ms``. After every chunk a word detector counts the
source words W(t) heard in the first t ms, and the wait-k rule (Ma et al. 2019,
g(i) = k + i − 1) lets the i-th target WORD be written once W(t) ≥ k + i − 1 (§3: "If this
number is equal or exceeds k_test ... a word is emitted"). Word detection:

- ``"fixed"``: one word per ``word_ms`` of audio, W(t) = ⌊t / word_ms⌋ (the paper uses Ma
  et al. 2020b's 280 ms, the MuST-C mean word duration; the default, 360 ms, is the embedded
  corpus' mean; pass the mean of your corpus, e.g. ``simul.papers.papi2022.corpus_word_ms``);
- ``"adaptive"``: the number of words in the greedy transcript of the source-language CTC
  over the encoder states of the prefix read, re-run on every chunk (§2.2). It needs a model
  with a source CTC.

Schedule. The first read is ``chunk_ms`` (adaptive) or the first point of the chunk grid
where W(t) ≥ k (fixed: nothing is computed before that, so reading straight there changes
no decision). At each chunk the committed units are continued greedily over the encoder
states of the prefix (the committed units are re-decoded over them, as the authors' agent
regenerates from the committed tokens) until the target holds W(t) − k + 1 complete words
— several words when W(t) grew by several — then the next chunk is read. Once the whole
input is read, greedy decoding runs to </s> or the length cap (``maxlenratio`` × encoder
frames; 0 = ESPnet's cap of one unit per encoder frame).

Target words. k counts target words, not units (§3; the authors' agent counts units that
start with "▁"). The model's units are SentencePiece pieces or characters; a word is known
to be complete only when the next unit starts a new word
(:func:`simul.metrics.units.begins_word`). For
SentencePiece that unit ("▁next") is the first unit of the next word, so it is decoded as
look-ahead and NOT committed: the word's delay is charged at the next write (our records
charge a SentencePiece word at the next word-initial unit), as in the authors' agent,
which outputs a word once the first unit of the next one is written. For characters the
unit is ``<space>``, which belongs to no word: it is committed with the word it closes.

End-of-sentence while reading (Appendix A):

- ``avoid_eos_while_reading``: while the input is not finished, </s> is never taken; the
  next most probable unit is written instead (the adapter's ``avoid_eos``). The paper uses
  it for adaptive detection with the Transformer and for both detections with the
  Conformer; "for the fixed we found that it degrades the performance".
- ``force_finish``: "forces the model to generate text until the source speech has been
  completely ingested, i.e. to ignore the end of sentence token if predicted before the end
  of an utterance": when </s> comes while reading, the units before it are committed, the
  </s> is dropped and the policy reads the next chunk (fairseq's ``--force-finish``).
  Without it, </s> while reading ends the hypothesis there (SimulEval's usual behaviour).
  With ``avoid_eos_while_reading`` on, </s> cannot occur while reading and force_finish has
  no effect.

Defaults: k=5, adaptive detection, a decision every 360 ms, force_finish on,
avoid_eos_while_reading OFF (word_ms=360 for fixed detection). Adaptive detection is the
paper's best (§5; §6.2: "the superiority of adaptive word detection at any latency
regime"; its §7 system uses it). 360 ms follows the paper's rule, a decision "every average
word duration" (280 ms on MuST-C), on the embedded corpus the shipped models are trained
on (mean word 361 ms in v2 train, 373 ms in tst-COMMON), as the shipped
simultaneous-training recipes do. force_finish is the paper's setting throughout.
avoid_eos_while_reading is off because on the shipped models it is the setting that runs
away (below); with adaptive detection at k ≥ 5 it changes little either way. Measured on
the first 30 tst-COMMON segments (``simul decode … --max-utterances 30`` + ``simul score``;
mean segment 8.5 s, 19 of 30 hold several sentences): BLEU, hypothesis ÷ reference length
(sacrebleu's), LAAL (ms); "360 ms" or "280 ms" is the decision step and, for fixed
detection, word_ms. The Transformer is the one retrained on augmented speech (12 encoder
blocks); the Conformer and the BLSTM are the corpus-v2 ones::

    setting (k=5 and force_finish on unless said) Conformer       Transformer     BLSTM (chars)
    offline greedy                                71.1 0.98 8497  56.3 1.03 8497  50.6 0.98 8497
    DEFAULTS: adaptive, 360 ms, avoid_eos off     66.7 0.99 2564  53.9 1.04 2606  52.8 1.00 1990
    adaptive, 280 ms, avoid_eos on (the paper's)  66.5 1.01 2548  54.5 1.05 2528  50.2 0.99 1951
      the same, k=3                               33.4 1.52 1808  44.9 1.13 1758  39.9 1.06 1172
    adaptive, 280 ms, avoid_eos off, k=3          50.7 1.00 1795  45.1 1.05 1746  40.2 1.05 1161
    adaptive, 280 ms, avoid_eos off, k=7          69.3 0.97 3473  55.1 1.04 3478  52.8 0.99 2893
    fixed 280 ms, avoid_eos on (paper A.2; old    10.6 3.54 1130  14.5 2.56 1261  18.3 1.78 1101
      defaults)
    fixed 280 ms, avoid_eos off (paper A.1)       34.5 1.08 1062  29.7 1.07  843  18.8 1.44  972
    fixed 360 ms, avoid_eos on                    22.4 2.52 1873  28.5 1.57 1829  34.2 1.28 1420
    fixed 360 ms, avoid_eos off                   53.3 0.99 1700  38.4 1.07 1595  37.5 1.16 1349

Why the paper's final A.2 setting (fixed, 280 ms, avoid_eos_while_reading) runs away here:
fixed detection counts a word every 280 ms whatever is said, while these segments speak a
word every 360–470 ms (pauses included: 373 ms over tst-COMMON, 470 ms over its first 30
segments), so the schedule soon asks for target words the speech has not yet given; the
model's best unit there is </s> (the sentence heard so far is translated), and
avoid_eos_while_reading makes it write its next best instead. For the Conformer that is
mostly punctuation that continues the last word ("año" "?" "?" "?" …), which never begins
the next word, so the decision goes on until the length cap (one unit per encoder frame) and
every later chunk adds a few more: "Qué pasa cada año???????????????????? …"; 1200 of its
3053 units are such repeated marks (29 of 30 segments, every multi-sentence one). The
Transformer writes both, marks and repeated word pieces ("Mi piso eran
ératones.ormes.ormes.ormalmente.ormalmente.…", "compra????????????????"), the BLSTM short
sentences and repeated words ("En casa último mes. En casa último mes.").
Adaptive detection counts only words heard, but at small k the same thing happens at
sentence ends (Conformer, k=3: 221 repeated marks in 10 segments). The BLSTM runs away
without avoid_eos_while_reading too when fixed detection outpaces the speech (280 ms:
"recharás recharás …").
The paper's setting is kept as it is, by setting it: ``detection="fixed", word_ms=280,
chunk_ms=280, avoid_eos_while_reading=True`` (``simul.papers.papi2022`` sets its own
settings explicitly); a policy made with avoid_eos_while_reading on warns once per process
(:class:`RunawaySettingWarning`).

If the length cap stops a decision while reading, what was decoded is committed and the
policy reads on (the cap grows with the input).

Departures: the authors' released agent emits the first word when W(t) > k (one word
later than §3 and than Ma et al.'s g(i)); we follow §3. Its adaptive detection counts every
word of the CTC transcript, the last one possibly unfinished, and so does this policy. It
decodes with beam search (fairseq's generator); this policy decodes greedily.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

from simul.metrics import units
from simul.models.adapter import Adapter, Encoded, ModelError
from simul.policies.base import Policy, Read, View, Write

DETECTIONS = ("fixed", "adaptive")
_EPS = 1e-6  # ms: float slack when times land exactly on a grid point


class RunawaySettingWarning(UserWarning):
    """A ``wait_k_words`` setting known to make the output run away (runs of "?" and "."
    up to the length cap). Given once per process and kind of setting; silence it with
    ``warnings.filterwarnings("ignore", category=RunawaySettingWarning)`` or
    ``PYTHONWARNINGS=ignore:wait_k_words``."""


_WARNED: set[str] = set()  # the runaway warnings already given in this process

_RUNAWAY = {
    "fixed": (
        "wait_k_words: detection='fixed' with avoid_eos_while_reading=True (Papi et al. "
        "2022's A.2 setting) runs away: fixed detection soon asks for words not yet spoken, "
        "the model's best unit there is </s>, and avoid_eos_while_reading writes its next "
        "best instead, mostly '?' or '.' that continue the last word up to the length cap "
        "('Qué pasa cada año????????…'). On the shipped en-es models (k=5, word_ms=280, "
        "first 30 tst-COMMON segments) BLEU 10.6 / 14.5 / 18.3 with 3.5 / 2.6 / 1.8 times "
        "the reference length (Conformer / Transformer / BLSTM; offline greedy 71.1 / 56.3 "
        "/ 50.6). For a usable translation set avoid_eos_while_reading=false or "
        "detection='adaptive' (the defaults)."),
    "adaptive": (
        "wait_k_words: avoid_eos_while_reading=True can run away at small k: where the "
        "target has caught up with the words heard, the model's best unit is </s> and "
        "avoid_eos_while_reading writes its next best instead, often '?' or '.' up to the "
        "length cap. On the shipped conformer_bpe_en-es (adaptive detection every 280 ms, "
        "first 30 tst-COMMON segments) BLEU 32.0 / 33.4 / 50.4 / 66.5 at k = 2 / 3 / 4 / 5 (1.64 / "
        "1.52 / 1.22 / 1.01 times the reference length), against 48.1 / 50.7 / 61.0 / "
        "66.1 with it off (the default)."),
}
_SILENCE = (" Shown once per process; silence it with PYTHONWARNINGS=ignore:wait_k_words "
            "or warnings.filterwarnings('ignore', category=RunawaySettingWarning).")


def warn_runaway(detection: str, avoid_eos_while_reading: bool, *, stacklevel: int = 2) -> None:
    """Warn (:class:`RunawaySettingWarning`, once per process and detection) that
    avoid_eos_while_reading is known to run away with this detection."""
    if not avoid_eos_while_reading or detection not in _RUNAWAY or detection in _WARNED:
        return
    _WARNED.add(detection)
    warnings.warn(_RUNAWAY[detection] + _SILENCE, RunawaySettingWarning,
                  stacklevel=stacklevel + 1)


def count_words(model: Adapter, ids: list[int]) -> int:
    """Target words begun in the units ``ids`` of ``model`` (complete or not)."""
    return units.count_words([model.token_list[i] for i in ids], model.unit_type)


def fixed_word_count(read_ms: float, word_ms: float) -> int:
    """Fixed detection: one source word per ``word_ms`` of audio read."""
    return int(math.floor(read_ms / word_ms + _EPS))


@dataclass
class WaitKWords(Policy):
    name = "wait_k_words"
    paper = "Papi et al. 2022, Findings of EMNLP — §2.2, §3, Appendix A"
    k: int = 5  # source words to wait for, a count (paper: 3, 5, 7, 9, 11)
    # one of "adaptive" (source CTC) or "fixed" (one word per word_ms)
    detection: str = "adaptive"
    # fixed detection: mean word duration, ms (embedded corpus; paper: 280, MuST-C)
    word_ms: float = 360.0
    # audio read between decisions, ms ("every average word duration")
    chunk_ms: float = 360.0
    force_finish: bool = True  # a flag: ignore </s> while reading, read on (App. A)
    # a flag: the next best unit instead of </s> (App. A); runs away
    avoid_eos_while_reading: bool = False
    maxlenratio: float = 0.0  # length cap × encoder frames (0: ESPnet's default cap)

    def __post_init__(self) -> None:
        self.require(self.k >= 1, "k", "≥ 1")
        self.require(self.detection in DETECTIONS, "detection", f"one of {DETECTIONS}")
        self.require(self.word_ms > 0, "word_ms", "> 0")
        self.require(self.chunk_ms > 0, "chunk_ms", "> 0")
        # __post_init__ ← the dataclass' __init__ ← whoever made the policy
        warn_runaway(self.detection, self.avoid_eos_while_reading, stacklevel=3)

    # ------------------------------------------------------------------ schedule
    def first_read_ms(self) -> float:
        if self.detection == "adaptive":
            return self.chunk_ms
        chunks = math.ceil(self.k * self.word_ms / self.chunk_ms - _EPS)  # first W(t) ≥ k
        return max(chunks, 1) * self.chunk_ms

    def next_read_ms(self, read_ms: float) -> float:
        """The next point of the chunk grid (multiples of ``chunk_ms``; the session stops a
        read past the end at the end)."""
        chunks = math.floor(read_ms / self.chunk_ms + _EPS) + 1
        return chunks * self.chunk_ms

    def source_words(self, model: Adapter, view: View) -> int:
        """W(t): source words detected in the ``view.read_ms`` read so far."""
        if self.detection == "fixed":
            return fixed_word_count(view.read_ms, self.word_ms)
        try:
            return len(model.ctc_words(view.encoded))
        except ModelError as e:
            config = getattr(model, "config_path", "the model")
            raise ModelError(
                f"wait_k_words with detection='adaptive' counts source words with the "
                f"model's source-language CTC, and {config} has none ({e}); use "
                f"detection='fixed' or a model trained with a source CTC (asr_weight > 0)"
            ) from e

    # ------------------------------------------------------------------ decisions
    def decide(self, model: Adapter, view: View) -> Read | Write:
        memo = view.memo
        if view.source_finished:
            hyp = model.greedy(view.encoded, view.units, maxlenratio=self.maxlenratio)
            return Write(tuple(hyp.tokens), finished=True)
        next_read = Read(self.next_read_ms(view.read_ms))
        if memo.get("decided_at") == view.read_ms:
            return next_read
        memo["decided_at"] = view.read_ms
        allowed = self.source_words(model, view) - self.k + 1  # g(i) = k + i − 1
        if allowed <= count_words(model, view.units):
            return next_read
        new, eos = self._continue_to_word(model, view, allowed)
        if eos and not self.force_finish:
            return Write(tuple(new), finished=True)
        return Write(tuple(new)) if new else next_read

    def _continue_to_word(self, model: Adapter, view: View, allowed: int) -> tuple[list[int], bool]:
        return continue_to_word(model, view.encoded, view.units, allowed,
                                maxlenratio=self.maxlenratio,
                                avoid_eos=self.avoid_eos_while_reading)


def continue_to_word(model: Adapter, encoded: Encoded, committed: list[int], allowed: int, *,
                     maxlenratio: float = 0.0, avoid_eos: bool = False
                     ) -> tuple[list[int], bool]:
    """Greedy units after the ``committed`` ones, over ``encoded``, until ``allowed`` target
    words are complete.

    Returns the units to commit and whether </s> stopped the decoding. The unit that
    begins word ``allowed`` + 1 (SentencePiece "▁…") is look-ahead and is not returned;
    a character model's closing ``<space>`` is. ``avoid_eos`` takes the best other unit
    instead of </s>.
    """
    committed = list(committed)
    pieces = [model.token_list[u] for u in committed]  # the units' text, for boundaries
    begun = count_words(model, committed)
    new: list[int] = []
    state = None  # same encoder output: reusing the state is exact, not an approximation
    while True:
        hyp = model.greedy(encoded, committed + new, max_new=1, maxlenratio=maxlenratio,
                           avoid_eos=avoid_eos, state=state)
        if not hyp.tokens:  # </s>, or the length cap
            return new, hyp.ended
        unit = hyp.tokens[0]
        piece = model.token_list[unit]
        if units.begins_word(pieces[-1:], piece, model.unit_type):
            if begun == allowed:
                return new, False
            begun += 1
        new.append(unit)
        pieces.append(piece)
        state = hyp.resume
        if begun == allowed and units.is_separator(piece, model.unit_type):
            return new, False


def wait_k_over_words(model: Adapter, encode: Callable[[], Encoded], committed: list[int],
                      words_read: int, k: int, next_read: Read, *, maxlenratio: float,
                      avoid_eos: bool) -> Read | Write:
    """One wait-k decision over source words that are given (a text source, a cascade's
    stable transcript): with ``words_read`` words the target may have ``words_read − k + 1``
    words (g(i) = k + i − 1). Writes the greedy units that complete them, over the encoder
    output ``encode()`` (called only when a word is due), or returns ``next_read`` when none
    is due or none came (</s> before the end of the source is not committed)."""
    allowed = words_read - k + 1
    if allowed <= count_words(model, committed):
        return next_read
    new, _ = continue_to_word(model, encode(), committed, allowed, maxlenratio=maxlenratio,
                              avoid_eos=avoid_eos)
    return Write(tuple(new)) if new else next_read
