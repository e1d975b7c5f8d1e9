"""Importing ESPnet without side effects.

ESPnet's tokenizer module imports ``g2p_en``, which calls ``nltk.download`` at import time
when its data is missing; with no network that prints errors (or waits on the network).
simul never uses g2p, so the download is refused while ESPnet is imported. Other noise is
silenced for good (in every process that imports ESPnet through here, sweep workers too):
the "Failed to import Flash Attention" line its attention module prints on import (CPU
builds have none), the ``torch.cuda.amp.autocast`` FutureWarning its ST model raises on
every forward, and the beam search's "max output length" warnings (simul caps output
lengths on purpose).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import logging
import warnings

warnings.filterwarnings("ignore", message=r".*torch\.cuda\.amp\.autocast.*",
                        category=FutureWarning)
logging.getLogger("espnet.nets.beam_search").setLevel(logging.ERROR)


@contextlib.contextmanager
def quiet_espnet_imports():
    import nltk

    original = nltk.download
    nltk.download = lambda *args, **kwargs: False
    logging.getLogger("root").setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore", FutureWarning)
            yield
    finally:
        nltk.download = original


def import_espnet(module: str):
    """``importlib.import_module(module)`` for an espnet/espnet2 module, quietly."""
    with quiet_espnet_imports():
        return importlib.import_module(module)
