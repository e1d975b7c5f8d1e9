"""Decoder scorers: ESPnet2's Transformer and RNN decoder steps, computed without redoing
what ESPnet's own scoring redoes at every step. Same parameters, same function.

**Transformer** (:class:`CachedTransformerScorer`, for beam search). ESPnet's
``TransformerDecoder.batch_score`` caches each layer's *outputs*, so at every step it
re-normalises and re-projects the keys and values of all earlier units (self-attention) and
of every encoder frame (source attention), for every beam item. A simultaneous policy runs
a beam search after every chunk, so this dominates its computation time.
:class:`CachedTransformerScorer` keeps per hypothesis the self-attention keys and values of
the earlier units, and projects the encoder output once per search (all beam items attend
to the same one). Each step then touches only the newest unit. The arithmetic is ESPnet's
(same modules, same order of operations per position); only the shapes of the matrix
products differ, so scores agree to float rounding and the decoded units are the same
(tested against ESPnet's scorer and against ``Speech2Text``). Used by
:meth:`simul.models.adapters.espnet_st.ESPnetST.beam_search` for the decoders of
:func:`supports_transformer`: ESPnet's standard layers with the default attention (no SDPA
or flash attention, no ``concat_after``, no sequential attention); others keep ESPnet's
scorer.

**Transformer, greedy steps** (:func:`transformer_score`). ESPnet's
``TransformerDecoder.score`` projects the whole encoder output into every layer's
source-attention keys and values again at every step, and a greedy policy takes many steps
over one encoder output (it re-decodes its committed units after every read), so the
projection dominates its decoding. :func:`transformer_score` takes the keys and values from
:func:`transformer_memory_kv`, made once per encoder output (by the adapter when it encodes,
so that a sweep sharing the output charges them to every setting that reads it). Every other
operation is ESPnet's, on the same shapes and in the same order, and the projection is
ESPnet's own on the same (1, T, D) tensor: the log-probabilities are ESPnet's bit for bit
(tested), and the state is ESPnet's cache (each layer's outputs), so a state from one path
continues on the other.

**RNN** (:func:`rnn_score`, for greedy steps). ESPnet's RNN decoder with additive attention
(the BLSTM models, :meth:`~simul.models.adapters.espnet_st.ESPnetST.step`): ESPnet's
``RNNDecoder.score`` runs a few operations through module calls, no-op dropouts and state
copies, and its attention projects the whole encoder output again after every reset (once
per prefix a policy reads, per setting of a sweep). :func:`rnn_score` runs ESPnet's
operations on the same tensors in the same order — its log-probabilities are ESPnet's, bit
for bit (tested) — and takes the projected encoder output from the caller, who computes it
once per encoder output (:func:`rnn_attention_keys`), for the decoders of
:func:`supports_rnn`.

ESPnet is imported when a function here first needs it, not with this module: the adapter
imports this module, and code that only names the adapter's types (policies, metrics) must
not pay for ESPnet.
"""

from __future__ import annotations

import functools
import math

import torch
import torch.nn.functional as F  # noqa: N812

from simul.models.espnet_env import import_espnet


def supports_transformer(decoder) -> bool:
    """Whether ``decoder`` is a Transformer decoder this scorer computes exactly."""
    td = import_espnet("espnet2.asr.decoder.transformer_decoder")
    layer_mod = import_espnet("espnet.nets.pytorch_backend.transformer.decoder_layer")
    attn_mod = import_espnet("espnet.nets.pytorch_backend.transformer.attention")
    if type(decoder) is not td.TransformerDecoder or decoder.output_layer is None:
        return False
    for layer in decoder.decoders:
        if type(layer) is not layer_mod.DecoderLayer or layer.concat_after:
            return False
        if getattr(layer, "sequential_attn", None) is not None:
            return False
        for att in (layer.self_attn, layer.src_attn):
            if type(att) is not attn_mod.MultiHeadedAttention:
                return False
            if getattr(att, "use_sdpa", False) or getattr(att, "use_flash_attn", False):
                return False
    return True


def heads(att, x: torch.Tensor, linear) -> torch.Tensor:
    """(B, L, D) → (B, H, L, d_k) through one of the attention's projections."""
    return linear(x).view(x.shape[0], -1, att.h, att.d_k).transpose(1, 2)


def _attend(att, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """ESPnet's default scaled dot-product attention of ``q`` (B, H, 1, d_k) over k, v."""
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(att.d_k)
    x = torch.matmul(torch.softmax(scores, dim=-1), v)  # (B, H, 1, d_k)
    return att.linear_out(x.transpose(1, 2).contiguous().view(q.shape[0], -1, att.h * att.d_k))


class _CachedTransformerScoring:
    """ESPnet ``BatchScorerInterface`` over a Transformer decoder, for one encoder output:
    ``CachedTransformerScorer(decoder, memory)``, memory (T, D).

    A hypothesis' state is a tuple with, per layer, the self-attention keys and values of
    its units so far, each (H, L, d_k). (``CachedTransformerScorer`` is this class with
    ESPnet's ``BatchScorerInterface`` as a base, made on first use.)"""

    def __init__(self, decoder, memory: torch.Tensor, memory_kv: list | None = None):
        self.decoder = decoder
        self.memory = memory  # (T, D); held, so its storage cannot be reused meanwhile
        self._memory_kv = memory_kv  # transformer_memory_kv(decoder, memory), if made already

    def memory_kv(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Source-attention keys and values of the encoder output, per layer: (1, H, T, d_k)."""
        if self._memory_kv is None:
            self._memory_kv = transformer_memory_kv(self.decoder, self.memory)
        return self._memory_kv

    def init_state(self, x):
        return None

    def select_state(self, state, i, new_id=None):
        return None if state is None else state[i]

    def score(self, ys, state, x):
        logp, states = self.batch_score(ys.unsqueeze(0), [state], x.unsqueeze(0))
        return logp[0], states[0]

    def batch_score(self, ys: torch.Tensor, states: list, xs: torch.Tensor):
        if xs.shape[-2:] != self.memory.shape or xs.data_ptr() != self.memory.data_ptr():
            raise ValueError("CachedTransformerScorer was built for another encoder output")
        if states[0] is None:  # the primer, in one causal pass (ESPnet's own forward)
            logp, cache = self._primer(ys)
        else:
            cache = [(torch.stack([s[i][0] for s in states]),
                      torch.stack([s[i][1] for s in states]))
                     for i in range(len(self.decoder.decoders))]
            logp, cache = self._step(ys, cache)
        return logp, [tuple((k[b], v[b]) for k, v in cache) for b in range(ys.shape[0])]

    def _primer(self, ys: torch.Tensor):
        """Log-probabilities after ``ys`` (B, L) and the keys/values of all its units: ESPnet's
        full causal pass gives each layer's outputs, whose projections are the keys and
        values the next steps attend to."""
        dec = self.decoder
        mask = import_espnet("espnet.nets.pytorch_backend.transformer.mask").subsequent_mask(
            ys.shape[1], device=ys.device).unsqueeze(0)
        memory = self.memory.unsqueeze(0).expand(ys.shape[0], *self.memory.shape)
        logp, outputs = dec.forward_one_step(ys, mask, memory, cache=None)
        cache = []
        for layer, inputs in zip(dec.decoders, [dec.embed(ys), *outputs[:-1]], strict=True):
            sa = layer.self_attn
            h = layer.norm1(inputs) if layer.normalize_before else inputs
            cache.append((sa.k_norm(heads(sa, h, sa.linear_k)), heads(sa, h, sa.linear_v)))
        return logp, cache

    def _step(self, ys: torch.Tensor, cache):
        """Log-probabilities after ``ys`` (B, L), given the keys/values of ys[:, :-1]."""
        dec = self.decoder
        x = dec.embed(ys)[:, -1:]  # the embedding layer adds the positional encoding
        new_cache = []
        for i, (layer, (mk, mv)) in enumerate(zip(dec.decoders, self.memory_kv(), strict=True)):
            sa, ca = layer.self_attn, layer.src_attn
            residual = x
            h = layer.norm1(x) if layer.normalize_before else x
            k = torch.cat([cache[i][0], sa.k_norm(heads(sa, h, sa.linear_k))], dim=2)
            v = torch.cat([cache[i][1], heads(sa, h, sa.linear_v)], dim=2)
            new_cache.append((k, v))
            x = residual + _attend(sa, sa.q_norm(heads(sa, h, sa.linear_q)), k, v)
            if not layer.normalize_before:
                x = layer.norm1(x)
            residual = x
            h = layer.norm2(x) if layer.normalize_before else x
            x = residual + _attend(ca, ca.q_norm(heads(ca, h, ca.linear_q)), mk, mv)
            if not layer.normalize_before:
                x = layer.norm2(x)
            residual = x
            h = layer.norm3(x) if layer.normalize_before else x
            x = residual + layer.feed_forward(h)
            if not layer.normalize_before:
                x = layer.norm3(x)
        y = dec.after_norm(x[:, -1]) if dec.normalize_before else x[:, -1]
        return torch.log_softmax(dec.output_layer(y), dim=-1), new_cache


# ------------------------------------------------------- Transformer decoder, greedy steps
def transformer_memory_kv(decoder, memory: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The source attention's keys and values of the encoder output ``memory`` (T, D), per
    layer, each (1, H, T, d_k): what ESPnet's ``forward_qkv`` computes from ``memory`` at
    every step of one utterance (the same operations on the same (1, T, D) tensor, so the
    same values, bit for bit)."""
    m = memory.unsqueeze(0)
    return [(att.k_norm(heads(att, m, att.linear_k)), heads(att, m, att.linear_v))
            for att in (layer.src_attn for layer in decoder.decoders)]


def transformer_score(decoder, ys: torch.Tensor, cache: list | None, memory_kv: list):
    """ESPnet's ``TransformerDecoder.score(ys, cache, memory)`` in eval mode, for the
    decoders of :func:`supports_transformer`, with the source attention's keys and values
    taken from ``memory_kv`` (:func:`transformer_memory_kv` of ``memory``) instead of
    projected again: (log-probabilities of the unit after ``ys``, ESPnet's cache, each
    layer's outputs). Every other operation is ESPnet's, on the same shapes, in the same
    order (``DecoderLayer.forward`` with its cache), so the log-probabilities are ESPnet's
    bit for bit (tested)."""
    mask_mod = import_espnet("espnet.nets.pytorch_backend.transformer.mask")
    tgt_mask = mask_mod.subsequent_mask(len(ys), device=ys.device).unsqueeze(0)
    x = decoder.embed(ys.unsqueeze(0))
    cache = [None] * len(decoder.decoders) if cache is None else cache
    new_cache = []
    for c, layer, (mk, mv) in zip(cache, decoder.decoders, memory_kv, strict=True):
        x = _layer_step(layer, x, tgt_mask, c, mk, mv)
        new_cache.append(x)
    y = decoder.after_norm(x[:, -1]) if decoder.normalize_before else x[:, -1]
    return torch.log_softmax(decoder.output_layer(y), dim=-1).squeeze(0), new_cache


def _layer_step(layer, tgt, tgt_mask, cache, mk, mv):
    """ESPnet's ``DecoderLayer.forward`` (no ``concat_after``, no sequential attention) with
    the source attention's keys ``mk`` and values ``mv`` given."""
    residual = tgt
    if layer.normalize_before:
        tgt = layer.norm1(tgt)
    if cache is None:
        tgt_q, tgt_q_mask = tgt, tgt_mask
    else:  # only the last position's query, as ESPnet's cached step
        tgt_q, residual, tgt_q_mask = tgt[:, -1:, :], residual[:, -1:, :], tgt_mask[:, -1:, :]
    x = residual + layer.dropout(layer.self_attn(tgt_q, tgt, tgt, tgt_q_mask))
    if not layer.normalize_before:
        x = layer.norm1(x)
    residual = x
    if layer.normalize_before:
        x = layer.norm2(x)
    ca = layer.src_attn  # MultiHeadedAttention.forward without a mask, keys and values given
    q = ca.q_norm(heads(ca, x, ca.linear_q))
    scores = torch.matmul(q, mk.transpose(-2, -1)) / math.sqrt(ca.d_k)
    x = residual + layer.dropout(ca.forward_attention(mv, scores, None))
    if not layer.normalize_before:
        x = layer.norm2(x)
    residual = x
    if layer.normalize_before:
        x = layer.norm3(x)
    x = residual + layer.dropout(layer.feed_forward(x))
    if not layer.normalize_before:
        x = layer.norm3(x)
    return x if cache is None else torch.cat([cache, x], dim=1)


@functools.cache
def _cached_transformer_scorer() -> type:
    base = import_espnet("espnet.nets.scorer_interface").BatchScorerInterface
    return type("CachedTransformerScorer", (_CachedTransformerScoring, base),
                {"__module__": __name__, "__doc__": _CachedTransformerScoring.__doc__})


def __getattr__(name: str):
    # CachedTransformerScorer subclasses an ESPnet class: made on first use (PEP 562), so
    # that importing this module imports no ESPnet
    if name == "CachedTransformerScorer":
        return _cached_transformer_scorer()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---------------------------------------------------------------------------- RNN decoder
def supports_rnn(decoder) -> bool:
    """Whether ``decoder`` is an RNN decoder :func:`rnn_score` computes exactly: ESPnet2's
    ``RNNDecoder``, one encoder, LSTM cells, one additive attention (``add``)."""
    rnn = import_espnet("espnet2.asr.decoder.rnn_decoder")
    att = import_espnet("espnet.nets.pytorch_backend.rnn.attentions")
    return (type(decoder) is rnn.RNNDecoder and decoder.num_encs == 1
            and decoder.dtype == "lstm" and not decoder.context_residual
            and not decoder.replace_sos and len(decoder.att_list) == 1
            and type(decoder.att_list[0]) is att.AttAdd)


def rnn_attention_keys(decoder, memory: torch.Tensor) -> torch.Tensor:
    """The additive attention's projection of the encoder output ``memory`` (T, D):
    (1, T, att_dim), what ESPnet's ``AttAdd`` computes after each reset."""
    return decoder.att_list[0].mlp_enc(memory.unsqueeze(0))


def rnn_score(decoder, token: int, state: dict, memory: torch.Tensor, keys: torch.Tensor):
    """ESPnet's ``RNNDecoder.score`` for the last unit ``token`` of a prefix, in eval mode:
    (log-probabilities of the next unit, the state after ``token``, in ESPnet's format).
    ``keys``: :func:`rnn_attention_keys` of ``memory``."""
    att = decoder.att_list[0]
    enc_h = memory.unsqueeze(0)  # (1, T, D)
    ey = decoder.embed(torch.tensor([token], device=memory.device))  # (1, E)
    dec_z = state["z_prev"][0].view(1, att.dunits)
    e = att.gvec(torch.tanh(keys + att.mlp_dec(dec_z).view(1, 1, att.att_dim))).squeeze(2)
    w = F.softmax(2.0 * e, dim=1)  # AttAdd's default scaling; one unpadded sequence: no mask
    c = torch.sum(enc_h * w.view(1, enc_h.shape[1], 1), dim=1)
    x = torch.cat((ey, c), dim=1)
    z_list, c_list = [], []
    for i, cell in enumerate(decoder.decoder):  # LSTM cells (supports_rnn)
        z, c_i = cell(x, (state["z_prev"][i], state["c_prev"][i]))
        z_list.append(z)
        c_list.append(c_i)
        x = z
    logp = F.log_softmax(decoder.output(z_list[-1]), dim=1).squeeze(0)
    return logp, {"c_prev": c_list[:], "z_prev": z_list[:], "a_prev": w,
                  "workspace": (0, z_list, c_list)}
