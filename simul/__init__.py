"""simul: simultaneous speech translation with offline-trained ESPnet2 models.

The package's folders are its tiers, each importing only those below it (the contracts of
``pyproject.toml``): ``commands`` (the ``simul`` command line, ``reproduce``, ``confirm``)
→ ``papers`` (one module per paper, the notebooks' code) → ``analysis`` (claims, plots,
tables) → ``sweep`` and ``zoo`` (many decodes; shipped models' evaluation and cards) →
``decoding`` (a session over streamed audio, a split's decode, live input, the SimulEval
agent) → ``policies`` → ``models`` (the registry, ``adapters``, ESPnet ``extensions``,
``training``) → ``metrics`` → ``corpus`` and ``records``.
"""

from simul import _moved

__version__ = "0.6.0"

_moved.install()
