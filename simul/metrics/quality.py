"""Translation quality with sacrebleu: corpus BLEU (13a, mixed case) and chrF, with signatures."""

from __future__ import annotations

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
