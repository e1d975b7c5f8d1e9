"""One module per paper: its settings grids and the checks of its claims (see
:mod:`simul.claims`); the notebooks call these and show the results."""
