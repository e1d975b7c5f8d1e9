"""A SimulEval agent: any simul model and policy, evaluated by SimulEval 1.1.

SimulEval (Ma et al. 2020) is how the field, IWSLT included, evaluates simultaneous systems:
it streams each source wav to an *agent* in segments of ``--source-segment-size`` ms and
scores what the agent writes. :class:`SimulAgent` is a ``SpeechToTextAgent`` that runs one
:class:`simul.decoding.session.Session` per sentence; from the repository root::

    simuleval --agent-class simul.decoding.simuleval_agent.SimulAgent \\
        --model conformer_bpe_en-es --policy wait_k_words --set k=3 \\
        --source source.txt --target target.txt --source-segment-size 40 --output OUT

(``--agent simul/decoding/simuleval_agent.py`` in place of ``--agent-class`` works too.)

``--model``: a shipped model (a directory name of ``data/models/``) or an ESPnet2 ST model
directory; ``--policy`` and ``--set KEY=VALUE`` (repeatable): as for ``simul decode``
(``simul policies`` lists them); ``--device``: SimulEval's own option (cpu by default), the
device the model is loaded on. ``source.txt`` lists one wav per line (16 kHz mono, one
segment each), ``target.txt`` the references. SimulEval writes ``OUT/instances.log``
(``simul score OUT/instances.log`` scores it as simul scores its own records) and prints
BLEU and its latency metrics. SimulEval is a test-only dependency of simul (installed with
``--no-deps``, see ``requirements/test.txt``): this module imports it, and nothing else in
simul imports this module.

Each call of the evaluator sends one source segment (the last one flagged as the end of the
source); the agent pushes the samples new since its last call into the session and returns
the words the session has newly completed (``WriteAction``), or reads on (``ReadAction``).

``--source-segment-size``. The policy's decisions do not depend on how the audio is chunked
(:mod:`simul.decoding.session`), so the predictions are those of ``simul decode`` (and
:func:`simul.decoding.simulate.simulate`) for any segment size. Delays are not: SimulEval charges
every word of a ``WriteAction`` the audio it has sent so far, and the session returns a
word in the first call whose audio reaches the read (ms) at which simul charges it. So
SimulEval's delay of a word is simul's delay rounded up to the next multiple of the segment
(at least one segment: the agent is first called with one), capped at the source length —
exactly: ``min(k * S, N) / 16`` ms for the least ``k >= 1`` that reaches simul's delay,
with ``N`` the source's samples and ``S = ceil(size_ms / 1000 * 16000)`` the samples
SimulEval sends a call (``16 * size_ms``, except for a few sizes above 2 s where its float
arithmetic adds one sample). ``tests/test_simuleval_agent.py`` runs SimulEval 1.1.4 on
tst-COMMON segments of the mini corpus and finds this for every word (two policies;
segments of 10, 40 and 250 ms), the predictions of ``simulate()`` word for word, and
SimulEval's BLEU and latency scores equal to simul's (``simul score``) of those records.
When every read of the policy falls on a multiple of the segment (``wait_k_words`` reads on
a grid of ``chunk_ms``, 280 ms by default: segments of 10, 20, 40, 140 or 280 ms;
``onlinization`` with ``chunk_ms=250``: 10, 50, 125 or 250 ms), SimulEval's delays and
latency scores are simul's own. SimulEval's default segment size is 1 ms (16 samples a
call): give ``--source-segment-size`` explicitly. Computation-aware delays (``elapsed``,
``--computation-aware``) are SimulEval's wall-clock times, which include its own work, not
simul's.

A translation that finishes before the source does (e.g. ``predecision`` without
``force_finish``) ends the instance's output; the agent then takes the rest of the source
without decoding it (SimulEval resets the agent when the output ends but keeps sending that
sentence's source, and would count words written after the reset). Policies that read
oracle alignments (``predecision`` with ``trigger=word`` or ``phoneme``) cannot run here:
SimulEval gives the agent audio only.

:class:`SimulTextAgent` is the text-in variant (text MT models, policies that run on text
such as ``wait_k_text``; SimulEval sends a source word per call)::

    simuleval --agent-class simul.decoding.simuleval_agent.SimulTextAgent \\
        --model mt_transformer_bpe_en-de --policy wait_k_text --set k=3 \\
        --source source.txt --target target.txt --output OUT

(``source.txt``: one source sentence per line, ``simul corpus simuleval --text`` writes it).
"""

from __future__ import annotations

from argparse import ArgumentParser, Namespace

import numpy as np
from simuleval.agents import ReadAction, SpeechToTextAgent, WriteAction
from simuleval.utils import entrypoint

from simul.decoding.session import Session, Update, check_fit
from simul.decoding.text import TextSession
from simul.models import loader, registry
from simul.models.adapter import SAMPLE_RATE
from simul.policies import Policy, make, parse_settings


@entrypoint
class SimulAgent(SpeechToTextAgent):
    """simul's streaming session (``--model``, ``--policy``, ``--set``) as a SimulEval agent:
    one :class:`~simul.decoding.session.Session` per sentence, fed the samples new at each call."""

    def __init__(self, args: Namespace | None = None, *, model=None) -> None:
        # the per-sentence state first: GenericAgent.__init__ calls reset()
        self._session: Session | None = None
        self._consumed = 0  # samples of states.source already pushed into the session
        self._draining = False  # output finished before the source: take the rest unread
        settings = parse_settings(getattr(args, "set", None))
        self.policy_name = getattr(args, "policy", None) or "offline"
        self.policy_settings = settings
        make(self.policy_name, settings)  # refuse a bad policy or setting now, not mid-run
        self.model_name = str(getattr(args, "model", None) or "")
        self._record = None  # the model's record, once resolved
        device = getattr(args, "device", None) or "cpu"
        if model is None:
            if not self.model_name:
                raise ValueError("--model is required: a shipped model "
                                 f"({', '.join(registry.shipped()) or 'none yet'}), a directory "
                                 "or a Hub repo id")
            self._record = registry.model(self.model_name)  # resolved once: `to` reloads it
            model = loader.load(self._record, device)
        self.model = model
        check_fit(model, make(self.policy_name, settings))  # a policy the model cannot serve
        super().__init__(args)
        self.device = device

    @staticmethod
    def add_args(parser: ArgumentParser) -> None:
        parser.add_argument("--model", required=True,
                            help="shipped model name (data/models/), ESPnet2 ST or "
                                 "transformers Speech2Text model dir, or Hub repo id")
        parser.add_argument("--policy", default="offline", help="see `simul policies`")
        parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                            help="policy setting, e.g. --set k=3 (repeatable)")
        # --device is SimulEval's own option (default cpu); the model is loaded on it

    def to(self, device: str, *args, fp16: bool = False, **kwargs) -> SimulAgent:
        """SimulEval's ``--device`` (``--fp16``/``--dtype fp16`` are refused: simul decodes
        in float32)."""
        if fp16:
            raise ValueError("simul decodes in float32: drop --fp16 / --dtype fp16")
        if device != self.device:
            if not self.model_name:
                raise ValueError(f"the model was given on {self.device}; load it on {device}")
            self.model = loader.load(self._record or self.model_name, device)
            self.device = device
        return self

    def new_policy(self) -> Policy:
        """A fresh policy for the next sentence (``--policy`` with its ``--set`` settings)."""
        return make(self.policy_name, self.policy_settings)

    def new_session(self) -> Session:
        """A session for the next sentence."""
        return Session(self.model, self.new_policy())

    def push_source(self, new) -> Update:
        """Push the source new since the last call (samples) into the session."""
        # the session refuses audio at another rate than 16 kHz (StreamError says so)
        return self._session.push(np.asarray(new, dtype=np.float32),
                                  sample_rate=self.states.source_sample_rate or SAMPLE_RATE,
                                  last=self.states.source_finished)

    def reset(self) -> None:
        super().reset()
        if not self._draining:
            self._session, self._consumed = None, 0

    def policy(self):
        states = self.states
        if self._draining:
            # SimulEval reset the agent when the output finished, but this is still the same
            # sentence's source: keep the output finished until that source ends
            if states.source_finished:
                self._draining = False
            return WriteAction("", finished=True)
        if self._session is None:
            self._session = self.new_session()
            self._consumed = 0
        new = states.source[self._consumed:]
        self._consumed = len(states.source)
        if not new and not self._session.received_ms and states.source_finished:
            return WriteAction("", finished=True)  # an empty source: nothing to translate
        update = self.push_source(new)
        if update.finished and not states.source_finished:
            self._draining = True
        if update.words or update.finished:
            return WriteAction(update.text, finished=update.finished)
        return ReadAction()


class SimulTextAgent(SimulAgent):
    """The text-in variant (SimulEval's ``text-text``): a text MT model (``--model``, e.g.
    ``mt_transformer_bpe_en-de``) and a policy that runs on text (``--policy wait_k_text``)
    in a :class:`~simul.decoding.text.TextSession`, fed the source words SimulEval sends one per
    call. A word written after the W-th source word arrived has SimulEval's delay W, which
    is simul's own (:mod:`simul.decoding.text`): the predictions, delays and scores are those of
    ``simul decode`` with that policy. ``--source`` lists one source sentence per line.
    Name it with ``--agent-class simul.decoding.simuleval_agent.SimulTextAgent`` (``--agent FILE``
    takes the speech agent, the module's SimulEval entry point)."""

    source_type = "text"
    target_type = "text"

    def new_session(self) -> TextSession:
        return TextSession(self.model, self.new_policy())

    def push_source(self, new) -> Update:
        return self._session.push(list(new), last=self.states.source_finished)
