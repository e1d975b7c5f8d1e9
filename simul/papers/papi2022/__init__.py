"""Papi, Gaido, Negri, Turchi 2022 — "Does simultaneous speech translation need simultaneous
models?" (Findings of EMNLP 2022): one offline-trained model, wait-k over detected source
words applied at inference time only (policy ``wait_k_words``).

Two ideas, a module each; every name below is importable from here:

- :mod:`simul.papers.papi2022.offline`: the offline-trained models decoded simultaneously,
  fixed and adaptive word detection (§3's pre-decision at inference time; §5–§7): the sweep
  (:func:`spec`), Tables 1–2, Figures 1–3 of the offline models, both language pairs side
  by side, and the claims on them (:func:`claims`, :func:`pair_claims`);
- :mod:`simul.papers.papi2022.trained`: the offline model beside the same model trained in
  simultaneous mode (§3's question, §5's answer): the fine-tuned Conformers
  (:func:`trained_spec`, :func:`trained_claims`) and P22's k_train grid of Figures 1–2
  (:func:`grid_spec`, :func:`figure_grid`, :func:`grid_claims`);
- :mod:`simul.papers.papi2022.common`: what both use: k_test and the detections, footnote
  6's latency regimes, the sweep entry of wait-k over words, a summary's curves and the gaps
  between them, and every finding (:data:`FINDINGS`, one declaration).

Notebook: ``notebooks/papi2022.ipynb``.
"""

from simul.papers.papi2022.common import (
    DETECTIONS,
    FINDINGS,
    KS,
    MEDIUM_LATENCY_MS,
    REGIMES_MS,
    WORD_MS,
    curve_gaps,
    offline_bleu,
    panel,
    points,
    wait_k_words,
)
from simul.papers.papi2022.offline import (
    ROLES,
    RUNAWAY_FILTER,
    claims,
    corpus_word_ms,
    encoder_type,
    figure3,
    figure_detection,
    fixed_avoid_eos,
    label,
    mean_word_ms,
    models_of,
    pair_claims,
    pair_models,
    silence_runaway_warning,
    spec,
    table1,
    table2,
)
from simul.papers.papi2022.trained import (
    GRID_LANE,
    TRAINED_MODELS,
    by_avoid_eos,
    figure_grid,
    figure_trained,
    grid_claims,
    grid_models,
    grid_name,
    grid_spec,
    trained_claims,
    trained_spec,
    trained_table,
)

KNOWN_GAPS: dict[str, str] = {}
"""The claims that the full run (``make reproduce``) contradicts, with why: strict xfails of
``tests/test_reproduce_full.py``. None on the last full run (corpus v3, en-de and en-es,
40 tst-COMMON segments; analysis in ``docs/reference/claims.md``); an undecided claim is
not a gap."""

__all__ = [
    "DETECTIONS", "FINDINGS", "GRID_LANE", "KNOWN_GAPS", "KS", "MEDIUM_LATENCY_MS",
    "REGIMES_MS", "ROLES", "RUNAWAY_FILTER", "TRAINED_MODELS", "WORD_MS", "by_avoid_eos",
    "claims", "corpus_word_ms", "curve_gaps", "encoder_type", "figure3", "figure_detection",
    "figure_grid", "figure_trained", "fixed_avoid_eos", "grid_claims", "grid_models",
    "grid_name", "grid_spec", "label", "mean_word_ms", "models_of", "offline_bleu",
    "pair_claims", "pair_models", "panel", "points", "silence_runaway_warning", "spec",
    "table1", "table2", "trained_claims", "trained_spec", "trained_table", "wait_k_words",
]
