"""Adapter over an ESPnet2 speech-translation model, behind the seam policies talk to.

One object wraps one ESPnet2 ``ESPnetSTModel`` (any encoder; Transformer or RNN decoder)
and exposes what simultaneous policies need (:class:`simul.models.adapter.Adapter`), in
the seam's plain types (:class:`~simul.models.adapter.Encoded`,
:class:`~simul.models.adapter.DecoderState`, :class:`~simul.models.adapter.Hyp`):

- :meth:`encode` — features and encoder states of an audio *prefix* (no look-ahead: the
  prefix is featurized on its own, exactly as a streaming system would),
- :meth:`step` — one decoder step with an explicit state, :meth:`greedy` — greedy
  continuation of a forced prefix with a token budget, :meth:`beam_search` — ESPnet's own
  beam search continued from a forced prefix (n-best),
- :meth:`ctc_greedy` — the source-language CTC's greedy transcript (:meth:`ctc_words`),
- :meth:`cross_attention` — source-attention weights of one decoder layer,
- units ↔ text (:meth:`detokenize`, :meth:`encode_text`) and the unit type
  (:attr:`unit`: ``"char"`` or ``"bpe"``), whose word boundaries :mod:`simul.metrics.units`
  defines.

ESPnet is imported on first use (quietly, see :mod:`simul.models.espnet_env`): importing
this module imports none of it, so code that only names its types stays light. Decoding
runs under ``torch.inference_mode`` in eval mode. With an empty prefix, :meth:`greedy` and
:meth:`beam_search` give exactly the tokens of ESPnet's ``Speech2Text`` (tested).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import yaml

from simul.metrics import units
from simul.models import device as devices
from simul.models import hub, parent
from simul.models.adapter import (
    SAMPLE_RATE,
    DecoderState,
    Encoded,
    Hyp,
    ModelError,
    greedy_continuation,
    length_cap,
)
from simul.models.espnet_env import import_espnet
from simul.models.extensions import decoder_scorers

# the seam's names (simul.models.adapter) stay importable from here, where they were defined
__all__ = ["SAMPLE_RATE", "DecoderState", "ESPnetST", "Encoded", "Hyp", "ModelError",
           "PrefixMemory", "load_weights", "read_config", "resolve_model_dir"]


@dataclass
class _PrefixNode:
    """One remembered Transformer decoder step: ``rows`` is each layer's output at its
    position (ESPnet's cache holds them, position after position), ``logp`` the next unit's
    log-probabilities, ``ms`` what the step took; ``children`` by the unit consumed next."""

    rows: list = field(default_factory=list)
    logp: torch.Tensor | None = None
    ms: float = 0.0
    children: dict = field(default_factory=dict)

    def add(self, unit: int, cache: list[torch.Tensor], logp: torch.Tensor,
            ms: float) -> _PrefixNode:
        node = _PrefixNode([c[:, -1:].clone() for c in cache], logp, ms)
        self.children[unit] = node
        return node


class PrefixMemory:
    """The Transformer decoder steps taken from scratch over one encoder output, as a tree
    of unit prefixes (<sos> first). A sweep's settings re-decode their committed units over
    the same encoder outputs (:mod:`simul.sweep.calls` gives each one it shares a memory
    made by :meth:`ESPnetST.prefix_memory`, in ``Encoded.derived["prefixes"]``), and their
    prefixes often agree: a setting resumes from the longest prefix decoded before. Resuming
    rebuilds ESPnet's cache from the rows it was made of, so the steps that follow are those
    computed from scratch, bit for bit (tested). ``clock`` times each step; ``charge(ms)``
    is told what the steps resumed from cost when they were computed, so that
    computation-aware latency stays what the setting would have spent alone."""

    def __init__(self, clock: Callable[[], float], charge: Callable[[float], None]):
        self.clock, self.charge = clock, charge
        self.root = _PrefixNode()

    def replay(self, want: list[int]) -> tuple[_PrefixNode, DecoderState]:
        """The node of the longest remembered prefix of ``want`` and the state after it."""
        path, node = [], self.root
        while len(path) < len(want) and want[len(path)] in node.children:
            node = node.children[want[len(path)]]
            path.append(node)
        if not path:
            return node, DecoderState([], None)
        self.charge(sum(n.ms for n in path))
        cache = [torch.cat([n.rows[i] for n in path], dim=1) for i in range(len(path[0].rows))]
        return node, DecoderState(want[: len(path)], cache, path[-1].logp)


def _find(model_dir: Path, value: str | None) -> str | None:
    """Resolve a path stored in config.yaml: as is, relative to the model directory or its
    parents (ESPnet model-zoo archives store paths relative to the unpack root), or by name."""
    if not value:
        return value
    p = Path(value)
    if p.is_absolute() and p.is_file():
        return str(p)
    for base in (model_dir, *list(model_dir.parents)[:3]):
        if (base / p).is_file():
            return str(base / p)
    found = sorted(model_dir.rglob(p.name))
    return str(found[0]) if found else value


def read_config(config: Path) -> dict:
    """A model's config.yaml as a dict, or :class:`ModelError` naming the file (and, for a
    YAML syntax error, the line and column)."""
    from simul.models import registry

    try:
        return registry.read_yaml(config)
    except ValueError as e:
        raise ModelError(str(e)) from None


def _check_choices(task, conf: dict, config: Path) -> None:
    """Each class a config names (``encoder``, ``decoder``, ``frontend``, …) must be one the
    ESPnet task knows; ESPnet's own message names a command-line flag simul does not have."""
    for choices in task.class_choices_list:
        if choices.name not in conf:
            continue
        value = conf[choices.name]
        known = [c for c in choices.choices() if c is not None]
        if value is None and choices.optional:
            continue
        if not isinstance(value, str) or value not in choices.classes:
            allowed = ", ".join(known) + (" or null" if choices.optional else "")
            raise ModelError(f"{config}: {choices.name}: {value!r} is not one of {allowed}")


def load_weights(model: torch.nn.Module, model_file: Path, device: str, *,
                 model_dir: Path) -> None:
    """Load ``model_file`` into ``model``, strictly: every parameter and buffer of the model
    its config describes must be in the file, and nothing else. ESPnet's own loader skips
    what is missing, so a model directory lacking modules (a child model copied without the
    simul.json that names its parent, a file of another architecture) would decode with
    those modules at their random initial values; here it is :class:`ModelError` naming
    the modules, with how many of their tensors the file lacks."""
    try:
        state = torch.load(model_file, map_location=device, weights_only=True)
    except Exception as e:  # torch raises many kinds for a file it cannot read
        raise ModelError(f"{model_file}: not a model file torch can load ({e})") from None
    if isinstance(state, dict) and isinstance(state.get("module"), dict):  # DeepSpeed's
        state = state["module"]
    if not isinstance(state, dict):
        raise ModelError(f"{model_file}: not a state dict (parameter name → tensor)")
    own = model.state_dict()
    missing = [k for k in own if k not in state]
    unexpected = [k for k in state if k not in own]
    child = parent.info(model_dir) is not None
    where = (f"{model_dir}: its model file with its parent's modules (simul.json)" if child
             else f"{model_dir}: {Path(model_file).name}")
    if missing:
        counts: dict[str, list[int]] = {}
        for key in own:
            n = counts.setdefault(key.split(".")[0], [0, 0])
            n[1] += 1
            n[0] += key in missing
        lacking = ", ".join(f"{m} ({a} of its {b} tensors)" for m, (a, b) in counts.items()
                            if a)
        hint = ("" if child else "; a model that ships only what it changed needs the "
                "simul.json that names its parent")
        raise ModelError(f"{where} lacks modules of the model config.yaml describes: "
                         f"{lacking}{hint}")
    if unexpected:
        modules = sorted({k.split(".")[0] for k in unexpected})
        raise ModelError(f"{where} holds {len(unexpected)} tensor(s) the model config.yaml "
                         f"describes has no place for (in {', '.join(modules)}, e.g. "
                         f"{unexpected[0]}): not this config's model")
    mismatched = [k for k in own if tuple(own[k].shape) != tuple(state[k].shape)]
    if mismatched:
        k = mismatched[0]
        raise ModelError(f"{where}: {k} has shape {tuple(state[k].shape)}, config.yaml's model "
                         f"{tuple(own[k].shape)} ({len(mismatched)} tensors differ)")
    model.load_state_dict(state, strict=True)


def resolve_model_dir(model_dir: str | Path) -> tuple[Path, Path]:
    """(config.yaml, model .pth) of an ESPnet2 ST model directory
    (:func:`simul.models.registry.model_files`), a child model's .pth completed from its
    parent's (:func:`simul.models.parent.assembled`), or :class:`ModelError`."""
    from simul.models import registry

    try:
        config, model_file = registry.model_files(model_dir)
    except hub.HubError:
        raise
    except ValueError as e:
        raise ModelError(str(e)) from None
    return config, parent.assembled(Path(model_dir), model_file)


class ESPnetST:
    """An ESPnet2 ST model behind simul's adapter interface."""

    TASK = ("espnet2.tasks.st", "STTask")  # the ESPnet task that builds the model
    kind = "st"  # speech in, text out (Policy.runs_on says which kind a policy decodes)

    @staticmethod
    def _check_config(conf: dict, config: Path) -> None:
        if "src_token_list" not in conf and "asr_weight" not in conf.get("model_conf", {}):
            raise ModelError(
                f"{config}: no field 'src_token_list' or 'model_conf.asr_weight' — "
                "this is not an ESPnet2 speech-translation (ST) config"
            )

    def __init__(self, config: str | Path, model_file: str | Path, device: str = "cpu"):
        """Load the model on ``device`` (torch's name: ``cpu``, ``cuda``, ``cuda:N``; a CUDA
        device torch cannot reach is refused first, :func:`simul.models.device.check`)."""
        if devices.is_cuda(device):
            device = devices.check(device, f"device {device}")
        config, model_file = Path(config), Path(model_file)
        conf = read_config(config)
        for key in ("token_list", "encoder", "decoder"):
            if key not in conf:
                raise ModelError(f"{config}: field {key!r} missing — not an ESPnet2 model config")
        self._check_config(conf, config)
        model_dir = config.parent
        for key in ("bpemodel", "src_bpemodel"):
            conf[key] = _find(model_dir, conf.get(key))
        norm = conf.get("normalize_conf") or {}
        if "stats_file" in norm:
            norm["stats_file"] = _find(model_dir, norm["stats_file"])
        task = getattr(import_espnet(self.TASK[0]), self.TASK[1])
        _check_choices(task, conf, config)
        with tempfile.TemporaryDirectory() as tmp:
            resolved = Path(tmp) / "config.yaml"
            resolved.write_text(yaml.safe_dump(conf, allow_unicode=True))
            try:  # the weights are loaded below, strictly (ESPnet's loader is not)
                model, args = task.build_model_from_file(resolved, None, device)
            except (TypeError, ValueError, KeyError) as e:  # a *_conf ESPnet's class refuses
                raise ModelError(f"{config}: ESPnet cannot build the model it describes "
                                 f"({type(e).__name__}: {e})") from None
        load_weights(model, model_file, device, model_dir=model_dir)
        for module in model.encoder.modules():
            if type(module).__name__ == "RNNP":  # its F.dropout ignores eval(): switch it off
                module.dropout = 0.0
        self.model = model.eval()
        self.args = args
        self.device = device
        self.config_path = config
        self.model_file = model_file
        self.token_list: list[str] = list(model.token_list)
        src = getattr(model, "src_token_list", None) or conf.get("src_token_list")
        self.src_token_list: list[str] | None = list(src) if src is not None else None
        self.sos, self.eos = model.sos, model.eos
        self.unit_type = units.espnet_unit_type(args.token_type)  # target units
        self.src_unit = units.espnet_unit_type(getattr(args, "src_token_type", "bpe"))
        self._sp = None
        if conf.get("bpemodel") and Path(conf["bpemodel"]).is_file():
            import sentencepiece as spm

            self._sp = spm.SentencePieceProcessor(model_file=conf["bpemodel"])
        self._att_x: torch.Tensor | None = None
        # use_decoder_scorers: decoder steps by simul.models.extensions.decoder_scorers (beam
        # search over
        # Transformer decoders with key/value caches, Transformer decoders' greedy steps
        # without projecting the encoder output again at every step, RNN decoders' greedy
        # steps without ESPnet's module plumbing), same outputs as ESPnet's, faster;
        # stop_early: the beam search stops once its n-best list is settled. Both False:
        # ESPnet's own decoding
        self.use_decoder_scorers = True
        self._rnn_scorer = decoder_scorers.supports_rnn(model.decoder)
        self._transformer_scorer = decoder_scorers.supports_transformer(model.decoder)
        self.stop_early = True

    @classmethod
    def from_dir(cls, model_dir: str | Path, device: str = "cpu") -> ESPnetST:
        config, model_file = resolve_model_dir(model_dir)
        return cls(config, model_file, device)

    def prefix_memory(self, clock: Callable[[], float],
                      charge: Callable[[float], None]) -> PrefixMemory | None:
        """A :class:`PrefixMemory` for one encoder output that several callers share
        (:mod:`simul.sweep.calls`), or None when :meth:`step` does not resume from one (an
        RNN decoder, ESPnet's own decoding)."""
        if self.use_decoder_scorers and self._transformer_scorer:
            return PrefixMemory(clock, charge)
        return None

    # ------------------------------------------------------------------ encoder
    @property
    def subsampling(self) -> int:
        """Feature frames (10 ms) per encoder frame."""
        conf = self.args.encoder_conf or {}
        layer = conf.get("input_layer", "conv2d")
        table = {"conv2d": 4, "conv2d2": 2, "conv2d6": 6, "conv2d8": 8, "linear": 1,
                 "embed": 1, "vgg2l": 4}
        if self.args.encoder == "rnn" or self.args.encoder == "vgg_rnn":
            sub = conf.get("subsample", [1])
            return int(np.prod(sub)) * (4 if self.args.encoder == "vgg_rnn" else 1)
        return table.get(layer, 4)

    @property
    def hop_ms(self) -> float:
        hop = (self.args.frontend_conf or {}).get("hop_length", 160)
        return 1000.0 * hop / SAMPLE_RATE

    @torch.inference_mode()
    def encode(self, audio: np.ndarray | torch.Tensor) -> Encoded:
        """Encode an audio prefix (float samples at 16 kHz) on its own."""
        return self.encode_batch([audio])[0]

    @torch.inference_mode()
    def encode_batch(self, audios: list[np.ndarray | torch.Tensor]) -> list[Encoded]:
        """Encode prefixes of the same length (samples) of one or several utterances in one
        call (:mod:`simul.sweep.lockstep`).

        With several, each output is what encoding its prefix alone gives up to float
        rounding: the batched matrix products may round differently from one utterance's
        (≈ 1e-6 on the encoder states). Prefixes too short to encode give empty outputs."""
        x = torch.stack([torch.as_tensor(np.asarray(a, dtype=np.float32)) for a in audios])
        x = x.to(self.device)
        b, n = int(x.shape[0]), int(x.shape[1])
        if any(len(a) != n for a in audios):
            raise ValueError(f"encode_batch: prefixes of one length, got "
                             f"{sorted({len(a) for a in audios})} samples")
        empty = [Encoded(torch.zeros(0, self._enc_dim(), device=self.device), n)
                 for _ in range(b)]
        n_fft = (self.args.frontend_conf or {}).get("n_fft", 512)
        if n <= n_fft // 2:  # the STFT's reflection padding needs more than n_fft/2 samples
            return empty
        too_short = import_espnet("espnet.nets.pytorch_backend.transformer.subsampling")
        try:
            enc, lens = self.model.encode(x, torch.full((b,), n, device=self.device))
        except too_short.TooShortUttError:  # fewer frames than the subsampling needs
            return empty
        if isinstance(enc, tuple):
            enc = enc[0]
        # one utterance keeps a view; several are copied out so that each output holds
        # only its own states
        outs = [Encoded(enc[0, : int(lens[0])], n)] if b == 1 else [
            Encoded(enc[i, : int(lens[i])].clone(), n) for i in range(b)]
        for out in outs:
            self._derive(out)
        return outs

    def _derive(self, enc: Encoded) -> Encoded:
        """Compute what the decoder derives from ``enc`` alone (the RNN attention's
        projection, the Transformer source attention's keys and values) as part of encoding,
        so that a sweep sharing this output charges it to every setting that reads it
        (computation-aware latency stays honest)."""
        if self.use_decoder_scorers and enc.frames:
            if self._rnn_scorer:
                self._rnn_keys(enc)
            elif self._transformer_scorer:
                self._memory_kv(enc)
        return enc

    def _rnn_keys(self, enc: Encoded) -> torch.Tensor:
        """The RNN attention's projection of ``enc``, made once per encoder output."""
        if "rnn_attention_keys" not in enc.derived:
            enc.derived["rnn_attention_keys"] = decoder_scorers.rnn_attention_keys(
                self.model.decoder, enc.states)
        return enc.derived["rnn_attention_keys"]

    def _memory_kv(self, enc: Encoded) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """The Transformer source attention's keys and values of ``enc``, per layer, made once
        per encoder output."""
        if "memory_kv" not in enc.derived:
            enc.derived["memory_kv"] = decoder_scorers.transformer_memory_kv(
                self.model.decoder, enc.states)
        return enc.derived["memory_kv"]

    def _enc_dim(self) -> int:
        return int(self.model.encoder.output_size())

    # ------------------------------------------------------------------ decoder
    def _reset_attention(self, x: torch.Tensor | None = None) -> None:
        """Clear the RNN attention's cache of projected encoder states; ``x`` is the
        encoder output the next calls use (held, and compared by identity, not by id():
        a freed tensor's id can be reused by the next prefix's output)."""
        for att in getattr(self.model.decoder, "att_list", []):
            att.reset()
        self._att_x = x

    @torch.inference_mode()
    def step(self, enc: Encoded, state: DecoderState | None = None,
             tokens: list[int] | None = None) -> tuple[torch.Tensor, DecoderState]:
        """Log-probabilities of the next unit after ``tokens`` (forced prefix, no <sos>).

        With ``state`` (from an earlier call) only the new tokens are consumed; ``state`` may
        come from another encoder output (decoder-state reuse, Nguyen et al. 2021 eq. 2) —
        cached positions then keep what they computed before. Without it the whole prefix
        is decoded over ``enc`` (re-decoding, Polák et al. 2022).
        """
        dec = self.model.decoder
        x = enc.states
        fast = self.use_decoder_scorers and self._rnn_scorer
        cached_kv = self.use_decoder_scorers and self._transformer_scorer
        if not fast and not cached_kv and (state is None or self._att_x is not x):
            self._reset_attention(x)
        want = [self.sos, *(tokens if tokens is not None else state.tokens[1:])]
        # re-decoding from scratch over an encoder output a sweep shares: start from the
        # longest prefix of want some setting decoded over it (PrefixMemory)
        memory = enc.derived.get("prefixes") if cached_kv and state is None else None
        node = None
        if memory is not None:
            node, state = memory.replay(want)
        elif state is None:
            state = DecoderState([], dec.init_state(x) if hasattr(dec, "init_state") else None)
        if want[: len(state.tokens)] != state.tokens:
            raise ValueError("tokens must extend the tokens the state has consumed")
        s, logp = state.state, state.logp
        for t in range(len(state.tokens), len(want)):  # one unit per call
            if fast:
                logp, s = decoder_scorers.rnn_score(dec, want[t], s, x, self._rnn_keys(enc))
            elif cached_kv:
                t0 = memory.clock() if memory is not None else 0.0
                logp, s = decoder_scorers.transformer_score(
                    dec, torch.tensor(want[: t + 1], device=self.device), s,
                    self._memory_kv(enc))
                if memory is not None:
                    node = node.add(want[t], s, logp, 1000.0 * (memory.clock() - t0))
            else:
                logp, s = dec.score(torch.tensor(want[: t + 1], device=self.device), s, x)
        return logp, DecoderState(want, s, logp)

    def max_length(self, enc: Encoded, maxlenratio: float = 0.0) -> int:
        """ESPnet's output-length cap (:func:`simul.models.adapter.length_cap`): T_enc when
        ``maxlenratio`` is 0."""
        return length_cap(enc.frames, maxlenratio)

    @torch.inference_mode()
    def greedy(self, enc: Encoded, prefix: list[int] = (), *, max_new: int | None = None,
               maxlenratio: float = 0.0, avoid_eos: bool = False,
               state: DecoderState | None = None) -> Hyp:
        """Greedy continuation of ``prefix``: argmax until EOS, ``max_new`` units, or the cap.

        ``avoid_eos`` takes the best non-EOS unit instead of EOS (Papi et al. 2022, App. A).
        ``state`` (a previous :attr:`Hyp.resume` for a prefix of ``prefix``) reuses the
        decoder state computed over an earlier encoder output (Nguyen et al. 2021, eq. 2):
        only the units it has not consumed are decoded, over ``enc``
        (:func:`simul.models.adapter.greedy_continuation` over :meth:`step`).
        """
        return greedy_continuation(self, enc, prefix, max_new=max_new, maxlenratio=maxlenratio,
                                   avoid_eos=avoid_eos, state=state)

    @torch.inference_mode()
    def beam_search(self, enc: Encoded, prefix: list[int] = (), *, beam: int = 5,
                    nbest: int | None = None, maxlenratio: float = 0.0) -> list[Hyp]:
        """ESPnet's beam search, continued from a forced ``prefix``; n-best, best first."""
        if enc.frames == 0:
            return [Hyp([], 0.0, ended=False)]
        search = self._beam_search(beam, enc)
        search.nbest = (nbest or beam) if self.stop_early else None
        prefix = list(prefix)
        primer = [self.sos, *prefix]
        search.set_hyp_primer(primer)
        if hasattr(self.model.decoder, "att_list"):
            search.forced_states = self._rnn_prefix_state(enc, primer)
        cap = self.max_length(enc, maxlenratio) - len(prefix)
        if cap <= 0:
            return [Hyp([], 0.0, ended=False, capped=True)]
        # no prefix and ratio 0: exactly Speech2Text's call (its end detection included)
        ratio = 0.0 if (not prefix and maxlenratio == 0) else -cap
        hyps = search(x=enc.states, maxlenratio=ratio, minlenratio=0.0)
        out = [Hyp([int(t) for t in h.yseq[len(primer):-1]], float(h.score), ended=True,
                   capped=len(h.yseq) - len(primer) - 1 >= cap) for h in hyps]
        return out[: nbest or beam]

    def _rnn_prefix_state(self, enc: Encoded, primer: list[int]):
        dec = self.model.decoder
        self._reset_attention()
        s = dec.init_state(enc.states)
        for t in range(1, len(primer)):
            _, s = dec.score(torch.tensor(primer[:t], device=self.device), s, enc.states)
        return s

    def _beam_search(self, beam: int, enc: Encoded | None = None):
        bs = import_espnet("espnet.nets.beam_search")
        bbs = import_espnet("espnet.nets.batch_beam_search")
        scorer_if = import_espnet("espnet.nets.scorer_interface")
        length_bonus = import_espnet("espnet.nets.scorers.length_bonus")
        decoder = self.model.decoder
        if enc is not None and self.use_decoder_scorers and self._transformer_scorer:
            # the source attention's keys and values made when encoding (the same values)
            decoder = decoder_scorers.CachedTransformerScorer(decoder, enc.states,
                                                              self._memory_kv(enc))
        scorers = {"decoder": decoder,
                   "length_bonus": length_bonus.LengthBonus(len(self.token_list))}
        weights = {"decoder": 1.0, "ctc": 0.0, "lm": 1.0, "ngram": 0.9, "length_bonus": 0.0}
        batch = all(isinstance(v, scorer_if.BatchScorerInterface) for v in scorers.values())
        base = bbs.BatchBeamSearch if batch else bs.BeamSearch
        search = _prefix_search_class(base)(
            beam_size=beam, weights=weights, scorers=scorers, sos=self.sos, eos=self.eos,
            vocab_size=len(self.token_list), token_list=self.token_list,
            pre_beam_score_key="full",
        )
        return search.to(device=self.device).eval()

    # ------------------------------------------------------------------ CTC, attention
    @torch.inference_mode()
    def ctc_greedy(self, enc: Encoded) -> list[int]:
        """Source-language CTC greedy units (repeats merged, blanks removed)."""
        ctc = getattr(self.model, "ctc", None)  # ESPnet leaves it out at asr_weight 0
        if ctc is None:
            raise ModelError(f"{self.config_path}: the model has no source-language CTC")
        if enc.frames == 0:
            return []
        ids = ctc.argmax(enc.states.unsqueeze(0))[0].tolist()
        return [unit for unit, _ in units.ctc_collapse(ids)]  # blank: ESPnet's id 0

    def ctc_words(self, enc: Encoded) -> list[str]:
        """Words of the source CTC transcript (its units are of type :attr:`src_unit`)."""
        if self.src_token_list is None:
            raise ModelError(f"{self.config_path}: the model has no source token list")
        pieces = [self.src_token_list[i] for i in self.ctc_greedy(enc)]
        return units.words(pieces, self.src_unit)

    @torch.inference_mode()
    def cross_attention(self, enc: Encoded, tokens: list[int], layer: int = -1) -> torch.Tensor:
        """Source attention of ``layer`` for predicting each unit after <sos>+``tokens``:
        (len(tokens) + 1, T_enc), averaged over heads."""
        dec = self.model.decoder
        ys = torch.tensor([[self.sos, *tokens]], device=self.device)
        x = enc.states.unsqueeze(0)
        if hasattr(dec, "decoders"):  # Transformer decoder
            dec.forward(x, torch.tensor([enc.frames], device=self.device), ys,
                        torch.tensor([ys.shape[1]], device=self.device))
            attn = dec.decoders[layer].src_attn.attn  # (1, H, L, T)
            return attn[0].mean(0).clone()
        self._reset_attention()
        s = dec.init_state(enc.states)
        rows = []
        for t in range(1, ys.shape[1] + 1):
            _, s = dec.score(ys[0, :t], s, enc.states)
            rows.append(s["a_prev"].reshape(-1)[: enc.frames])
        return torch.stack(rows)

    # ------------------------------------------------------------------ units and text
    def detokenize(self, ids: list[int]) -> str:
        """Target unit ids → text, words separated by single spaces (<sos/eos> and <blank>
        left out)."""
        pieces = [self.token_list[i] for i in ids if i not in (self.sos, self.eos, 0)]
        return units.text(pieces, self.unit_type)

    def encode_text(self, text: str) -> list[int]:
        """Target text → unit ids (for forced prefixes in tests and tools)."""
        if self.unit_type == "char":
            index = {t: i for i, t in enumerate(self.token_list)}
            return [index.get(units.CHAR_SPACE if c == " " else c, 1) for c in text]
        index = {t: i for i, t in enumerate(self.token_list)}
        return [index.get(p, 1) for p in self._sp.encode(text, out_type=str)]


def _prefix_search_class(base):
    """ESPnet beam search whose initial hypothesis carries a forced prefix (hyp_primer);
    for RNN decoders, which consume one unit per call, the prefix state is precomputed.

    It also stops as soon as the ``nbest`` best hypotheses are known: a hypothesis' score
    only decreases as it grows (a sum of log-probabilities; the length bonus has weight 0),
    so once ``nbest`` hypotheses have ended and every running one scores below the
    ``nbest``-th of them, no continuation can enter the n-best list. ESPnet otherwise runs
    on until every beam item has ended or the length cap is reached — a beam item caught
    in a repetition loop makes every search run to the cap. The n-best list returned is
    the one ESPnet's full search returns (tested)."""

    class PrefixBeamSearch(base):
        forced_states = None
        nbest: int | None = None  # None: ESPnet's own stopping only

        def init_hyp(self, x):
            hyps = super().init_hyp(x)
            if self.forced_states is not None:
                hyps[0].states["decoder"] = self.forced_states
            return hyps

        def post_process(self, i, maxlen, minlen, maxlenratio, running_hyps, ended_hyps):
            running = super().post_process(i, maxlen, minlen, maxlenratio, running_hyps,
                                           ended_hyps)
            if self.nbest is None or len(ended_hyps) < self.nbest or len(running) == 0:
                return running
            nth = sorted((float(h.score) for h in ended_hyps), reverse=True)[self.nbest - 1]
            batched = not isinstance(running, list)  # BatchHypothesis or list[Hypothesis]
            scores = running.score.tolist() if batched else [float(h.score) for h in running]
            if max(scores) < nth:
                return self._batch_select(running, []) if batched else []
            return running

    return PrefixBeamSearch
