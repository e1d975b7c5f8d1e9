"""Importing ESPnet without side effects: :func:`import_espnet`.

What is refused or silenced, and why:

- ``nltk.download``, while ESPnet is imported: ESPnet's tokenizer module imports ``g2p_en``,
  which downloads its data at import time when it is missing; with no network that prints
  errors or waits. simul never uses g2p.
- stdout while ESPnet is imported: its attention module prints "Failed to import Flash
  Attention" on CPU builds, which have none.
- for good, in every process that imports ESPnet through here (sweep workers too): the
  ``torch.cuda.amp.autocast`` FutureWarning its ST model raises on every forward; the beam
  search's "max output length" warnings (simul caps output lengths on purpose); and the
  "make_pad_mask with a list of lengths is not tracable" warning the RNN decoder's
  attention logs for every new encoder output, i.e. once per read of a BLSTM policy
  (simul traces nothing).
- typeguard's ``@typechecked``, made a no-op: ESPnet decorates hundreds of functions with
  it, and it re-parses and re-compiles each one when its module is imported — most of the
  import time of ``espnet2.tasks.st`` (≈ 11 s of 17 s on a 2-core machine), paid by every
  sweep worker, notebook kernel and training process — then checks argument types on
  every call. Those checks are a debugging aid (typeguard skips them under ``python -O``).
  ``SIMUL_ESPNET_TYPECHECK=1`` keeps them on.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import logging
import os
import sys
import warnings

warnings.filterwarnings("ignore", message=r".*torch\.cuda\.amp\.autocast.*",
                        category=FutureWarning)
logging.getLogger("espnet.nets.beam_search").setLevel(logging.ERROR)


def _not_pad_mask_tracing(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith("Using make_pad_mask with a list of lengths")


logging.getLogger().addFilter(_not_pad_mask_tracing)  # ESPnet logs it on the root logger


def _no_typecheck(target=None, **_options):
    """typeguard's ``typechecked`` as ``python -O`` makes it: the target unchanged."""
    return (lambda t: t) if target is None else target


@contextlib.contextmanager
def quiet_espnet_imports():
    import nltk
    import typeguard

    if os.environ.get("SIMUL_ESPNET_TYPECHECK", "") not in ("1", "true", "yes"):
        typeguard.typechecked = _no_typecheck  # before ESPnet's `from typeguard import …`

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
    """``importlib.import_module(module)`` for an espnet/espnet2 module, quietly. A module
    already imported is returned as it is: decoding steps call this on their hot path."""
    loaded = sys.modules.get(module)
    if loaded is not None:
        return loaded
    with quiet_espnet_imports():
        return importlib.import_module(module)
