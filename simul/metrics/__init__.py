"""Metrics: quality (sacrebleu) and latency (SimulEval semantics)."""
