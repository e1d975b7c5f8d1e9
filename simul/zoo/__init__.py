"""The model zoo: making shipped models out of training runs.

- :mod:`simul.zoo.pack`: a training run → a model directory (averaged weights, relative
  paths, ``simul.json``), with its learning curve (:mod:`simul.zoo.curves`);
- :mod:`simul.zoo.evaluation`: offline quality on the test splits → ``metrics.json``;
- :mod:`simul.zoo.card`: ``card.md`` and the line ``simul models`` prints.

Names → directories and the metadata a model directory holds are
:mod:`simul.models.registry`'s; loading a model is :func:`simul.models.loader.load`. The zoo
sits above the decoding path because packing and evaluating decode the dev and test splits
(:mod:`simul.decoding.decode_split`).
"""
