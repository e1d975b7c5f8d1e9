"""``rnn_padded``: a training-time twin of ESPnet2's RNN encoder (BLSTM with projections)
that runs on padded tensors instead of packed sequences.

ESPnet's ``RNNP`` runs each bidirectional LSTM layer on a packed sequence. On CPU the
backward pass through packed sequences is several times slower than through padded
tensors. :class:`PaddedRNNEncoder` computes the same function from the same parameters
(identical ``state_dict`` keys) without packing: the forward direction runs on the padded
batch (padding after a sequence cannot reach its valid outputs) and the backward direction
runs on each sequence reversed within its own length, then is reversed back.

It also applies the inter-layer dropout only in training (``RNNP`` calls ``F.dropout``
without ``training=``, so dropout stays on at inference).

Training registers it with ESPnet's encoder choices as ``rnn_padded`` (:func:`register`);
a packed model's config names the standard ``rnn`` encoder, which loads the same weights.
This module imports ESPnet (its class derives from ESPnet's); only training imports it.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F  # noqa: N812

from simul.models.espnet_env import import_espnet

_rnn_encoder = import_espnet("espnet2.asr.encoder.rnn_encoder")


def reverse_within_length(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """x[b, :L_b] reversed for every b; positions ≥ L_b unchanged. (B, T, D) → (B, T, D)."""
    t = torch.arange(x.shape[1], device=x.device).unsqueeze(0)  # (1, T)
    lengths = lengths.to(x.device).unsqueeze(1)  # (B, 1)
    index = torch.where(t < lengths, lengths - 1 - t, t)  # (B, T)
    return x.gather(1, index.unsqueeze(-1).expand_as(x))


def _one_direction(lstm: torch.nn.LSTM, x: torch.Tensor, suffix: str) -> torch.Tensor:
    weights = [getattr(lstm, f"{name}_l0{suffix}") for name in
               ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    zeros = x.new_zeros(1, x.shape[0], lstm.hidden_size)
    out, _, _ = torch._VF.lstm(x, (zeros, zeros), weights, True, 1, 0.0, lstm.training,
                               False, True)
    return out  # (B, T, H)


class PaddedRNNEncoder(_rnn_encoder.RNNEncoder):
    """ESPnet2 ``RNNEncoder`` (projection variant) with padded bidirectional layers."""

    def forward(self, xs_pad, ilens, prev_states=None):
        if not self.use_projection or prev_states is not None or self.rnn_type != "lstm":
            return super().forward(xs_pad, ilens, prev_states)
        rnnp = self.enc[0]
        ilens = torch.as_tensor(ilens)
        for layer in range(rnnp.elayers):
            lstm = getattr(rnnp, ("birnn" if rnnp.bidir else "rnn") + str(layer))
            xs_pad = xs_pad[:, : int(ilens.max())]
            fwd = _one_direction(lstm, xs_pad, "")
            if rnnp.bidir:
                bwd = _one_direction(lstm, reverse_within_length(xs_pad, ilens), "_reverse")
                ys = torch.cat([fwd, reverse_within_length(bwd, ilens)], dim=-1)
            else:
                ys = fwd
            sub = rnnp.subsample[layer + 1]
            if sub > 1:
                ys = ys[:, ::sub]
                ilens = (ilens + 1) // sub
            xs_pad = getattr(rnnp, f"bt{layer}")(ys)
            if layer < rnnp.elayers - 1:
                xs_pad = torch.tanh(F.dropout(xs_pad, p=rnnp.dropout, training=self.training))
        mask = torch.arange(xs_pad.shape[1]).unsqueeze(0) >= ilens.unsqueeze(1)
        xs_pad = xs_pad.masked_fill(mask.unsqueeze(-1), 0.0)
        return xs_pad, ilens, [None]


def register() -> None:
    """Make ``encoder: rnn_padded`` available to ESPnet's ST and ASR tasks (training only:
    a CTC ASR on the BLSTM's encoder, ``asr_blstm_char_en``, trains with it too)."""
    for task in ("st", "asr"):
        import_espnet(f"espnet2.tasks.{task}").encoder_choices.classes["rnn_padded"] = \
            PaddedRNNEncoder
