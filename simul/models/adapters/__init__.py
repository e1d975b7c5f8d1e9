"""The model adapters, one per model family, behind the seam :mod:`simul.models.adapter`
(what policies call on a model); :mod:`simul.models.loader` picks the one that fits."""
