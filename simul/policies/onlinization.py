"""Onlinization of an offline model by incremental blockwise decoding — Polák et al. 2022, §3.

**Incremental decoding (§3.1).** The source is cut into fixed-size chunks of ``chunk_ms``;
the first chunk lasts ``initial_wait_ms`` (§3.4 "initial wait"; 0 means one ordinary chunk).
After each chunk c the whole prefix read so far is encoded anew, the committed units are
force-decoded over it and beam search (``beam`` items) continues from them. A stable-prefix
rule then picks from the hypotheses W^c the part to commit ("no longer changed afterward,
i.e. no retranslation"); whatever goes beyond the units already committed is written
(Algorithm 1: WRITE if |prefix(W^c)| > |prefix(W^{c−1})|), then the next chunk is read.

**Stable-prefix rules (§3.3).** Hypotheses are compared as whole unit sequences (the forced
committed prefix followed by the units the beam search added), with any EOS removed:

- ``rule="hold"`` — hold-n, eq. (1): the best hypothesis of chunk c without its last n units,
  prefix(W_best^c) = W_{0 : max(0, |W| − n)} (empty when |W| ≤ n).
- ``rule="la"`` — local agreement LA-n, eq. (2): nothing while c < n; from the n-th chunk on,
  the longest common prefix of the best hypotheses of chunks c − n + 1, …, c.
- ``rule="sp"`` — shared prefix SP-n, eq. (3): nothing while c < n; then the longest common
  prefix of *all* beam items of chunks c − n + 1, …, c (SP-1 is Nguyen et al. 2021's rule).

Chunks are counted from the first one of the utterance, whether or not they led to a write.
The rules are the pure functions :func:`hold_n`, :func:`local_agreement` and
:func:`shared_prefix` below. Committed units are never retracted: a rule whose prefix is no
longer than what is committed writes nothing.

**EOS and the end of the input.** "We ignore the EOS if returned by our model and continue
the inference until the end of the source" (§3.3, Algorithm 1, footnote 3): before the input ends, a
hypothesis that ended with EOS takes part in the rules with its units but without the EOS
(so hold-n withholds n real units), the EOS is never committed and never ends the utterance.
When the whole input has been read, beam search runs once more from the committed prefix and
its best hypothesis (up to its EOS or the length cap) is committed, which finishes.

**Departures and choices.** The paper does not state its beam size; ``beam=5`` is ours. The
"beam" of SP-n is the ``beam`` best finished hypotheses ESPnet's beam search returns. The
output-length cap is ESPnet's (``maxlenratio`` × encoder frames of the prefix read; 0: as many
units as encoder frames), applied at every chunk to the prefix read so far. A policy whose
first chunk covers the whole input reproduces offline beam search with the same beam.

**Committing whole words** (``commit="words"``, not in the paper; the default ``"units"``
is the paper's, which compares and commits "tokens"). The rule's stable prefix is cut back
to its last complete word before it is committed: for characters up to its last
``<space>``, for SentencePiece up to (not including) its last unit that begins a word, for
``@@`` BPE up to its last unit without ``@@``. The end of the input still commits the whole
best hypothesis, so a first chunk covering the whole input still reproduces offline beam
search.

**What to expect: the output can stop at a sentence end (beam > 1).** ESPnet's beam search
ranks hypotheses by their summed log-probability, with no length normalisation. Started
from the committed units, its beam holds one hypothesis at the first step, so an EOS the
model ranks among its ``beam`` best next units enters the finished list at once; where the
committed units end a sentence ("… cada año.") or a word is cut ("el policí"), that short
hypothesis (log-probability −4.9 in the first example) outscores the rest of the
translation (" Mi flor era enorme …", −14.2), even over the whole input, whereas offline
search from the start had dropped that EOS from a beam full of stronger hypotheses. The
policy then writes nothing more while reading, and the last step (beam search from the
committed units over the whole input) ends there too. Segments of several sentences and
character models, whose continuations take many more units, suffer most. First 30
tst-COMMON segments, LA-2 (19 of 30 segments hold several sentences), BLEU / hypothesis ÷
reference length / LAAL (ms)::

    blstm_char_en-es              500 ms          1000 ms         2000 ms
    offline greedy / beam 5       50.6 0.98 / 58.4 0.96
    beam 5 (the defaults)         25.6 0.57 1716  38.8 0.67 2488  47.9 0.79 3983
    beam 5, commit="words"        43.9 0.75 1614  47.6 0.78 2460  49.4 0.82 3979
    beam 1                                        52.4 1.00 2258
    beam 1, commit="words"                        53.0 1.00 2327
    conformer_bpe_en-es
    offline greedy / beam 5       71.1 0.98 / 70.8 0.96
    beam 5 (the defaults)         55.4 0.90 1740  67.1 0.93 2595  68.1 0.93 3877
    beam 5, commit="words"        68.7 0.98 2268  68.3 0.95 3065  67.2 0.93 4327
    beam 1                                        70.4 0.98 2529

On blstm_char_en-es at 1000 ms with beam 5, the units committed when the input ends close a
sentence in 12 segments, stop inside a word in 11 and after a word in 7; the last beam
search from them writes at most one word (where greedy decoding from the same units writes
three or more) in all 12, in 4 of the 11 and in none of the 7, and 15 outputs hold fewer
sentences than offline beam search (none holds more: no sentence end is committed too
early). What was committed while reading is sound: finishing from the same units greedily
instead would score 54.8 (length 1.01), and of the 355 output words 21 were cut by a
commit, all but one ("policí", where the output stopped) words of the training targets.
conformer_bpe_en-es stops in 3 segments (67.1; finished greedily 71.3). Committing whole
words ends every committed prefix after a space, which removes the stops inside words but
not those at the next sentence end (12 segments); beam 1 (greedy search, whose EOS must be
the best next unit) removes both.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from simul.metrics import units as unit_text
from simul.policies.base import Policy, Read, View, Write

if TYPE_CHECKING:  # types only: a policy never loads a model adapter
    from simul.models.adapter import Adapter

Units = tuple[int, ...]

STABLE_PREFIX_RULES = ("hold", "la", "sp")
"""Values of the ``rule`` setting: hold-n, LA-n, SP-n (§3.3)."""

COMMIT_UNITS = ("units", "words")
"""Values of the ``commit`` setting: a stable prefix is committed as it is (K22), or cut
back to its last complete word."""


def longest_common_prefix(sequences: Sequence[Sequence[int]]) -> Units:
    """The longest common prefix of ``sequences`` (empty when there are none)."""
    if not sequences:
        return ()
    first = sequences[0]
    end = min(len(s) for s in sequences)
    for i in range(end):
        if any(s[i] != first[i] for s in sequences):
            return tuple(first[:i])
    return tuple(first[:end])


def hold_n(best: Sequence[int], n: int) -> Units:
    """Hold-n, eq. (1): the best hypothesis without its last ``n`` units."""
    return tuple(best[: max(0, len(best) - n)])


def local_agreement(best_per_chunk: Sequence[Sequence[int]], n: int) -> Units:
    """LA-n, eq. (2): LCP of the best hypotheses of the last ``n`` chunks (``best_per_chunk``
    holds one best hypothesis per chunk so far, oldest first); empty before the n-th chunk."""
    if len(best_per_chunk) < n:
        return ()
    return longest_common_prefix(best_per_chunk[len(best_per_chunk) - n :])


def shared_prefix(beams_per_chunk: Sequence[Sequence[Sequence[int]]], n: int) -> Units:
    """SP-n, eq. (3): LCP of all beam items of the last ``n`` chunks (``beams_per_chunk``
    holds one list of beam items per chunk so far, oldest first); empty before the n-th."""
    if len(beams_per_chunk) < n:
        return ()
    return longest_common_prefix([h for beam in beams_per_chunk[len(beams_per_chunk) - n :]
                                  for h in beam])


def whole_words(pieces: Sequence[str], unit_type: str) -> int:
    """How many of the units ``pieces`` (their text) make complete words: for characters up
    to and including the last ``<space>``; for SentencePiece up to the last unit that begins
    a word (that unit is the sign that the word before it is complete, and begins a word
    that may go on); for ``@@`` BPE up to the last unit without ``@@``. 0 when no word is
    known to be complete."""
    for i in range(len(pieces), 0, -1):
        if unit_type == "char" and unit_text.is_separator(pieces[i - 1], unit_type):
            return i
        if unit_type == "bpe@@" and not pieces[i - 1].endswith(unit_text.BPE_CONTINUATION):
            return i
        if unit_type == "bpe" and i < len(pieces) and unit_text.begins_word(
                pieces[i - 1 : i], pieces[i], unit_type):
            return i
    return 0


@dataclass
class Onlinization(Policy):
    name = "onlinization"
    paper = "Polák et al. 2022, IWSLT (CUNI-KIT) — §3.1, §3.3 eqs. (1)–(3), §3.4 initial wait"
    # audio read between decisions, ms (the paper sweeps 250, 500, 1000, 2000)
    chunk_ms: float = 500.0
    initial_wait_ms: float = 0.0  # length of the first chunk, ms; 0: chunk_ms (§3.4 uses 2000)
    # one of "hold" (hold-n), "la" (LA-n) or "sp" (SP-n); the submission used LA-2
    rule: str = "la"
    # n, a count: hold-n withholds the last n units; LA-n and SP-n take the common prefix of
    # the last n chunks' hypotheses
    n: int = 2
    beam: int = 5  # beam size, a count (not stated in the paper)
    # length cap × encoder frames (0: ESPnet's cap, as many units as encoder frames)
    maxlenratio: float = 0.0
    # one of "units" (the stable prefix, as the paper) or "words" (its whole words only)
    commit: str = "units"

    def __post_init__(self):
        least = 0 if self.rule == "hold" else 1
        self.require(self.rule in STABLE_PREFIX_RULES, "rule", f"one of {STABLE_PREFIX_RULES}")
        self.require(self.n >= least, "n", f"≥ {least} for rule {self.rule!r}")
        self.require(self.chunk_ms > 0, "chunk_ms", "> 0")
        self.require(self.initial_wait_ms >= 0, "initial_wait_ms", "≥ 0")
        self.require(self.beam >= 1, "beam", "≥ 1")
        self.require(self.commit in COMMIT_UNITS, "commit", f"one of {COMMIT_UNITS}")

    def first_read_ms(self) -> float:
        return self.initial_wait_ms or self.chunk_ms

    def stable_prefix(self, chunks: Sequence[Sequence[Sequence[int]]]) -> Units:
        """The rule's prefix(W^c) given each chunk's hypotheses so far (best first)."""
        if self.rule == "hold":
            return hold_n(chunks[-1][0], self.n)
        if self.rule == "la":
            return local_agreement([beam[0] for beam in chunks], self.n)
        return shared_prefix(chunks, self.n)

    def decide(self, model: Adapter, view: View) -> Read | Write:
        memo = view.memo
        next_chunk = Read(view.read_ms + self.chunk_ms)
        if not view.source_finished and memo.get("decided_at") == view.read_ms:
            return next_chunk  # this chunk's units have been written
        memo["decided_at"] = view.read_ms
        committed = tuple(view.units)
        # hold-n and LA-n read only the best hypothesis: the search may stop once it is
        # settled (exact, see ESPnetST.beam_search); SP-n reads the whole beam
        hyps = model.beam_search(view.encoded, list(committed), beam=self.beam,
                                 nbest=self.beam if self.rule == "sp" else 1,
                                 maxlenratio=self.maxlenratio)
        if view.source_finished:
            return Write(tuple(hyps[0].tokens) if hyps else (), finished=True)
        # whole sequences; the adapter has left out EOS (ignored before the end, §3.3)
        beam_items = [committed + tuple(h.tokens) for h in hyps] or [committed]
        chunks = memo.setdefault("chunks", [])
        chunks.append(beam_items if self.rule == "sp" else beam_items[:1])
        keep = 1 if self.rule == "hold" else self.n  # only the last n chunks matter
        del chunks[: max(0, len(chunks) - keep)]
        stable = self.stable_prefix(chunks)
        if self.commit == "words":
            pieces = [model.token_list[u] for u in stable]
            stable = stable[: whole_words(pieces, model.unit_type)]
        if len(stable) <= len(committed):  # nothing new; committed units stay as they are
            return next_chunk
        return Write(stable[len(committed) :])
