"""``transformer_waitk``: ESPnet's Transformer decoder trained in simultaneous mode.

Papi et al. 2022 (§2) set their offline-trained models beside the same models trained for
simultaneous decoding: wait-k over source words (Ma et al. 2020b), where a target word may
only look at the audio of the first k + (its index) source words. In training, every target
position of the decoder attends only to the encoder frames of that audio; the rest of the
model (encoder, source CTC, losses) is ESPnet's own. Words are found by the fixed detection
of ``simul.policies.word_detection`` (one word per ``word_ms`` of audio, 280 ms as in Ma et
al. 2020b and P22's fixed strategy), so target word w (0-based) sees the frames of the
first (k + w) · word_ms ms, i.e. ⌊(k + w) · word_ms / frame_ms⌋ encoder frames
(``frame_ms``: the encoder's frame period, 80 ms for ``conv2d8``); the position that
predicts </s> sees every frame, as </s> is decoded once the whole input is read. This is
the schedule the ``wait_k_words`` policy decodes with (word w written once W(t) ≥ k + w).

``detection: adaptive`` detects the source words as P22's adaptive strategy does (§2.2;
its Fig. 2 systems): from the source-language CTC on the encoder, the greedy CTC
transcript of the whole utterance's encoder output, a word counted at the frame where its
first unit is emitted (:func:`simul.metrics.units.ctc_word_frames`, the rule the
``wait_k_words`` policy counts W(t) with at inference: the words of the CTC transcript
of what has been read, the last one possibly unfinished). Target word w (0-based) then sees
the frames read when the CTC has begun k + w words: up to and including the frame where
word k + w begins (the fixed schedule's "first (k + w) · word_ms ms", with the CTC's words
for the clock); every frame when the utterance has fewer words. The CTC is the model's own
(``ctc`` of ESPnet's ST model, ``asr_weight`` > 0), read with no gradient on this batch's
encoder output, so the detection moves as the encoder trains; :func:`register` hands it
to the decoder when ESPnet builds the model. Its units are the source units
(``src_units_file``, ``src_unit_type``; ``simul train`` sets them).

Target words follow :mod:`simul.metrics.units`: a SentencePiece unit beginning with "▁"
(or the first unit) begins a word; for characters, the unit after ``<space>`` does, and
``<space>`` itself goes with the word it closes.

``step: unit`` makes every target unit its own step, as Han et al. 2020 (§2.1) train wait-k
with a stride: unit t (0-based) sees the first (k + t) · word_ms ms, ``word_ms`` being the
stride s, the schedule the ``wait_k_catchup`` policy decodes with at c = 0 (one unit per
stride). ``step: word`` (default) is P22's wait-k over words.

``source: text`` trains a text MT decoder the same way (wait-k over *source words*, Ma et
al. 2019): target word w sees ESPnet's source <sos> and the source units of the first
k + w source words (all of them once k + w reaches the source's words).
Source words follow the same rule on the source units (``src_units_file``,
``src_unit_type``); ESPnet's MT model hands the decoder its source units through
:func:`register`'s wrapper of ``ESPnetMTModel.forward``. Only the cross-attention is
masked here; the MT recipes pair the decoder with a unidirectional encoder
(:mod:`simul.models.extensions.unidirectional_encoder`), so that the states a target word sees in
training are those of the prefix it would have read. (For speech, as in P22, the encoder
sees the whole audio in training and re-encodes the prefix read at inference.)

``k_train`` is one k, or a list: then each training batch draws its k from the list
(multi-path wait-k, which P22 §2 cites for one model serving every k); validation uses the
list's first k. Inference needs none of this: a packed model's config names ESPnet's
``transformer`` decoder (same parameters), and simul's policies decode it like any other.

Training registers the class with ESPnet's ST task as ``transformer_waitk``
(:func:`register`); this module imports ESPnet (its class derives from ESPnet's).
"""

from __future__ import annotations

import random
from pathlib import Path

import torch

from simul.metrics import units as unit_words
from simul.metrics.units import SPM_SPACE
from simul.models.espnet_env import import_espnet

_decoders = import_espnet("espnet2.asr.decoder.transformer_decoder")
_nets = import_espnet("espnet.nets.pytorch_backend.nets_utils")



def word_index(units: torch.Tensor, begins: torch.Tensor, separator: torch.Tensor
               ) -> torch.Tensor:
    """(B, L) unit ids → (B, L) index of the target word each unit belongs to.

    ``begins[id]``: the unit begins a word (SentencePiece "▁…"); ``separator[id]``: the unit
    separates words (characters' ``<space>``). With no separator in the vocabulary a unit
    begins a word when ``begins`` says so (the first unit always does); otherwise when the
    unit before it is a separator (the first unit always does), and a separator keeps the
    index of the word it closes."""
    if bool(separator.any()):
        sep = separator[units]
        after_sep = torch.ones_like(sep)
        after_sep[:, 1:] = sep[:, :-1]
        starts = after_sep & ~sep
    else:
        starts = begins[units].clone()
    starts[:, 0] = True
    return (starts.long().cumsum(dim=1) - 1).clamp(min=0)


def frame_limits(words: torch.Tensor, k: int, word_ms: float, frame_ms: float) -> torch.Tensor:
    """Encoder frames each target position may attend to: ⌊(k + word) · word_ms / frame_ms⌋,
    at least one."""
    limit = torch.floor((k + words).double() * word_ms / frame_ms).long()
    return limit.clamp(min=1)


DETECTIONS = ("fixed", "adaptive")
"""Word detections of the audio source (P22 §2.2): one word per ``word_ms``, or the words
the source CTC begins."""


def ctc_word_frames(frame_ids: torch.Tensor, hlens: torch.Tensor, src_units: list[str],
                    src_unit_type: str) -> list[list[int]]:
    """(B, T) per-frame best ids of the source CTC → for each utterance, the frame where its
    greedy CTC transcript begins each word, over its ``hlens`` real frames
    (:func:`simul.metrics.units.ctc_word_frames`)."""
    unit_type = unit_words.espnet_unit_type(src_unit_type)
    return [unit_words.ctc_word_frames(row[: int(n)].tolist(), src_units, unit_type)
            for row, n in zip(frame_ids, hlens, strict=True)]


def adaptive_frame_limits(words: torch.Tensor, k: int, word_frames: list[list[int]],
                          hlens: torch.Tensor) -> torch.Tensor:
    """(B, L) encoder frames target word ``words[b, i]`` may attend to under adaptive
    detection: the frames read when k + w words have begun, ``word_frames[b][k + w − 1] + 1``
    (``word_frames``: :func:`ctc_word_frames`); the utterance's ``hlens[b]`` frames when it
    has fewer words."""
    longest = max((len(f) for f in word_frames), default=0)
    table = hlens.reshape(-1, 1).repeat(1, longest + 1).long()  # (B, longest + 1)
    for b, frames in enumerate(word_frames):
        if frames:
            table[b, : len(frames)] = torch.tensor(frames, dtype=torch.long) + 1
    wanted = (k + words - 1).clamp(max=longest)  # index of word k + w; past the last: all
    return torch.gather(table.to(words.device), 1, wanted)


def source_word_limits(src: torch.Tensor, src_lens: torch.Tensor, words: torch.Tensor,
                       k: int, src_begins: torch.Tensor, src_separator: torch.Tensor
                       ) -> torch.Tensor:
    """(B, L): encoder positions target word ``words[b, i]`` may attend to in an MT model
    whose encoder reads ``<sos> src`` (ESPnet's MT): <sos> and the units of the first
    k + w source words, every position once k + w reaches the source's words."""
    valid = ~_nets.make_pad_mask(src_lens, maxlen=src.shape[1]).to(src.device)
    src_words = word_index(src.clamp(min=0), src_begins, src_separator)  # (B, S)
    n_words = torch.where(valid, src_words + 1, 0).amax(dim=1)  # (B,)
    wanted = k + words  # source words target word w waits for
    # units of src whose word index is below `wanted`, counted per target position
    below = (src_words.unsqueeze(1) < wanted.unsqueeze(-1)) & valid.unsqueeze(1)  # (B, L, S)
    limit = 1 + below.sum(-1)  # + <sos>
    every = torch.full_like(limit, src.shape[1] + 1)  # <sos> src: all the encoder's
    return torch.where(wanted >= n_words.unsqueeze(1), every, limit)


def waitk_memory_mask(ys_out: torch.Tensor, ys_lens: torch.Tensor, hlens: torch.Tensor,
                      n_frames: int, k: int, word_ms: float, frame_ms: float,
                      begins: torch.Tensor, separator: torch.Tensor, *,
                      per_unit: bool = False, source_limits=None) -> torch.Tensor:
    """(B, L, T) bool: target position i (predicting ``ys_out[:, i]``) may attend to frame t.

    ``ys_out`` are the units each position predicts, the last valid one </s>
    (``ys_lens`` counts it); that position sees every frame of its utterance. A step is a
    target word, or with ``per_unit`` a target unit. ``source_limits(words, k)``, when given,
    replaces the fixed detection's frame limits: those of source words (text MT), or of the
    words the source CTC detected (adaptive detection)."""
    if per_unit:
        words = torch.arange(ys_out.shape[1], device=ys_out.device).expand_as(ys_out)
    else:
        words = word_index(ys_out, begins, separator)
    if source_limits is not None:
        limit = source_limits(words, k)
    else:
        limit = frame_limits(words, k, word_ms, frame_ms)  # (B, L)
    last = (ys_lens - 1).clamp(min=0).unsqueeze(1)  # the </s> position
    positions = torch.arange(ys_out.shape[1], device=ys_out.device).unsqueeze(0)
    limit = torch.where(positions >= last, torch.full_like(limit, n_frames), limit)
    frames = torch.arange(n_frames, device=ys_out.device).view(1, 1, -1)
    valid = (~_nets.make_pad_mask(hlens, maxlen=n_frames)).to(ys_out.device)  # (B, T)
    return (frames < limit.unsqueeze(-1)) & valid.unsqueeze(1)


class WaitKTransformerDecoder(_decoders.TransformerDecoder):
    """ESPnet's Transformer decoder whose cross-attention follows the wait-k schedule in
    training (see the module doc); in eval mode without ``k_train`` it is ESPnet's."""

    def __init__(self, vocab_size: int, encoder_output_size: int, *,
                 k_train: int | list[int] = 3, word_ms: float = 280.0,
                 frame_ms: float = 80.0, units_file: str | None = None,
                 unit_type: str = "bpe", step: str = "word", source: str = "audio",
                 detection: str = "fixed", src_units_file: str | None = None,
                 src_unit_type: str = "bpe", **kwargs):
        super().__init__(vocab_size, encoder_output_size, **kwargs)
        ks = [k_train] if isinstance(k_train, int) else list(k_train)
        if not ks or not all(isinstance(k, int) and k >= 1 for k in ks):
            raise ValueError(f"decoder_conf.k_train: a positive integer or a list of them, "
                             f"got {k_train!r}")
        if word_ms <= 0 or frame_ms <= 0:
            raise ValueError(f"decoder_conf: word_ms and frame_ms must be positive, got "
                             f"{word_ms}, {frame_ms}")
        if step not in ("word", "unit"):
            raise ValueError(f"decoder_conf.step: 'word' or 'unit', got {step!r}")
        self.per_unit = step == "unit"
        if source not in ("audio", "text"):
            raise ValueError(f"decoder_conf.source: 'audio' or 'text', got {source!r}")
        self.text_source = source == "text"
        if detection not in DETECTIONS:
            raise ValueError(f"decoder_conf.detection: one of {DETECTIONS}, got {detection!r}")
        self.adaptive = detection == "adaptive"
        if self.adaptive and (self.text_source or self.per_unit):
            raise ValueError("decoder_conf.detection: adaptive detects words in audio, one "
                             "target word a step (source: audio, step: word)")
        if self.adaptive and src_units_file is None:
            raise ValueError("decoder_conf.src_units_file: the source token list (adaptive "
                             "detection reads the source CTC's units)")
        self.src_unit_type = src_unit_type
        self.src_units: list[str] = (
            Path(src_units_file).read_text(encoding="utf-8").splitlines()
            if self.adaptive else [])
        # the source CTC's per-frame best units (ESPnet's CTC.argmax), given by register()
        self.source_ctc_argmax = None
        self.src_batch: tuple[torch.Tensor, torch.Tensor] | None = None  # set per batch
        if self.text_source:
            if src_units_file is None:
                raise ValueError("decoder_conf.src_units_file: the source token list (text "
                                 "source)")
            src_units = Path(src_units_file).read_text(encoding="utf-8").splitlines()
            self.register_buffer("src_begins", torch.tensor(
                [src_unit_type == "bpe" and u.startswith(SPM_SPACE) for u in src_units]),
                persistent=False)
            self.register_buffer("src_separator", torch.tensor(
                [src_unit_type == "char" and u == "<space>" for u in src_units]),
                persistent=False)
        if units_file is None:
            raise ValueError("decoder_conf.units_file: the token list (one unit per line)")
        units = Path(units_file).read_text(encoding="utf-8").splitlines()
        if len(units) != vocab_size:
            raise ValueError(f"decoder_conf.units_file {units_file}: {len(units)} units, the "
                             f"model has {vocab_size}")
        self.ks, self.word_ms, self.frame_ms = ks, float(word_ms), float(frame_ms)
        self.eos = vocab_size - 1  # ESPnet's <sos/eos>, the last unit
        self.register_buffer("begins", torch.tensor(
            [unit_type == "bpe" and u.startswith(SPM_SPACE) for u in units]), persistent=False)
        self.register_buffer("separator", torch.tensor(
            [unit_type == "char" and u == "<space>" for u in units]), persistent=False)
        self.last_k: int | None = None  # the k of the last forward (tests, logs)
        self.last_word_frames: list[list[int]] | None = None  # adaptive: its detections

    def forward(self, hs_pad, hlens, ys_in_pad, ys_in_lens, return_hs=False,
                return_all_hs=False):
        k = random.choice(self.ks) if self.training else self.ks[0]
        self.last_k = k
        # what each position predicts: the next input unit, </s> at the last valid one
        ys_out = torch.roll(ys_in_pad, -1, dims=1)
        ys_out[torch.arange(ys_out.shape[0]), (ys_in_lens - 1).clamp(min=0)] = self.eos
        source_limits = None
        if self.adaptive:
            if self.source_ctc_argmax is None:
                raise RuntimeError("transformer_waitk with detection: adaptive needs the "
                                   "model's source CTC (simul.models.extensions.waitk_decoder."
                                   "register hands it over when ESPnet builds the model)")
            with torch.no_grad():
                best = self.source_ctc_argmax(hs_pad)  # (B, T)
            word_frames = ctc_word_frames(best, hlens, self.src_units, self.src_unit_type)
            self.last_word_frames = word_frames

            def source_limits(words, k):
                return adaptive_frame_limits(words, k, word_frames, hlens.to(words.device))
        elif self.text_source:
            if self.src_batch is None:
                raise RuntimeError("transformer_waitk with source: text needs the batch's "
                                   "source units (simul.models.extensions.waitk_decoder."
                                   "register wraps ESPnet's MT model to give them)")
            src, src_lens = self.src_batch

            def source_limits(words, k):
                return source_word_limits(src, src_lens, words, k, self.src_begins,
                                          self.src_separator)
        memory_mask = waitk_memory_mask(ys_out, ys_in_lens, hlens, hs_pad.shape[1], k,
                                        self.word_ms, self.frame_ms, self.begins,
                                        self.separator, per_unit=self.per_unit,
                                        source_limits=source_limits)
        tgt_mask = (~_nets.make_pad_mask(ys_in_lens)[:, None, :]).to(ys_in_pad.device)
        tgt_mask = tgt_mask & _decoders.subsequent_mask(tgt_mask.size(-1),
                                                        device=tgt_mask.device).unsqueeze(0)
        x = self.embed(ys_in_pad)
        memory = hs_pad
        intermediate = []
        for layer in self.decoders:
            x, tgt_mask, memory, memory_mask = layer(x, tgt_mask, memory, memory_mask)
            if return_all_hs:
                intermediate.append(x)
        if self.normalize_before:
            x = self.after_norm(x)
        hidden = x
        if self.output_layer is not None:
            x = self.output_layer(x)
        olens = tgt_mask.sum(1)
        if return_hs:
            return (x, hidden), olens
        if return_all_hs:
            return (x, intermediate), olens
        return x, olens


def _forward_with_source(forward):
    """ESPnet's MT model forward, handing a text-source wait-k decoder its source units."""

    def wrapped(self, text, text_lengths, src_text, src_text_lengths, **kwargs):
        decoder = self.decoder
        if isinstance(decoder, WaitKTransformerDecoder) and decoder.text_source:
            decoder.src_batch = (src_text[:, : src_text_lengths.max()], src_text_lengths)
            try:
                return forward(self, text, text_lengths, src_text, src_text_lengths, **kwargs)
            finally:
                decoder.src_batch = None
        return forward(self, text, text_lengths, src_text, src_text_lengths, **kwargs)

    wrapped.simul_waitk = True
    return wrapped


def attach_source_ctc(model) -> None:
    """Give an adaptive-detection decoder of ESPnet's ST ``model`` the model's source CTC
    (its per-frame argmax, a plain function: not a submodule, so the decoder's parameters
    stay ESPnet's); refused with a line naming the setting when the model has none."""
    decoder = getattr(model, "decoder", None)
    if not isinstance(decoder, WaitKTransformerDecoder) or not decoder.adaptive:
        return
    ctc = getattr(model, "ctc", None)  # ESPnet builds it only with asr_weight > 0
    if ctc is None:
        raise ValueError("decoder_conf.detection: adaptive counts source words with the "
                         "source CTC; set model_conf.asr_weight > 0 (the recipes: 0.3)")
    decoder.source_ctc_argmax = ctc.argmax


def _build_with_source_ctc(build_model):
    """ESPnet's ST ``build_model`` (a classmethod's function), then :func:`attach_source_ctc`."""

    def build(cls, args):
        model = build_model(cls, args)
        attach_source_ctc(model)
        return model

    build.simul_waitk = True
    return build


def register() -> None:
    """Make ``decoder: transformer_waitk`` available to ESPnet's ST and MT tasks (training
    only); the MT model then hands a text-source decoder its source units, and the ST task
    an adaptive-detection decoder its model's source CTC."""
    for task in ("espnet2.tasks.st", "espnet2.tasks.mt"):
        import_espnet(task).decoder_choices.classes["transformer_waitk"] = \
            WaitKTransformerDecoder
    model = import_espnet("espnet2.mt.espnet_model").ESPnetMTModel
    if not getattr(model.forward, "simul_waitk", False):
        model.forward = _forward_with_source(model.forward)
    st = import_espnet("espnet2.tasks.st").STTask
    if not getattr(st.build_model, "simul_waitk", False):
        st.build_model = classmethod(_build_with_source_ctc(st.build_model.__func__))
