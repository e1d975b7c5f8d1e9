"""Wait-k with a pre-decision module — Ma, Pino and Koehn 2020, §3.2, eqs. (2)–(3).

"SimulMT to SimulST: Adapting Simultaneous Text Translation to End-to-End Simultaneous
Speech Translation" (AACL 2020). A pre-decision module groups the input so that READ/WRITE
decisions are made only at trigger points; between triggers the policy only reads.

Triggers (times in ms from the segment start):

- ``"fixed"`` (eq. 2): every Δt = ``step_ms`` of audio — Δt, 2Δt, 3Δt, … (paper: 120, 200,
  280, 360, 440 ms). Eq. (2) fires at encoder states whose time j·r_e·T_s is a multiple of
  Δt; the paper's Δt are multiples of its 40 ms encoder frame, so that is every Δt.
- ``"word"`` / ``"phoneme"`` (eq. 3, the oracle flexible pre-decision): a trigger where the
  aligned source token changes, i.e. at the end of every oracle word or phoneme of
  ``view.alignment`` (duplicates merged; one at or past the end of the source reads to the
  end). Only segments with an
  alignment can use them.

Policy: wait-k (Ma et al. 2019, g(i) = k + i − 1) between source "tokens" = triggers and
target tokens = the model's units (the paper's models write SentencePiece units and its
wait-k acts on them). The i-th target unit is written once k + i − 1 triggers have been
passed: one unit at the k-th trigger, then one more at each further trigger (more when an
earlier trigger wrote fewer than allowed, stopped by the length cap). With a
character-unit model that is one character per trigger. Once the input is read, greedy
decoding runs to </s> or the length cap (``maxlenratio`` × encoder frames, 0 = ESPnet's
cap); a source with fewer than k triggers is thus decoded offline.

Schedule. Fixed: the first read is kΔt, then every Δt. Flexible: the first read is 0 ms (no
audio, no encoding) and the first decision reads to the k-th trigger, then to each further
trigger. Reads jump from trigger to trigger: nothing can be decided in between, so the
in-between chunks would change no decision.

Decoder state (``reuse_state``): the paper's fairseq agent keeps the decoder's incremental
state across reads while the encoder is recomputed over the longer prefix, which is the
adapter's state reuse (Nguyen et al. 2021, eq. 2); off re-decodes the committed units over
every new encoder output.

</s> while reading ends the hypothesis there (SimulEval's behaviour); ``force_finish``
(fairseq's ``--force-finish``) instead drops it and reads to the next trigger.

Departures: the models here are offline-trained (the paper trains each k and Δt with the
pre-decision in place). The oracle times come from the mini corpus' synthesizer (the paper:
Gentle forced alignment). :meth:`first_read_ms` is not given the alignment, hence the
empty first read of the flexible triggers. The policy knows the times
of oracle triggers not reached yet and uses them to know where to read to, which no real
system could (the paper: "a SimulST model would not normally have access to this
information").
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from simul.policies.base import Policy, Read, View, Write

if TYPE_CHECKING:  # types only: a policy never loads a model adapter
    from simul.models.adapter import Adapter

TRIGGERS = ("fixed", "word", "phoneme")
_EPS = 1e-6  # ms: float slack when times land exactly on a trigger


@dataclass
class Predecision(Policy):
    name = "predecision"
    paper = "Ma, Pino and Koehn 2020, AACL — §3.2, eqs. (2)–(3)"
    trigger: str = "fixed"  # one of "fixed" (every step_ms) or oracle "word" / "phoneme" ends
    step_ms: float = 280.0  # Δt of the fixed pre-decision, ms (paper: 120, 200, 280, 360, 440)
    k: int = 3  # triggers to wait for before the first unit, a count (paper: 1 … 10)
    maxlenratio: float = 0.0  # length cap × encoder frames (0: ESPnet's default cap)
    force_finish: bool = False  # a flag: drop </s> predicted while reading and read on
    reuse_state: bool = True  # a flag: keep the decoder state across reads (fairseq's agent)

    def __post_init__(self) -> None:
        self.require(self.trigger in TRIGGERS, "trigger", f"one of {TRIGGERS}")
        self.require(self.step_ms > 0, "step_ms", "> 0")
        self.require(self.k >= 1, "k", "≥ 1")

    # ------------------------------------------------------------------ triggers
    def _oracle_times(self, view: View) -> list[float]:
        """Sorted end times (ms) of the oracle words or phonemes (duplicates merged)."""
        if "triggers" not in view.memo:
            if view.alignment is None:
                raise ValueError(
                    f"predecision: trigger={self.trigger!r} needs the oracle {self.trigger} "
                    f"times of the segment (Segment.alignment, read from <split>.align.jsonl),"
                    f" but this segment has none; use trigger='fixed', or a corpus with "
                    f"alignments (the mini corpus built by simul)"
                )
            spans = view.alignment.words if self.trigger == "word" else view.alignment.phonemes
            view.memo["triggers"] = sorted({float(s.end_ms) for s in spans if s.end_ms > 0})
        return view.memo["triggers"]

    def trigger_time(self, view: View, index: int) -> float:
        """The time (ms) of trigger ``index`` (0: the first); ``math.inf`` when the oracle
        triggers have run out. Fixed triggers go on for ever: the policy never knows where
        the source ends, and a read past the end stops there."""
        if self.trigger == "fixed":
            return (index + 1) * self.step_ms
        times = self._oracle_times(view)
        return times[index] if index < len(times) else math.inf

    def triggers_passed(self, view: View) -> int:
        """How many triggers lie at or before ``view.read_ms``."""
        if self.trigger != "fixed":
            return bisect.bisect_right(self._oracle_times(view), view.read_ms + _EPS)
        limit = view.read_ms + _EPS
        m = math.floor(limit / self.step_ms)
        while (m + 1) * self.step_ms <= limit:  # floating point: m·Δt as trigger_time has it
            m += 1
        while m > 0 and m * self.step_ms > limit:
            m -= 1
        return m

    def trigger_times(self, view: View, before_ms: float) -> list[float]:
        """The triggers strictly inside a source of ``before_ms`` (e.g. to plot them)."""
        if self.trigger == "fixed":
            n = math.floor(before_ms / self.step_ms - _EPS)
            return [m * self.step_ms for m in range(1, n + 1)]
        return [t for t in self._oracle_times(view) if t < before_ms]

    def first_read_ms(self) -> float:
        if self.trigger == "fixed":
            return self.k * self.step_ms
        return 0.0  # the alignment is not known yet: the first decision reads to trigger k

    def _next_read(self, view: View, units: int) -> Read:
        """Read to the first trigger after ``read_ms`` at which unit ``units`` + 1 is allowed
        (past the last oracle trigger: to the end)."""
        needed = self.k + units - 1  # index of the trigger that allows the next unit
        return Read(self.trigger_time(view, max(self.triggers_passed(view), needed)))

    # ------------------------------------------------------------------ decisions
    def decide(self, model: Adapter, view: View) -> Read | Write:
        memo = view.memo
        state = memo.get("state") if self.reuse_state else None
        if view.source_finished:
            return self.finish(model, view, maxlenratio=self.maxlenratio, state=state)
        if memo.get("decided_at") == view.read_ms:
            return self._next_read(view, len(view.units))
        memo["decided_at"] = view.read_ms
        budget = self.triggers_passed(view) - self.k + 1 - len(view.units)  # g(i) = k + i − 1
        if budget <= 0:
            return self._next_read(view, len(view.units))
        hyp = model.greedy(view.encoded, view.units, max_new=budget,
                           maxlenratio=self.maxlenratio, state=state)
        memo["state"] = hyp.resume
        if hyp.ended and not self.force_finish:
            return Write(tuple(hyp.tokens), finished=True)
        if not hyp.tokens:
            return self._next_read(view, len(view.units))
        return Write(tuple(hyp.tokens))
