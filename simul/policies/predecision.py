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
  ``view.alignment`` (inside the source, duplicates merged). Only segments with an
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
Gentle forced alignment). :meth:`first_read_ms` is given only the source duration, not the
alignment, hence the empty first read of the flexible triggers. The policy knows the times
of oracle triggers not reached yet and uses them to know where to read to, which no real
system could (the paper: "a SimulST model would not normally have access to this
information").
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

from simul.policies.base import Policy, Read, View, Write

TRIGGERS = ("fixed", "word", "phoneme")
_EPS = 1e-6  # ms: float slack when times land exactly on a trigger


@dataclass
class Predecision(Policy):
    name = "predecision"
    paper = "Ma, Pino and Koehn 2020, AACL — §3.2, eqs. (2)–(3)"
    trigger: str = "fixed"  # "fixed" (every step_ms) or oracle "word" / "phoneme" ends
    step_ms: float = 280.0  # Δt of the fixed pre-decision (paper: 120, 200, 280, 360, 440)
    k: int = 3  # triggers to wait for before the first unit (paper: 1 … 10)
    maxlenratio: float = 0.0  # length cap × encoder frames (0: ESPnet's default cap)
    force_finish: bool = False  # drop </s> predicted while reading and read on
    reuse_state: bool = True  # keep the decoder state across reads (fairseq's agent)

    def __post_init__(self) -> None:
        self.require(self.trigger in TRIGGERS, "trigger", f"one of {TRIGGERS}")
        self.require(self.step_ms > 0, "step_ms", "> 0")
        self.require(self.k >= 1, "k", "≥ 1")

    # ------------------------------------------------------------------ triggers
    def trigger_times(self, view: View) -> list[float]:
        """Sorted trigger times (ms) inside the source, the source end excluded."""
        if self.trigger == "fixed":
            n = math.floor(view.source_ms / self.step_ms - _EPS)
            return [m * self.step_ms for m in range(1, n + 1)]
        if view.alignment is None:
            raise ValueError(
                f"predecision: trigger={self.trigger!r} needs the oracle {self.trigger} times "
                f"of the segment (Segment.alignment, read from <split>.align.jsonl), but this "
                f"segment has none; use trigger='fixed', or a corpus with alignments (the "
                f"mini corpus built by simul)"
            )
        spans = view.alignment.words if self.trigger == "word" else view.alignment.phonemes
        return sorted({float(s.end_ms) for s in spans if 0 < s.end_ms < view.source_ms})

    def first_read_ms(self, source_ms: float) -> float:
        if self.trigger == "fixed":
            return min(self.k * self.step_ms, source_ms)
        return 0.0  # the alignment is not known yet: the first decision reads to trigger k

    def _triggers(self, view: View) -> list[float]:
        if "triggers" not in view.memo:
            view.memo["triggers"] = self.trigger_times(view)
        return view.memo["triggers"]

    def _next_read(self, view: View, times: list[float], units: int) -> Read:
        """Read to the first trigger after ``read_ms`` at which unit ``units`` + 1 is allowed."""
        after = bisect.bisect_right(times, view.read_ms + _EPS)  # triggers passed so far
        needed = self.k + units - 1  # index of the trigger that allows the next unit
        index = max(after, needed)
        return Read(times[index] if index < len(times) else view.source_ms)

    # ------------------------------------------------------------------ decisions
    def decide(self, model, view: View) -> Read | Write:
        memo = view.memo
        state = memo.get("state") if self.reuse_state else None
        if view.source_finished:
            return self.finish(model, view, maxlenratio=self.maxlenratio, state=state)
        times = self._triggers(view)
        if memo.get("decided_at") == view.read_ms:
            return self._next_read(view, times, len(view.units))
        memo["decided_at"] = view.read_ms
        passed = bisect.bisect_right(times, view.read_ms + _EPS)
        budget = passed - self.k + 1 - len(view.units)  # g(i) = k + i − 1
        if budget <= 0:
            return self._next_read(view, times, len(view.units))
        hyp = model.greedy(view.encoded, view.units, max_new=budget,
                           maxlenratio=self.maxlenratio, state=state)
        memo["state"] = hyp.resume
        if hyp.ended and not self.force_finish:
            return Write(tuple(hyp.tokens), finished=True)
        if not hyp.tokens:
            return self._next_read(view, times, len(view.units))
        return Write(tuple(hyp.tokens))
