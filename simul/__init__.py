"""simul: simultaneous speech translation with offline-trained ESPnet2 models."""

__version__ = "0.1.0"
