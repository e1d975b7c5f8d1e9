"""Adapter over transformers' Speech2Text models (fairseq S2T): the seam policies talk to.

The second model family beside ESPnet2's (:mod:`simul.models.adapters.espnet_st`), with the
same calls (:class:`simul.models.adapter.Adapter`) in the same plain types
(:class:`~simul.models.adapter.Encoded`, :class:`~simul.models.adapter.DecoderState`,
:class:`~simul.models.adapter.Hyp`), so that every policy that needs only encoder prefixes
and decoder steps runs on it: wait-k over frames (Nguyen et al. 2021) and over
fixed-duration words (Papi et al. 2022), the pre-decision module (Ma et al. 2020),
onlinization with its beam (Polák et al. 2022), catch-up (Han et al. 2020), offline
decoding, and the cross-attention policies AlignAtt and EDAtt. What the model does not have
is refused in one line: a source-language CTC (Papi et al.'s adaptive word detection) and
monotonic attention heads (the ``mma`` policy).

A model directory holds what ``facebook/s2t-small-mustc-en-de-st`` publishes: ``config.json``
(``model_type: speech_to_text``), ``preprocessor_config.json`` (the
``Speech2TextFeatureExtractor``: 80 Kaldi filterbanks every 10 ms, utterance-level mean and
variance normalisation), the weights (``pytorch_model.bin`` or ``model.safetensors``),
``sentencepiece.bpe.model``, ``vocab.json`` and ``tokenizer_config.json``.

- :meth:`HFSpeech2Text.encode`: the features of an audio prefix computed on that prefix
  alone (its normalisation statistics too: no look-ahead), then the encoder (two strided
  convolutions, 40 ms per encoder frame).
- :meth:`HFSpeech2Text.step`: one or more decoder positions with an explicit state, the
  self-attention keys and values of the positions consumed (the library's own cache
  classes, rebuilt at every call from plain tensors, so states never change under a
  caller). A state may come from another encoder output (decoder-state reuse, Nguyen et
  al. 2021 eq. 2): its positions keep what they computed then; the cross-attention keys and
  values are those of the encoder output the call is given (made once per encoder output).
- :meth:`HFSpeech2Text.greedy`, :meth:`HFSpeech2Text.beam_search`: greedy continuation of a
  forced prefix, and the library's own beam search (``generate``, with the model's
  ``generation_config`` but for the beam, the n-best and the length cap) continued from it.
  With an empty prefix both give exactly ``model.generate``'s tokens (tested).
- :meth:`HFSpeech2Text.cross_attention`: the encoder-decoder attention of one decoder layer.

Units are the SentencePiece pieces of ``vocab.json`` (``unit_type`` ``"bpe"``); the output
length is capped as for ESPnet's models (``maxlenratio`` × encoder frames, 0: as many units
as encoder frames). transformers is an optional dependency (``pip install simul[hub]``),
imported when a model is loaded.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from simul.metrics import units
from simul.models import device as devices
from simul.models import registry
from simul.models.adapter import (
    SAMPLE_RATE,
    DecoderState,
    Encoded,
    Hyp,
    ModelError,
    greedy_continuation,
    length_cap,
)

WINDOW_SAMPLES = 400
"""Samples of one Kaldi filterbank frame (25 ms): a shorter prefix has no features."""

WEIGHTS = registry.S2T_WEIGHTS
"""The weight files transformers reads, in its order of preference."""

FILES = registry.S2T_FILES
"""The files a Speech2Text directory needs beside its weights."""


def _transformers():
    """transformers, quiet, or a one-line :class:`ModelError` saying how to install it."""
    try:
        import transformers
    except ImportError:
        raise ModelError("a transformers Speech2Text model needs transformers: "
                         "pip install 'simul[hub]'") from None
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    return transformers


def files(directory: str | Path) -> list[Path]:
    """The files that make a Speech2Text model (its checksum's inputs): :data:`FILES`, then
    the weights (:func:`simul.models.registry.s2t_files`). Raises :class:`ModelError`
    naming what is missing."""
    try:
        return registry.s2t_files(directory)
    except ValueError as e:
        raise ModelError(str(e)) from None


class HFSpeech2Text:
    """A transformers ``Speech2TextForConditionalGeneration`` behind simul's adapter calls."""

    kind = "st"  # speech in, text out (Policy.runs_on)
    decoder_name = "speech_to_text"  # not transformer_mma: the mma policy refuses it

    def __init__(self, directory: str | Path, device: str = "cpu"):
        """Load the model in ``directory`` on ``device`` (``cpu``, ``cuda``, ``cuda:N``)."""
        if devices.is_cuda(device):
            device = devices.check(device, f"device {device}")
        directory = Path(directory)
        files(directory)
        tf = _transformers()
        self.config_path = directory / "config.json"
        try:
            self.model = tf.Speech2TextForConditionalGeneration.from_pretrained(
                directory, dtype=torch.float32).to(device).eval()
            self.features = tf.Speech2TextFeatureExtractor.from_pretrained(directory)
            self.tokenizer = tf.Speech2TextTokenizer.from_pretrained(directory)
        except (OSError, ValueError, KeyError) as e:
            raise ModelError(f"{directory}: transformers cannot load it as a Speech2Text "
                             f"model ({str(e).splitlines()[0]})") from None
        conf = self.model.config
        if getattr(self.features, "sampling_rate", SAMPLE_RATE) != SAMPLE_RATE:
            raise ModelError(f"{directory / 'preprocessor_config.json'}: field 'sampling_rate'"
                             f": {self.features.sampling_rate}; simul streams {SAMPLE_RATE} Hz")
        self.device = device
        self.model_file = next(directory / w for w in WEIGHTS if (directory / w).is_file())
        vocab = json.loads((directory / "vocab.json").read_text())
        names = {i: piece for piece, i in vocab.items()}
        self.token_list: list[str] = [names.get(i, f"<unused{i}>")
                                      for i in range(conf.vocab_size)]
        self.src_token_list = None  # no source-language CTC
        self.sos, self.eos = int(conf.decoder_start_token_id), int(conf.eos_token_id)
        self.pad = int(conf.pad_token_id)
        self._special = {self.sos, self.eos, self.pad, *self.tokenizer.all_special_ids}
        self.unit_type = "bpe"  # SentencePiece pieces ("▁" begins a word)
        self.src_unit = "bpe"
        self.subsampling = 2 ** int(conf.num_conv_layers)  # feature frames per encoder frame
        self.hop_ms = 10.0  # Kaldi filterbanks every 10 ms

    @classmethod
    def from_dir(cls, directory: str | Path, device: str = "cpu") -> HFSpeech2Text:
        return cls(directory, device)

    # ------------------------------------------------------------------ encoder
    def _features(self, audio: np.ndarray) -> np.ndarray:
        """(T, 80) features of ``audio`` alone, as the model's feature extractor computes
        them; a constant filterbank channel (digital silence), whose variance is 0, is
        normalised to 0 (fairseq floors the variance; transformers divides by it)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            feats = self.features(np.asarray(audio, dtype=np.float32),
                                  sampling_rate=SAMPLE_RATE, return_tensors="np",
                                  return_attention_mask=False)["input_features"][0]
        return np.nan_to_num(feats, nan=0.0, posinf=0.0, neginf=0.0)

    @torch.inference_mode()
    def encode(self, audio: np.ndarray | torch.Tensor) -> Encoded:
        """Encode an audio prefix (float samples at 16 kHz) on its own."""
        return self.encode_batch([audio])[0]

    @torch.inference_mode()
    def encode_batch(self, audios: list[np.ndarray | torch.Tensor]) -> list[Encoded]:
        """Encode prefixes of the same length of one or several utterances in one call
        (:mod:`simul.sweep.lockstep`); each is normalised on its own."""
        arrays = [np.asarray(a, dtype=np.float32) for a in audios]
        n = arrays[0].shape[0] if arrays else 0
        if any(a.shape[0] != n for a in arrays):
            raise ValueError(f"encode_batch: prefixes of one length, got "
                             f"{sorted({a.shape[0] for a in arrays})} samples")
        if n < WINDOW_SAMPLES:  # not one filterbank frame
            dim = int(self.model.config.d_model)
            return [Encoded(torch.zeros(0, dim, device=self.device), n) for _ in arrays]
        x = torch.from_numpy(np.stack([self._features(a) for a in arrays])).to(self.device)
        states = self.model.model.encoder(input_features=x).last_hidden_state  # (B, T_enc, D)
        outs = ([Encoded(states[0], n)] if len(arrays) == 1 else
                [Encoded(states[i].clone(), n) for i in range(len(arrays))])
        for out in outs:  # the cross-attention's keys and values, charged to encoding
            self._cross_kv(out)
        return outs

    # ------------------------------------------------------------------ decoder
    def _cache(self, self_kv, cross_kv):
        from transformers.cache_utils import DynamicCache, EncoderDecoderCache

        return EncoderDecoderCache(DynamicCache(self_kv) if self_kv else DynamicCache(),
                                   DynamicCache(cross_kv) if cross_kv else DynamicCache())

    def _positions(self, enc: Encoded, self_kv, tokens: list[int]):
        """Decode the positions of ``tokens`` after those in ``self_kv`` over ``enc``:
        (log-probabilities of the unit after each, (n, V); the self-attention keys and
        values of all positions)."""
        cross = enc.derived.get("cross_kv")
        cache = self._cache(self_kv, cross)
        out = self.model.model.decoder(
            input_ids=torch.tensor([tokens], device=self.device),
            encoder_hidden_states=enc.states.unsqueeze(0), cache=cache, use_cache=True)
        if cross is None:
            enc.derived["cross_kv"] = [(layer.keys, layer.values)
                                       for layer in cache.cross_attention_cache.layers]
        logits = self.model.lm_head(out.last_hidden_state[0])  # (n, V)
        return (torch.log_softmax(logits.float(), dim=-1),
                [(layer.keys, layer.values) for layer in cache.self_attention_cache.layers])

    def _cross_kv(self, enc: Encoded) -> None:
        """The cross-attention keys and values of ``enc``, made once per encoder output by
        the library's decoder (a first step from <s>, whose result is kept for the step
        that asks for it)."""
        if enc.frames and "cross_kv" not in enc.derived:
            logp, kv = self._positions(enc, None, [self.sos])
            enc.derived["first_step"] = (logp[-1], kv)

    @torch.inference_mode()
    def step(self, enc: Encoded, state: DecoderState | None = None,
             tokens: list[int] | None = None) -> tuple[torch.Tensor, DecoderState]:
        """Log-probabilities of the next unit after ``tokens`` (forced prefix, no <s>).

        With ``state`` (from an earlier call) only the new tokens are consumed, over
        ``enc``; ``state`` may come from another encoder output (Nguyen et al. 2021, eq. 2).
        Without it the whole prefix is decoded over ``enc``."""
        want = [self.sos, *(tokens if tokens is not None else state.tokens[1:])]
        if state is None:  # from <s>: the first step made with the cross-attention's cache
            if not enc.frames:
                raise ModelError(f"{self.config_path}: no encoder states to decode from")
            self._cross_kv(enc)
            logp, kv = enc.derived["first_step"]
            state = DecoderState([self.sos], kv, logp)
        if want[: len(state.tokens)] != state.tokens:
            raise ValueError("tokens must extend the tokens the state has consumed")
        new = want[len(state.tokens):]
        if not new:
            return state.logp, state
        logp, kv = self._positions(enc, state.state, new)
        return logp[-1], DecoderState(want, kv, logp[-1])

    def max_length(self, enc: Encoded, maxlenratio: float = 0.0) -> int:
        """The output-length cap: T_enc when ``maxlenratio`` is 0 (ESPnet's,
        :func:`simul.models.adapter.length_cap`)."""
        return length_cap(enc.frames, maxlenratio)

    @torch.inference_mode()
    def greedy(self, enc: Encoded, prefix: list[int] = (), *, max_new: int | None = None,
               maxlenratio: float = 0.0, avoid_eos: bool = False,
               state: DecoderState | None = None) -> Hyp:
        """Greedy continuation of ``prefix``: argmax until </s>, ``max_new`` units, or the
        cap; ``avoid_eos`` takes the best unit but </s> (Papi et al. 2022, App. A);
        ``state`` (a previous :attr:`Hyp.resume`) reuses a decoder state (Nguyen et al.
        2021, eq. 2). The loop of every offline decoder,
        :func:`simul.models.adapter.greedy_continuation`, over :meth:`step`."""
        return greedy_continuation(self, enc, prefix, max_new=max_new, maxlenratio=maxlenratio,
                                   avoid_eos=avoid_eos, state=state)

    def prefix_memory(self, clock: Callable[[], float],
                      charge: Callable[[float], None]) -> None:
        """None: its decoder steps resume from no memory shared between callers
        (:meth:`simul.models.adapter.Adapter.prefix_memory`)."""
        return None

    @torch.inference_mode()
    def beam_search(self, enc: Encoded, prefix: list[int] = (), *, beam: int = 5,
                    nbest: int | None = None, maxlenratio: float = 0.0) -> list[Hyp]:
        """The library's beam search (``generate`` with the model's generation settings:
        its length penalty and early stopping) continued from a forced ``prefix``; n-best,
        best first. ``score``: the library's (length-normalised) sequence score."""
        prefix = list(prefix)
        if enc.frames == 0:
            return [Hyp([], 0.0, ended=False)]
        cap = self.max_length(enc, maxlenratio) - len(prefix)
        if cap <= 0:
            return [Hyp([], 0.0, ended=False, capped=True)]
        nbest = min(nbest or beam, beam)
        from transformers.modeling_outputs import BaseModelOutput

        out = self.model.generate(  # over the encoder output given, not recomputed
            encoder_outputs=BaseModelOutput(last_hidden_state=enc.states.unsqueeze(0)),
            decoder_input_ids=torch.tensor([[self.sos, *prefix]], device=self.device),
            num_beams=beam, num_return_sequences=nbest, max_new_tokens=cap, min_length=0,
            do_sample=False, output_scores=True, return_dict_in_generate=True)
        scores = (out.sequences_scores.tolist() if getattr(out, "sequences_scores", None)
                  is not None else [0.0] * len(out.sequences))
        hyps = []
        for seq, score in zip(out.sequences.tolist(), scores, strict=True):
            new = seq[1 + len(prefix):]
            ended = self.eos in new
            new = new[: new.index(self.eos)] if ended else [t for t in new if t != self.pad]
            hyps.append(Hyp(new, float(score), ended=ended, capped=not ended and len(new) >= cap))
        return hyps

    # ------------------------------------------------------------------ CTC, attention
    def ctc_greedy(self, enc: Encoded) -> list[int]:
        raise ModelError(f"{self.config_path}: a Speech2Text model has no source-language "
                         "CTC (adaptive word detection needs one: use detection=fixed)")

    def ctc_words(self, enc: Encoded) -> list[str]:
        return self.ctc_greedy(enc)

    @torch.inference_mode()
    def cross_attention(self, enc: Encoded, tokens: list[int], layer: int = -1) -> torch.Tensor:
        """Encoder-decoder attention of decoder ``layer`` for predicting each unit after
        <s>+``tokens``: (len(tokens) + 1, T_enc), averaged over heads."""
        ids = torch.tensor([[self.sos, *tokens]], device=self.device)
        out = self.model.model.decoder(input_ids=ids, encoder_hidden_states=enc.states[None],
                                       output_attentions=True, use_cache=False)
        return out.cross_attentions[layer][0].mean(0).clone()  # (H, L, T) → (L, T)

    # ------------------------------------------------------------------ units and text
    def detokenize(self, ids: list[int]) -> str:
        """Unit ids → text, words separated by single spaces (special units left out)."""
        return units.text([self.token_list[i] for i in ids if i not in self._special],
                          self.unit_type)

    def encode_text(self, text: str) -> list[int]:
        """Target text → unit ids (for forced prefixes in tests and tools)."""
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
