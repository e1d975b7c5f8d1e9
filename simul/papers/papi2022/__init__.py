"""Papi, Gaido, Negri, Turchi 2022 — "Does simultaneous speech translation need simultaneous
models?" (Findings of EMNLP 2022): one offline-trained model, wait-k over detected source
words applied at inference time only (policy ``wait_k_words``).

Notebook: ``notebooks/papi2022.ipynb``.
"""

from simul.papers.papi2022.offline import (
    DETECTIONS,
    FINDINGS,
    GRID_LANE,
    KNOWN_GAPS,
    KS,
    MEDIUM_LATENCY_MS,
    REGIMES_MS,
    ROLES,
    RUNAWAY_FILTER,
    TRAINED_MODELS,
    WORD_MS,
    by_avoid_eos,
    claims,
    corpus_word_ms,
    curve_gaps,
    encoder_type,
    figure3,
    figure_detection,
    figure_grid,
    figure_trained,
    fixed_avoid_eos,
    grid_claims,
    grid_models,
    grid_name,
    grid_spec,
    label,
    mean_word_ms,
    models_of,
    offline_bleu,
    pair_claims,
    pair_models,
    panel,
    points,
    silence_runaway_warning,
    spec,
    table1,
    table2,
    trained_claims,
    trained_spec,
    trained_table,
    wait_k_words,
)

__all__ = [
    "DETECTIONS", "FINDINGS", "GRID_LANE", "KNOWN_GAPS", "KS", "MEDIUM_LATENCY_MS",
    "REGIMES_MS", "ROLES", "RUNAWAY_FILTER", "TRAINED_MODELS", "WORD_MS", "by_avoid_eos",
    "claims", "corpus_word_ms", "curve_gaps", "encoder_type", "figure3", "figure_detection",
    "figure_grid", "figure_trained", "fixed_avoid_eos", "grid_claims", "grid_models",
    "grid_name", "grid_spec", "label", "mean_word_ms", "models_of", "offline_bleu",
    "pair_claims", "pair_models", "panel", "points", "silence_runaway_warning", "spec",
    "table1", "table2", "trained_claims", "trained_spec", "trained_table", "wait_k_words",
]
