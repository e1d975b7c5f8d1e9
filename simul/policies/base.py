"""What every policy is: pure decision logic over what the model adapter proposes.

A streaming session (:class:`simul.decoding.session.Session`;
:func:`simul.decoding.simulate.simulate` runs
one over a whole segment) owns the audio, the clock and the record. At every step it hands
the policy a :class:`View` — how much source has been read, whether the source has ended
there, the units committed so far, and the encoder states of the prefix read — and the
policy answers :class:`Read` (read on, up to a time) or :class:`Write` (commit these units,
perhaps finishing). A policy never learns the total length of the source: a live stream
does not know it either. It may ask to read past the end (``Read(math.inf)`` reads
everything); the session then stops at the end and says so (``View.source_finished``).
Policies ask the adapter for proposals (a greedy continuation, a beam search from the
committed prefix, a CTC transcript, attention weights) through the seam
(:class:`simul.models.adapter.Adapter`), never an adapter module; they never touch ESPnet,
audio or time themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:  # types only: a policy never loads the model adapter (or ESPnet) itself
    from simul.corpus import Alignment
    from simul.models.adapter import Adapter, Encoded


@dataclass(frozen=True)
class Read:
    """Read the source up to ``until_ms`` (ms from the start; more than what was read). A
    time past the end of the source reads to the end (``math.inf``: all of it)."""

    until_ms: float


@dataclass(frozen=True)
class Write:
    """Commit ``units`` (target unit ids); ``finished`` ends the hypothesis."""

    units: tuple[int, ...]
    finished: bool = False


@dataclass
class View:
    """What a policy may look at when it decides (no look-ahead beyond ``read_ms``)."""

    read_ms: float
    source_finished: bool  # the source ends at read_ms: nothing more will come
    units: list[int]
    encoded: Encoded
    step: int
    memo: dict[str, Any] = field(default_factory=dict)  # the policy's own scratch space
    alignment: Alignment | None = None  # oracle word/phoneme times (mini corpus), if any


class Policy:
    """Base class: subclasses set ``name`` and ``paper`` and implement the two methods."""

    name: ClassVar[str] = ""
    paper: ClassVar[str] = ""
    # the models it decodes (their Adapter.kind): "st" (an end-to-end ST model), "cascade"
    # (ASR + MT, a CascadeAdapter) or "mt" (a text MT on a text source, simul.decoding.text:
    # a TextMTAdapter)
    runs_on: ClassVar[str] = "st"
    # a decoder the model must have been trained with (its decoder_name, e.g.
    # "transformer_mma": a MonotonicAdapter); "" for any
    needs_decoder: ClassVar[str] = ""

    def first_read_ms(self) -> float:
        """How much source to read before the first decision (``math.inf``: all of it)."""
        raise NotImplementedError

    def decide(self, model: Adapter, view: View) -> Read | Write:
        raise NotImplementedError

    @staticmethod
    def finish(model: Adapter, view: View, *, maxlenratio: float = 0.0,
               state: Any = None) -> Write:
        """The input is read: decode greedily to EOS (or the length cap) and finish."""
        hyp = model.greedy(view.encoded, view.units, maxlenratio=maxlenratio, state=state)
        return Write(tuple(hyp.tokens), finished=True)

    def check_model(self, model: Adapter) -> list[str]:
        """Refuse (``ValueError``, one line naming the setting) settings that do not apply to
        ``model``; return notes on settings it applies on purpose though the model was not
        trained for them. A session checks this before its first decision
        (:func:`simul.decoding.session.check_fit`); by default every model fits."""
        return []

    def require(self, ok: bool, setting: str, rule: str) -> None:
        """Refuse a bad setting, naming it: ``<policy>: <setting>=<value> must be <rule>``."""
        if not ok:
            raise ValueError(f"{self.name}: {setting}={getattr(self, setting)!r} must be {rule}")

    def settings(self) -> dict:
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}
