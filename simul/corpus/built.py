"""What a simul-built corpus is and holds, as its reader needs it without the builder: the
builder's versions (a corpus or a model trained on one is stale when they moved on), its
default place and split sizes, which splits a manifest says are spoken, and the one line
naming the command that speaks a split that is not (:mod:`simul.corpus.mini.build` writes
the corpus).
"""

from __future__ import annotations

from pathlib import Path

DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "data" / "mini"
"""Where ``simul corpus build`` writes the embedded corpus, and every command reads it."""

#: Bump when a change to the builder changes its output: the reader then calls a corpus stale.
BUILDER_VERSION = 3
#: The builder version that last changed each pair's files: a model trained on a pair is
#: stale only when its pair changed since (version 3 added en-de and left en-es and en-pt
#: byte-identical).
PAIR_VERSIONS: dict[str, int] = {"en-es": 2, "en-pt": 2, "en-de": 3}


def pair_version(pair: str) -> int:
    """The builder version of ``pair``'s files (see :data:`PAIR_VERSIONS`)."""
    return PAIR_VERSIONS.get(pair, BUILDER_VERSION)


#: Segments per split (each of one to three sentences).
SPLITS: dict[str, int] = {"train": 12000, "dev": 500, "tst-COMMON": 500, "tst-HE": 400}
#: Seconds per segment to speak a split with two workers on the 2-core reference machine,
#: for the time a build will take: train's 12,000 segments in ≈ 3.3 min, the full build's
#: 233 s apportioned by the CPU time of its steps (see docs/reference/performance.md).
SECONDS_PER_SEGMENT = 0.0165


def built_sizes(manifest: dict) -> dict[str, int]:
    """The sizes a corpus was built with, in :data:`SPLITS` order, the order the builder
    plans them in (``manifest.json`` keeps its keys sorted)."""
    sizes = manifest.get("sizes", {})
    order = [s for s in SPLITS if s in sizes] + [s for s in sizes if s not in SPLITS]
    return {s: sizes[s] for s in order}


def built_splits(manifest: dict) -> tuple[str, ...]:
    """The splits of a built corpus that are spoken (audio, yaml, alignments), in
    :data:`SPLITS` order; a manifest written before splits could be left out lists none
    and has them all."""
    spoken = manifest.get("splits", list(manifest.get("sizes", {})))
    return tuple(s for s in built_sizes(manifest) if s in spoken)


def minutes_to_build(segments: int) -> int:
    """About how many minutes speaking ``segments`` segments takes (at least 1)."""
    return max(1, round(segments * SECONDS_PER_SEGMENT / 60))


def not_built(root: str | Path, split: str, manifest: dict) -> str:
    """The one line saying that ``split`` of the corpus at ``root`` is not spoken yet, with
    the command that speaks it (the corpus's own seed and sizes: other settings would build
    another corpus) and about how long it takes."""
    seed, sizes = manifest.get("seed", 0), built_sizes(manifest)
    options = "" if Path(root).resolve() == DEFAULT_ROOT.resolve() else f" --corpus {root}"
    if seed:
        options += f" --seed {seed}"
    if sizes != SPLITS:
        options += " --sizes " + ",".join(f"{k}={v}" for k, v in sizes.items())
    return (f"{root}: split {split} is not built yet: `simul corpus build{options} --splits "
            f"{split}` (≈ {minutes_to_build(sizes.get(split, 0))} min)")
