"""Importing ESPnet without side effects.

ESPnet's tokenizer module imports ``g2p_en``, which calls ``nltk.download`` at import time
when its data is missing; with no network that prints errors (or waits on the network).
simul never uses g2p, so the download is refused while ESPnet is imported.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import warnings


@contextlib.contextmanager
def quiet_espnet_imports():
    import nltk

    original = nltk.download
    nltk.download = lambda *args, **kwargs: False
    logging.getLogger("root").setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            yield
    finally:
        nltk.download = original


def import_espnet(module: str):
    """``importlib.import_module(module)`` for an espnet/espnet2 module, quietly."""
    with quiet_espnet_imports():
        return importlib.import_module(module)
