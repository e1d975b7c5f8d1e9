"""Translation quality with sacrebleu: corpus BLEU (13a, mixed case) and chrF, with signatures;
transcription quality (an ASR model's): corpus word error rate with jiwer."""

from __future__ import annotations

import string
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import sacrebleu


@dataclass(frozen=True)
class Quality:
    bleu: float
    chrf: float
    bleu_signature: str
    chrf_signature: str
    n: int
    length_ratio: float = float("nan")  # BLEU's hypothesis / reference length (13a tokens)


BLEU_STATISTICS = ("sys_len", "ref_len", "correct_1", "correct_2", "correct_3", "correct_4",
                   "total_1", "total_2", "total_3", "total_4")
"""The sufficient statistics of BLEU per segment, in sacrebleu's order: hypothesis and
reference length (13a tokens), then the matching and the hypothesis n-grams, n = 1 … 4."""


def bleu_statistics(hypotheses: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """BLEU's sufficient statistics (:data:`BLEU_STATISTICS`) of each segment, one reference
    each: an array (segments, 10). Summed over any subset of the segments (a bootstrap
    resample, with repeats) they give that subset's corpus BLEU (:func:`bleu_of`): the one
    BLEU path of simul, :func:`corpus_quality`'s too."""
    return _statistics(hypotheses, references)[1]


def _statistics(hypotheses: Sequence[str], references: Sequence[str]
                ) -> tuple[sacrebleu.metrics.BLEU, np.ndarray]:
    """The BLEU metric that read ``references`` (its signature knows their number) and the
    per-segment statistics of :func:`bleu_statistics`."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses for {len(references)} references")
    bleu = sacrebleu.metrics.BLEU()
    stats = bleu._extract_corpus_statistics(list(hypotheses), [list(references)])
    return bleu, np.asarray(stats, dtype=float).reshape(len(hypotheses),
                                                        len(BLEU_STATISTICS))


def bleu_of(statistics: np.ndarray) -> float:
    """Corpus BLEU (sacrebleu's default: 13a, exponential smoothing) from statistics summed
    over segments (a vector of :data:`BLEU_STATISTICS`), as sacrebleu's ``corpus_score``."""
    stats = np.asarray(statistics, dtype=float)
    if stats.shape != (len(BLEU_STATISTICS),):
        raise ValueError(f"BLEU statistics: a vector of {len(BLEU_STATISTICS)} summed counts, "
                         f"not an array of shape {stats.shape}")
    return sacrebleu.metrics.BLEU()._compute_score_from_stats(stats.tolist()).score


def corpus_quality(hypotheses: list[str], references: list[str]) -> Quality:
    """Corpus BLEU (from :func:`bleu_statistics`) and chrF of ``hypotheses`` against one
    reference each."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses for {len(references)} references")
    bleu, stats = _statistics(hypotheses, references)
    chrf = sacrebleu.metrics.CHRF()
    summed = stats.sum(axis=0)
    c = chrf.corpus_score(hypotheses, [references])
    sys_len, ref_len = summed[0], summed[1]
    return Quality(bleu_of(summed), c.score, str(bleu.get_signature()),
                   str(chrf.get_signature()), len(hypotheses),
                   sys_len / ref_len if ref_len else float("nan"))


def normalize_for_wer(text: str) -> str:
    """``text`` as WER compares it on MuST-C (ESPnet's ``lc.rm`` transcripts, its
    ``remove_punctuation.pl``): lowercased, every punctuation mark deleted but the
    apostrophe (so "don't" stays one word), runs of white space collapsed to one space.
    The corpus's transcripts are cased and punctuated; an ASR's errors are its words."""
    kept = "".join(c for c in text.lower()
                   if c == "'" or not (c in string.punctuation
                                       or unicodedata.category(c).startswith("P")))
    return " ".join(kept.split())


def word_error_rate(hypotheses: list[str], references: list[str]) -> float:
    """Corpus WER (substitutions + deletions + insertions over reference words, a
    fraction) of ``hypotheses`` against one reference each, both sides normalised by
    :func:`normalize_for_wer`; the alignment is jiwer's."""
    import jiwer

    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses for {len(references)} references")
    if not references:
        return float("nan")
    return jiwer.process_words([normalize_for_wer(r) for r in references],
                               [normalize_for_wer(h) for h in hypotheses]).wer


def wer_signature() -> str:
    """How :func:`word_error_rate` scores, in the style of sacrebleu's signatures."""
    from importlib.metadata import version

    return f"wer|jiwer:{version('jiwer')}|case:lc|punct:removed-but-apostrophe|space:collapsed"
