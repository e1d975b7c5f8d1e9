"""``transformer_unidirectional``: ESPnet's Transformer encoder with causal self-attention.

The wait-k text MT of Ma et al. 2019, which Han et al. 2020 (§2.1) and the cascade of
Nguyen et al. 2021 (Fig. 3: "a Transformer-based wait-k decoder with unidirectional
encoder") train, encodes source unit i from units 0..i only. Training then sees exactly the
states inference sees: the encoding of a source prefix is the prefix of the encoding of the
whole source, so a model trained on whole sentences meets no future-informed state when it
re-encodes the words read so far. A bidirectional encoder trained in wait-k mode does not
have this property (its states of the first words have seen the last ones in training,
never at inference).

:class:`UnidirectionalTransformerEncoder` has ESPnet's ``TransformerEncoder`` parameters
(identical ``state_dict`` keys, so it starts from an offline model's encoder) and computes
its function with each query masked to the keys at or before it. Only the text encoders
of the MT task use it (an ``embed`` or linear input layer, no intermediate CTC).

Training and loading register it with ESPnet's MT task (:func:`register`): a packed model's
config names it, and :class:`simul.models.adapters.cascade.TextMT` registers it before it builds the
model. This module imports ESPnet (its class derives from ESPnet's).
"""

from __future__ import annotations

from simul.models.espnet_env import import_espnet

_encoder = import_espnet("espnet2.asr.encoder.transformer_encoder")
_nets = import_espnet("espnet.nets.pytorch_backend.nets_utils")
_mask = import_espnet("espnet.nets.pytorch_backend.transformer.mask")

NAME = "transformer_unidirectional"


class UnidirectionalTransformerEncoder(_encoder.TransformerEncoder):
    """ESPnet2 ``TransformerEncoder`` whose self-attention sees no later position."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.interctc_layer_idx:
            raise ValueError(f"{NAME}: intermediate CTC is not supported")
        if "Subsampling" in type(self.embed).__name__:
            raise ValueError(f"{NAME}: subsampling input layers are not supported")

    def forward(self, xs_pad, ilens, prev_states=None, masks=None, ctc=None,
                return_all_hs=False):
        if masks is not None or return_all_hs:
            raise ValueError(f"{NAME}: explicit masks and return_all_hs are not supported")
        pad = (~_nets.make_pad_mask(ilens)[:, None, :]).to(xs_pad.device)  # (B, 1, T)
        if self.embed is not None:
            xs_pad = self.embed(xs_pad)
        causal = _mask.subsequent_mask(xs_pad.size(1), device=xs_pad.device)  # (T, T)
        xs_pad, _ = self.encoders(xs_pad, pad & causal.unsqueeze(0))
        if self.normalize_before:
            xs_pad = self.after_norm(xs_pad)
        return xs_pad, pad.squeeze(1).sum(1), None


def register() -> None:
    """Make ``encoder: transformer_unidirectional`` available to ESPnet's MT task."""
    import_espnet("espnet2.tasks.mt").encoder_choices.classes[NAME] = \
        UnidirectionalTransformerEncoder
