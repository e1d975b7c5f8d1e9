"""simul's additions to ESPnet2, registered with ESPnet's task class choices in one place
(:func:`register`): the training twin of the padded RNN encoder (``rnn_padded``), the
wait-k training decoder (``transformer_waitk``), MMA's decoder with its latency loss
(``transformer_mma``), the unidirectional text encoder of the wait-k MT
(``transformer_unidirectional``); and what they share with the adapters: the decoders'
cached scoring (:mod:`.decoder_scorers`) and MMA's expectations (:mod:`.mma`).
"""

from __future__ import annotations


def register() -> None:
    """Make every extension available to ESPnet's ST and MT tasks, by the names of a recipe's
    ``encoder:``/``decoder:``; idempotent. The modules import ESPnet, so they are imported
    here, when a model is built, and not when this package is."""
    from simul.models.extensions import (
        mma_decoder,
        rnn_padded,
        unidirectional_encoder,
        waitk_decoder,
    )

    for module in (rnn_padded, waitk_decoder, mma_decoder, unidirectional_encoder):
        module.register()
