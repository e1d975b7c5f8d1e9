"""The model H20's meta-learning trains: one ST model for speech and text input.

Han et al. 2020 (§2.2–2.3) meta-learn over ASR, MT and ST source tasks with one model and a
universal vocabulary; speech passes a compression layer (strided convolutions) before the
encoder, text enters the encoder directly. :class:`MultiModalST` is that model on ESPnet's
modules and loss:

- shared: ESPnet's ST model (``espnet2.st.espnet_model.ESPnetSTModel``, built by ESPnet's
  ST task from a config) — its encoder blocks, its decoder over the universal vocabulary
  and its label-smoothed attention loss;
- speech only: ESPnet's front end (filter banks), feature normalisation and the encoder's
  input layer (``conv2d8``: the compression layer, with the encoder's positional encoding);
- text only: an embedding of source units (:attr:`MultiModalST.text_embed`) into the
  encoder's width, then the same positional encoding, then the shared blocks.

The decoder's first input says what to write: ``<sos/eos>`` for German (the target task's
own start, so that the fine-tuned model is a plain ESPnet ST model that simul's policies
decode), a tag ``<2en>``, ``<2es>``, ``<2pt>`` for the other languages. :meth:`st_state`
is what a packed model keeps (the text embedding is left out).

A batch is a :class:`Batch`: inputs (audio samples or source units), their lengths, target
units, their lengths and the decoder's first unit.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from simul.models.espnet_env import import_espnet

_nets = import_espnet("espnet.nets.pytorch_backend.nets_utils")

TAGS = {"en": "<2en>", "es": "<2es>", "pt": "<2pt>"}
"""Decoder start units of the languages other than German (German starts with <sos/eos>)."""


@dataclass
class Batch:
    """One task's batch. ``inputs``: (B, samples) float audio for speech, (B, units) long
    source units for text; ``targets``: (B, L) long target units (padding: any value past
    ``target_lengths``); ``start``: the decoder's first unit."""

    modality: str  # "speech" | "text"
    inputs: torch.Tensor
    input_lengths: torch.Tensor
    targets: torch.Tensor
    target_lengths: torch.Tensor
    start: int


def build_st(config: dict):
    """ESPnet's ST model of ``config`` (an ESPnet ST config as a dict)."""
    import tempfile
    from pathlib import Path

    import yaml

    task = import_espnet("espnet2.tasks.st").STTask
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.yaml"
        path.write_text(yaml.safe_dump(config, allow_unicode=True))
        args = task.get_parser().parse_args(["--config", str(path)])
        return task.build_model(args), args


class MultiModalST(torch.nn.Module):
    """ESPnet's ST model with a text front end beside the speech one (see the module)."""

    def __init__(self, st_model, src_vocab_size: int):
        super().__init__()
        self.st = st_model
        width = st_model.encoder.output_size()
        self.text_embed = torch.nn.Embedding(src_vocab_size, width)
        embed = st_model.encoder.embed
        self._pos_enc = getattr(embed, "pos_enc", None) or embed.out[-1]
        if not isinstance(self._pos_enc, torch.nn.Module):
            raise ValueError("the encoder's input layer has no positional encoding to share")

    def encode_text(self, units: torch.Tensor, lengths: torch.Tensor):
        """Encoder states of source units: embedding, the encoder's positional encoding,
        its blocks and final norm. (B, U) → (B, U, D), lengths."""
        encoder = self.st.encoder
        x = self._pos_enc(self.text_embed(units))
        masks = (~_nets.make_pad_mask(lengths, maxlen=units.shape[1])[:, None, :]).to(
            units.device)
        x, masks = encoder.encoders(x, masks)
        if isinstance(x, tuple):
            x = x[0]
        if getattr(encoder, "normalize_before", True):
            x = encoder.after_norm(x)
        return x, lengths

    def encode(self, batch: Batch):
        if batch.modality == "speech":
            return self.st.encode(batch.inputs, batch.input_lengths)
        if batch.modality == "text":
            return self.encode_text(batch.inputs, batch.input_lengths)
        raise ValueError(f"modality: {batch.modality!r} is not speech or text")

    def forward(self, batch: Batch) -> torch.Tensor:
        """The label-smoothed attention loss of the batch's targets (ESPnet's criterion:
        summed over units, averaged over the batch)."""
        return self.scores(batch)[0]

    def scores(self, batch: Batch):
        """(loss, decoder outputs (B, L + 1, V), the units they predict (B, L + 1), padded
        with ESPnet's ignore id): the decoder reads ``batch.start`` then the targets and
        predicts the targets then <sos/eos>."""
        enc, enc_lens = self.encode(batch)
        st = self.st
        n = batch.targets.shape[0]
        lengths = batch.target_lengths
        width = int(lengths.max()) + 1
        ys_in = torch.full((n, width), st.eos, dtype=torch.long)
        ys_out = torch.full((n, width), st.ignore_id, dtype=torch.long)
        for b in range(n):
            y = batch.targets[b, : int(lengths[b])]
            ys_in[b, 0] = batch.start
            ys_in[b, 1: len(y) + 1] = y
            ys_out[b, : len(y)] = y
            ys_out[b, len(y)] = st.eos
        ys_out = ys_out.to(enc.device)
        out, _ = st.decoder(enc, enc_lens, ys_in.to(enc.device), (lengths + 1).to(enc.device))
        return st.criterion_st(out, ys_out), out, ys_out

    def st_state(self) -> dict[str, torch.Tensor]:
        """The ESPnet ST model's parameters alone: what a packed model keeps."""
        return self.st.state_dict()
