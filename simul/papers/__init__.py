"""One module per paper, named as its notebook (``simul/papers/nguyen2021.py`` ↔
``notebooks/nguyen2021.ipynb``; a package of a module per idea for a paper with two,
:mod:`simul.papers.papi2022`): the paper's grid (as the spec function's defaults, which the
notebook's parameters cell spells out), its tables, the checks of its claims (see
:mod:`simul.analysis.claims`) and ``KNOWN_GAPS``, the claims that do not hold on the full run, each
with its reason."""
