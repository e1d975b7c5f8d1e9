"""Monotonic multihead attention over a pre-decision module — Ma, Pino and Koehn 2020, §3
(the flexible policy), with Ma et al. 2020 (ICLR) for MMA.

The model decides: at each pre-decision trigger (:mod:`simul.policies.predecision`'s fixed
Δt or oracle word / phoneme ends) the blocks read so far are the triggers passed, and the
next target step is taken once every head of every decoder layer has stopped at one of
them (p ≥ 0.5, scanning from where it stopped for the step before); steps are taken until
a head waits, then the policy reads to the next trigger. Once the input is read, the last
block ends with the source, no head waits, and decoding runs to </s> or the length cap
(``maxlenratio`` × encoder frames; 0 = ESPnet's cap). </s> while reading ends the
hypothesis there (SimulEval's behaviour), as in ``predecision``.

It decodes models with an MMA decoder only (:class:`simul.models.adapters.mma_st.ESPnetMMA`, e.g.
``conformer_bpe_en-de_mma``). By default the triggers are the ones the model was trained
with (its fixed Δt, or its oracle boundaries); ``trigger`` and ``step_ms`` decode it on
others (M20 trains one model per pre-decision; each card says which). Decoder state:
positions already written keep what they computed over the encoder output of their time
(fairseq's agent).

With p forced to wait-k's pattern (p_ij = 1 once j ≥ i + k − 1, else 0) it writes what
``predecision`` wait-k writes on the same triggers (M20 §3.1: wait-k is a special case of
MMA), which the tests check.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from simul.policies.base import Policy, Read, View, Write
from simul.policies.predecision import TRIGGERS, Predecision

if TYPE_CHECKING:  # types only: a policy never loads a model adapter
    from simul.models.adapter import MonotonicAdapter

_EPS = 1e-6  # ms


@dataclass
class MonotonicAttention(Policy):
    name = "mma"
    paper = ("Ma, Pino and Koehn 2020, AACL — §3 (MMA with a pre-decision module); "
             "Ma et al. 2020, ICLR (monotonic multihead attention)")
    needs_decoder = "transformer_mma"
    # one of "fixed" (every step_ms), "word" / "phoneme" (oracle ends) or "" (the model's
    # own, as it was trained)
    trigger: str = ""
    step_ms: float = 0.0  # Δt of the fixed pre-decision, ms; 0: the model's own
    maxlenratio: float = 0.0  # length cap × encoder frames (0: ESPnet's default cap)

    def __post_init__(self) -> None:
        self.require(self.trigger in ("", *TRIGGERS), "trigger",
                     f"one of {TRIGGERS} (or empty: the model's own)")
        self.require(self.step_ms >= 0, "step_ms", "≥ 0 (0: the model's Δt)")

    def check_model(self, model: MonotonicAdapter) -> list[str]:
        """A model trained over fixed blocks is decoded on fixed triggers (any Δt), one
        trained on oracle boundaries on oracle ones (word or phoneme): its heads learned to
        stop at blocks of that kind. ``step_ms`` applies to fixed triggers only. A Δt or an
        oracle unit other than the model's is decoded with a note (M20 trains one model per
        pre-decision; simul's notebooks measure how the model holds up on the others)."""
        trained = model.pre_decision
        name = Path(str(model.config_path)).parent.name
        on = (f"fixed blocks of {model.pre_decision_ms:g} ms" if trained == "fixed"
              else f"oracle {trained} ends")
        trigger = self.trigger or trained
        if (trigger == "fixed") != (trained == "fixed"):
            own = ("trigger=fixed (any step_ms)" if trained == "fixed"
                   else "trigger=word or trigger=phoneme")
            raise ValueError(f"{self.name}: trigger={trigger} on {name}, trained over {on}: its "
                             f"heads learned to stop at those; decode it with {own} (or the "
                             "model's own: leave trigger out)")
        if trigger != "fixed" and self.step_ms:
            raise ValueError(f"{self.name}: step_ms={self.step_ms:g} applies to fixed triggers; "
                             f"{name} is decoded on oracle {trigger} ends: leave step_ms out")
        if trigger == "fixed" and self.step_ms and self.step_ms != model.pre_decision_ms:
            return [f"{self.name}: {name} was trained over {on}, decoded here over blocks of "
                    f"{self.step_ms:g} ms (a Δt it was not trained on)"]
        if trigger != trained:
            return [f"{self.name}: {name} was trained over {on}, decoded here on oracle "
                    f"{trigger} ends (a pre-decision it was not trained on)"]
        return []

    def _triggers(self, model: MonotonicAdapter, view: View) -> Predecision:
        if "predecision" not in view.memo:
            step = self.step_ms or model.pre_decision_ms
            trigger = self.trigger or model.pre_decision
            view.memo["predecision"] = Predecision(trigger=trigger, step_ms=step, k=1)
        return view.memo["predecision"]

    def first_read_ms(self) -> float:
        # fixed with its Δt set: the first trigger; otherwise the first decision (nothing
        # read, the model not seen yet) reads to it
        return self.step_ms if self.trigger == "fixed" and self.step_ms else 0.0

    def block_times(self, triggers: Predecision, view: View) -> list[float]:
        """When each block read so far ended (ms): the triggers passed and, once the source
        has ended, the source's end."""
        passed = triggers.triggers_passed(view)
        times = [triggers.trigger_time(view, j) for j in range(passed)]
        if view.source_finished and (not times or times[-1] < view.read_ms - _EPS):
            times.append(view.read_ms)
        return times

    def decide(self, model: MonotonicAdapter, view: View) -> Read | Write:
        memo = view.memo
        triggers = self._triggers(model, view)
        next_read = Read(triggers.trigger_time(view, triggers.triggers_passed(view)))
        if not view.source_finished and memo.get("decided_at") == view.read_ms:
            return next_read
        memo["decided_at"] = view.read_ms
        blocks = self.block_times(triggers, view)
        if view.encoded.frames == 0 or not blocks:
            return Write((), finished=True) if view.source_finished else next_read
        state = memo.get("state") or model.monotonic_start()
        cap = model.max_length(view.encoded, self.maxlenratio)
        new: list[int] = []
        while len(view.units) + len(new) < cap:
            step = model.monotonic_step(view.encoded, state, blocks,
                                        finished=view.source_finished)
            if step.waiting:
                break
            token = int(step.logp.argmax())
            if token == model.eos:
                return Write(tuple(new), finished=True)
            new.append(token)
            state = model.advance(state, token, step)
        memo["state"] = state
        if view.source_finished:
            return Write(tuple(new), finished=True)
        return Write(tuple(new)) if new else next_read
