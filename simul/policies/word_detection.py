"""Wait-k over detected source words for offline-trained ST models — Papi et al. 2022.

"Does Simultaneous Speech Translation need Simultaneous Models?" (Findings of EMNLP 2022),
§2.2, §3 and Appendix A; the authors' agent is FBK-fairseq's ``simul_offline_waitk.py``.

The audio is read in chunks of ``chunk_ms``. After every chunk a word detector counts the
source words W(t) heard in the first t ms, and the wait-k rule (Ma et al. 2019,
g(i) = k + i − 1) lets the i-th target WORD be written once W(t) ≥ k + i − 1 (§3: "If this
number is equal or exceeds k_test ... a word is emitted"). Word detection:

- ``"fixed"``: one word per ``word_ms`` of audio, W(t) = ⌊t / word_ms⌋ (Ma et al. 2020b's
  280 ms, the MuST-C mean word duration; pass the corpus' own mean if you measured it);
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
  no effect. The defaults (both on) are the paper's final setting (A.2, Conformer).

If the length cap stops a decision while reading, what was decoded is committed and the
policy reads on (the cap grows with the input).

Departures: the authors' released agent emits the first word when W(t) > k (one word
later than §3 and than Ma et al.'s g(i)); we follow §3. Its adaptive detection counts every
word of the CTC transcript, the last one possibly unfinished, and so does this policy. It
decodes with beam search (fairseq's generator); this policy decodes greedily.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from simul.metrics import units
from simul.models.espnet_st import ModelError
from simul.policies.base import Policy, Read, View, Write

DETECTIONS = ("fixed", "adaptive")
_EPS = 1e-6  # ms: float slack when times land exactly on a grid point


def count_words(model, ids: list[int]) -> int:
    """Target words begun in the units ``ids`` of ``model`` (complete or not)."""
    return units.count_words([model.token_list[i] for i in ids], model.unit_type)


def fixed_word_count(read_ms: float, word_ms: float) -> int:
    """Fixed detection: one source word per ``word_ms`` of audio read."""
    return int(math.floor(read_ms / word_ms + _EPS))


@dataclass
class WaitKWords(Policy):
    name = "wait_k_words"
    paper = "Papi et al. 2022, Findings of EMNLP — §2.2, §3, Appendix A"
    k: int = 5  # source words to wait for (paper: 3, 5, 7, 9, 11)
    detection: str = "fixed"  # "fixed" (one word per word_ms) or "adaptive" (source CTC)
    word_ms: float = 280.0  # fixed detection: mean word duration (Ma et al. 2020b, MuST-C)
    chunk_ms: float = 280.0  # audio read between decisions ("every 280ms", App. A.1)
    force_finish: bool = True  # ignore </s> while reading, read on (App. A)
    avoid_eos_while_reading: bool = True  # take the next best unit instead of </s> (App. A)
    maxlenratio: float = 0.0  # length cap × encoder frames (0: ESPnet's default cap)

    def __post_init__(self) -> None:
        self.require(self.k >= 1, "k", "≥ 1")
        self.require(self.detection in DETECTIONS, "detection", f"one of {DETECTIONS}")
        self.require(self.word_ms > 0, "word_ms", "> 0")
        self.require(self.chunk_ms > 0, "chunk_ms", "> 0")

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

    def source_words(self, model, view: View) -> int:
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
    def decide(self, model, view: View) -> Read | Write:
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

    def _continue_to_word(self, model, view: View, allowed: int) -> tuple[list[int], bool]:
        return continue_to_word(model, view.encoded, view.units, allowed,
                                maxlenratio=self.maxlenratio,
                                avoid_eos=self.avoid_eos_while_reading)


def continue_to_word(model, encoded, committed: list[int], allowed: int, *,
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
