"""Metrics: quality (sacrebleu), latency (SimulEval semantics), and the words that output
units make (:mod:`simul.metrics.units`)."""
