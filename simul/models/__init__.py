"""Offline ST models: the ESPnet2 adapter, training recipes and the shipped checkpoints."""
