"""Summary statistics of a corpus: what `simul corpus info` prints."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import yaml

from simul.corpus import check_built, find_split_dir, load, manifest
from simul.corpus.built import built_sizes, built_splits, not_built

SPLITS = ("train", "dev", "tst-COMMON", "tst-HE")
_PAIR = re.compile(r"[a-z]{2,3}-[a-z]{2,3}")
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_SENTENCE_END = re.compile(r"[.?!](?:\s|$)")
_INNER_PUNCT = re.compile(r"[,.?!;:](?=.*\w)")


def sentences(text: str) -> int:
    """Sentences in a segment's text: its "." / "?" / "!" ends (at least one)."""
    return max(1, len(_SENTENCE_END.findall(text.strip())))


def inner_punctuation(text: str) -> bool:
    """Whether ``text`` has punctuation before its last word (a comma, a sentence end, ...)."""
    return bool(_INNER_PUNCT.search(text))


def vocabulary(lines) -> set[str]:
    """Lower-cased word types (letters only; punctuation and digits dropped)."""
    return {w.lower() for line in lines for w in _WORD.findall(line)}


def _yaml(split_dir: Path, split: str) -> list[dict]:
    return yaml.load((split_dir / "txt" / f"{split}.yaml").read_text(), Loader=yaml.CSafeLoader)


def engines(root: str | Path, pair: str, split: str) -> list[str]:
    """The synthesizer of every segment, in corpus order ("" where the yaml names none)."""
    check_built(root, split)  # a split not spoken yet has no yaml: say how to speak it
    return [e.get("engine", "") for e in _yaml(find_split_dir(root, pair, split), split)]


def _subdirs(path: Path) -> list[Path]:
    try:
        return sorted(c for c in path.iterdir() if not c.name.startswith(".") and c.is_dir())
    except OSError:
        return []


def pairs_on_disk(root: str | Path) -> tuple[str, ...]:
    """The language pairs under ``root``, sorted: folders named like ``en-de`` holding a
    ``data`` folder, ``root`` itself or up to two levels below it (as
    :func:`simul.corpus.find_split_dir` looks for them)."""
    root = Path(root)
    found = set()
    if _PAIR.fullmatch(root.name) and (root / "data").is_dir():
        found.add(root.name)
    level = [root]
    for _ in range(3):
        children = [c for base in level for c in _subdirs(base)]
        found |= {c.name for c in children if _PAIR.fullmatch(c.name) and (c / "data").is_dir()}
        level = children
    return tuple(sorted(found))


def _progress(items: list, desc: str, unit: str, show: bool):
    """``items`` with a tqdm bar on stderr (what a command reads for seconds), or as they are."""
    if not show:
        return items
    from tqdm import tqdm

    return tqdm(items, desc=desc, unit=unit, leave=False)


def unspoken(root: str | Path) -> tuple[str, ...]:
    """The splits of a simul-built corpus at ``root`` that have their text only (not spoken
    yet: :func:`simul.corpus.mini.build.add_splits`); () for MuST-C."""
    found = check_built(root)
    if found is None:
        return ()
    return tuple(s for s in built_sizes(found) if s not in built_splits(found))


def info(root: str | Path, pairs: tuple[str, ...] | None = None,
         splits: tuple[str, ...] = SPLITS, progress: bool = False) -> pd.DataFrame:
    """One row per (pair, split) present under ``root`` and spoken; ``pairs``: those on
    disk. ``progress``: a bar on stderr, a step per split read."""
    missing = unspoken(root)
    if pairs is None:
        pairs = pairs_on_disk(root)
    present = []
    for pair in pairs:
        for split in (s for s in splits if s not in missing):
            try:
                present.append((pair, split, find_split_dir(root, pair, split)))
            except ValueError:
                continue
    rows = []
    for pair, split, split_dir in _progress(present, "reading the splits", "split", progress):
        segs = list(load(root, pair, split, with_audio=False))
        durations = pd.Series([s.duration_ms / 1000 for s in segs])
        entries = _yaml(split_dir, split)
        voices = {e["voice"] for e in entries if "voice" in e}
        engines = pd.Series([e.get("engine", "") for e in entries])
        n_sent = pd.Series([sentences(s.source) for s in segs])
        rows.append({
            "pair": pair, "split": split, "segments": len(segs),
            "hours": round(durations.sum() / 3600, 2),
            "mean_s": round(durations.mean(), 2), "max_s": round(durations.max(), 2),
            "src_words": sum(len(s.source.split()) for s in segs),
            "src_vocab": len(vocabulary(s.source for s in segs)),
            "tgt_vocab": len(vocabulary(s.target for s in segs)),
            "speakers": len({s.speaker_id for s in segs}),
            "voices": len(voices) if voices else None,
            # share of the audio spoken by festival (the rest: espeak-ng); None for MuST-C
            "festival_%": (round(100 * durations[engines == "festival"].sum()
                                 / durations.sum(), 1) if engines.any() else None),
            "1_sent": int((n_sent == 1).sum()), "2_sent": int((n_sent == 2).sum()),
            "3+_sent": int((n_sent >= 3).sum()),
            "sent/seg": round(n_sent.mean(), 2),
            "inner_punct_%": round(100 * sum(inner_punctuation(s.target) for s in segs)
                                   / len(segs), 1),
        })
    if not rows:
        raise FileNotFoundError(f"{root}: no split of {pairs} found")
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- reordering
def reordering(root: str | Path, pairs: tuple[str, ...] | None = None,
               split: str = "dev", progress: bool = False) -> tuple[pd.DataFrame, dict]:
    """One row per pair with ``split``: its pooled crossing share and mean wait (see
    :mod:`simul.corpus.reordering`) and the alignment they use; and the pairs' links
    (:class:`~simul.corpus.reordering.SplitLinks`) by pair. ``progress``: a bar on stderr,
    a step per pair (an eflomal fit, the first time, takes a while)."""
    from simul.corpus import reordering as r

    check_built(root)
    rows, by_pair = [], {}
    present = []
    for pair in pairs_on_disk(root) if pairs is None else pairs:
        try:
            find_split_dir(root, pair, split)
        except ValueError:
            continue
        present.append(pair)
    for pair in _progress(present, f"aligning {split}", "pair", progress):
        links = r.corpus_links(root, pair, split)
        fig = links.figures()
        by_pair[pair] = links
        rows.append({"pair": pair, "split": split, "segments": fig.segments,
                     "links": fig.links, "crossing_%": round(100 * fig.crossing_share, 1),
                     "mean_wait": round(fig.mean_wait, 2), "alignment": links.alignment})
    return pd.DataFrame(rows), by_pair


# A German clause that makes a simultaneous translator wait for its verb:
# a subordinate clause, a comma then a conjunction or a relative pronoun ...
_SUBORDINATE = re.compile(r",\s+(?:weil|dass|als|wenn|obwohl|bevor|nachdem|während|der|die|"
                          r"das|den|dem)\b")
# ... or a perfect: a form of haben/sein in a clause (between , . ? ! ; :) whose last word
# starts with "ge" (the participle at the clause's end), a few "ge" words that are no
# participles aside.
_AUX = frozenset("habe hast hat haben habt bin bist ist sind seid".split())
_NOT_PARTICIPLES = frozenset("gegen gestern gern gerne genug gerade genau gemeinsam "
                             "gelb gelbe gelben gelber gelbes gefährlich".split())


def verb_final_clause(german: str) -> bool:
    """Whether ``german`` has a subordinate clause (a comma, then weil, dass, als, wenn,
    obwohl, bevor, nachdem, während, der, die, das, den or dem) or a perfect-tense clause
    (a form of haben/sein and, as the clause's last word, one starting with "ge")."""
    if _SUBORDINATE.search(german):
        return True
    for clause in re.split(r"[,.?!;:]", german.lower()):
        words = clause.split()
        if (len(words) >= 2 and _AUX & set(words[:-1]) and words[-1].startswith("ge")
                and words[-1] not in _NOT_PARTICIPLES and len(words[-1]) > 4):
            return True
    return False


def samples(targets: list[str], n: int = 15, n_clause: int = 5) -> list[tuple[int, bool]]:
    """``(segment index, verb-final clause)`` of ``n`` segments: the first ``n_clause``
    whose target has a :func:`verb_final_clause`, then the first others."""
    clause = [i for i, t in enumerate(targets) if verb_final_clause(t)][:n_clause]
    taken = set(clause)
    others = [i for i in range(len(targets)) if i not in taken][:n - len(clause)]
    return [(i, True) for i in clause] + [(i, False) for i in others]


def main_info(root: str | Path, split: str = "dev", reorder: bool = True,
              progress: bool = True) -> int:
    """``simul corpus info``: :func:`info` as a table; then, unless ``reorder`` is False,
    :func:`reordering` of ``split`` and sample segments with their alignment for every
    pair with gold links. ``progress``: bars on stderr while it reads and aligns."""
    from simul.corpus import reordering as r

    print(info(root, progress=progress).to_string(index=False), flush=True)
    missing = unspoken(root)
    if missing:
        from simul.corpus import manifest_root
        base = manifest_root(root)
        found = manifest.read(base)
        for name in missing:
            print(f"{not_built(base, name, found)}; its text is there")
    if not reorder:
        return 0
    table, by_pair = reordering(root, split=split, progress=progress)
    print(f"\nreordering of {split} (crossing_%: links that cross another link, of all links;\n"
          "mean_wait: source words past the diagonal to hear before writing a target word, mean\n"
          "over aligned target words; eflomal: the intersection of its forward and reverse links)")
    if table.empty:
        print(f"  no pair has a split {split!r}")
        return 0
    print(table.to_string(index=False))
    for pair, links in by_pair.items():
        if links.alignment != r.GOLD:
            continue
        src, tgt = pair.split("-")
        picks = samples(links.targets)
        n_clause = sum(c for _, c in picks)
        print(f"\n{pair} {split}: {len(picks)} sample segments (0-based index) as {src} | {tgt} "
              f"| alignment (source→target, in target order):\n* the first {n_clause} with a "
              f"subordinate or perfect-tense clause, then the first {len(picks) - n_clause} "
              "others")
        for i, clause in picks:
            s, t = links.sources[i], links.targets[i]
            print(f"{'*' if clause else ' '} {i:4d}  {s} | {t} | "
                  f"{r.readable(links.links[i], s, t)}")
    return 0
