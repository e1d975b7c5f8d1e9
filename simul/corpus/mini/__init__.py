"""Builder of the embedded mini corpus (grammar → apertium → espeak-ng → MuST-C layout)."""
