"""Translation quality with sacrebleu: corpus BLEU (13a, mixed case) and chrF, with signatures;
transcription quality (an ASR model's): corpus word error rate with jiwer."""

from __future__ import annotations

import string
import unicodedata
from dataclasses import dataclass

import sacrebleu


@dataclass(frozen=True)
class Quality:
    bleu: float
    chrf: float
    bleu_signature: str
    chrf_signature: str
    n: int
    length_ratio: float = float("nan")  # BLEU's hypothesis / reference length (13a tokens)


def corpus_quality(hypotheses: list[str], references: list[str]) -> Quality:
    """Corpus BLEU and chrF of ``hypotheses`` against one reference each."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses for {len(references)} references")
    bleu = sacrebleu.metrics.BLEU()
    chrf = sacrebleu.metrics.CHRF()
    b = bleu.corpus_score(hypotheses, [references])
    c = chrf.corpus_score(hypotheses, [references])
    return Quality(b.score, c.score, str(bleu.get_signature()), str(chrf.get_signature()),
                   len(hypotheses), b.sys_len / b.ref_len if b.ref_len else float("nan"))


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
