"""Offline ST models: the seam policies talk to (:mod:`simul.models.adapter`), the adapters
behind it, ESPnet extensions, training recipes and the shipped checkpoints."""
