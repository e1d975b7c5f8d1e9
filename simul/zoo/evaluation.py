"""Offline quality of a model on the test splits (``simul models eval``): BLEU and chrF
(ST; MT of the gold transcripts) or WER (ASR), overall and per synthesizer, greedy and beam;
written to ``metrics.json`` in an output folder (:data:`DEFAULT_OUT`/NAME by default), or,
in the maintainers' packing flow (``--into-model``), to the model's own ``metrics.json`` and
card, which ``simul models`` and the docs read.
"""

from __future__ import annotations

import json
from pathlib import Path

from simul.decoding import decode_split
from simul.models import registry
from simul.models.adapters.cascade import SpeechASR, TextMT
from simul.models.loader import load
from simul.zoo.card import write_card

DEFAULT_OUT = Path("runs") / "eval"
"""Where ``simul models eval`` writes a model's ``metrics.json`` (``runs/eval/NAME``,
relative to the working directory) unless told ``--out`` or ``--into-model``."""


def offline_summary(predictions: list[str], references: list[str],
                    engines: list[str]) -> dict:
    """Offline quality of one decoding of a split: BLEU/chrF overall and per synthesizer,
    BLEU's hypothesis/reference length ratio, and how often a segment of two or more
    reference sentences gets exactly as many sentence ends ("." "?" "!") in the hypothesis
    (what simultaneous policies need from an offline model on multi-sentence input)."""
    from simul.corpus.stats import sentences
    from simul.metrics.quality import corpus_quality

    if not len(predictions) == len(references) == len(engines):
        raise ValueError(f"{len(predictions)} predictions, {len(references)} references and "
                         f"{len(engines)} engines: one of each per segment")
    q = corpus_quality(predictions, references)
    out = {"bleu": round(q.bleu, 2), "chrf": round(q.chrf, 2), "n": q.n,
           "signature": q.bleu_signature, "length_ratio": round(q.length_ratio, 3)}
    by_engine = {}
    for engine in sorted(set(engines) - {""}):
        picked = [i for i, e in enumerate(engines) if e == engine]
        qe = corpus_quality([predictions[i] for i in picked], [references[i] for i in picked])
        by_engine[engine] = {"bleu": round(qe.bleu, 2), "chrf": round(qe.chrf, 2), "n": qe.n}
    if by_engine:
        out["by_engine"] = by_engine
    multi = [i for i, r in enumerate(references) if sentences(r) >= 2]
    if multi:
        same = sum(sentences(predictions[i]) == sentences(references[i]) for i in multi)
        out["sentence_ends"] = {"n": len(multi), "same_count": round(same / len(multi), 3)}
    return out


def asr_summary(predictions: list[str], references: list[str], engines: list[str]) -> dict:
    """Offline quality of one ASR decoding of a split: corpus WER in % (both sides
    lowercased, punctuation but the apostrophe removed, spaces collapsed:
    :func:`simul.metrics.quality.normalize_for_wer`) overall and per synthesizer."""
    from simul.metrics.quality import wer_signature, word_error_rate

    if not len(predictions) == len(references) == len(engines):
        raise ValueError(f"{len(predictions)} predictions, {len(references)} references and "
                         f"{len(engines)} engines: one of each per segment")
    out = {"wer": round(100 * word_error_rate(predictions, references), 2),
           "n": len(predictions), "signature": wer_signature()}
    by_engine = {}
    for engine in sorted(set(engines) - {""}):
        picked = [i for i, e in enumerate(engines) if e == engine]
        wer = word_error_rate([predictions[i] for i in picked], [references[i] for i in picked])
        by_engine[engine] = {"wer": round(100 * wer, 2), "n": len(picked)}
    if by_engine:
        out["by_engine"] = by_engine
    return out


def evaluate(name: str | Path | registry.Model, *, splits=("tst-COMMON", "tst-HE"), beams=(1, 5),
             max_utterances: int | None = None, progress: bool = True,
             corpus_root=None, out: str | Path | None = None,
             into_model: bool = False) -> dict:
    """Offline quality of a shipped model, or of a model packed elsewhere (a directory with
    ``simul.json``, e.g. a snapshot packed with ``--out-root`` to compare training runs):
    greedy and beam, written to ``out``/metrics.json (``out`` by default
    :data:`DEFAULT_OUT`/NAME); ``into_model``: to the model's own metrics.json and card
    instead (what a shipped model's card and ``simul models`` show). By the model's task
    (:func:`simul.models.registry.task`): an ST model's translations of the speech
    (:func:`offline_summary`), an ASR model's transcripts of it against the English source
    text (:func:`asr_summary`): its attention decoder's (``SPLIT/beamN``) and its CTC's
    greedy one of the whole segment (``SPLIT/ctc``, what the ``cascade`` policy feeds the
    MT, :func:`simul.decoding.decode_split.ctc_offline`), an MT model's translations of the gold
    English transcripts (:func:`offline_summary`; its synthesizer is the one that spoke the
    segment). ``corpus_root``: the mini corpus by default."""
    from simul.corpus import DEFAULT_ROOT, stats

    if into_model and out is not None:
        raise ValueError("--out and --into-model: the results go to one place (the model's "
                         "own folder, or DIR)")
    record = registry.model(name)  # resolved once: what follows reads the record
    model_dir = record.directory
    if not (model_dir / registry.INFO_FILE).is_file():
        raise ValueError(f"{model_dir}: not a packed model (no {registry.INFO_FILE}); pack a "
                         "training run first (simul models pack)")
    target = model_dir if into_model else Path(out or DEFAULT_OUT / model_dir.name)
    if target.exists() and not target.is_dir():
        raise ValueError(f"--out {target}: not a folder")
    pair = record.pair
    if pair is None:  # its references' language would be a guess
        raise ValueError(f"{model_dir / registry.INFO_FILE}: no field 'pair' (the language pair "
                         "the model translates, e.g. en-de)")
    task = record.task
    model = {"st": lambda: load(record), "asr": lambda: SpeechASR.from_dir(model_dir),
             "mt": lambda: TextMT.from_dir(model_dir)}[task]()
    if getattr(model, "greedy_only", False):  # an MMA model: its heads decide, no beam
        beams = (1,)
    if getattr(model, "ctc_only", False):  # an ASR model with no attention decoder
        beams = ()
    root = corpus_root or DEFAULT_ROOT
    results = {}
    for split in splits:
        engines = stats.engines(root, pair, split)
        where = {"model_name": model_dir.name, "pair": pair, "split": split, "corpus_root": root,
                 "max_utterances": max_utterances, "progress": progress}
        for beam in beams:
            kw = {**where, "beam": beam}
            if task == "mt":
                done = list(decode_split.text_offline(model, **kw))
                timed = [t.ms for t in done]
                summary = offline_summary([t.prediction for t in done],
                                          [t.reference for t in done],
                                          [engines[t.index] for t in done])
            else:
                recs = list(decode_split.offline_records(model, **kw))
                timed = [r.elapsed[0] - r.source_length for r in recs if r.elapsed]
                picked = [engines[r.index] for r in recs]
                predictions = [r.prediction for r in recs]
                summary = (asr_summary(predictions, [r.source_text for r in recs], picked)
                           if task == "asr" else
                           offline_summary(predictions, [r.reference for r in recs], picked))
            results[f"{split}/beam{beam}"] = {
                **summary, "ms_per_utterance": round(sum(timed) / max(len(timed), 1), 1)}
        if task == "asr":  # the transcript the cascade policy feeds the MT
            done = list(decode_split.ctc_offline(model, **where))
            timed = [t.ms for t in done]
            results[f"{split}/ctc"] = {
                **asr_summary([t.prediction for t in done], [t.reference for t in done],
                              [engines[t.index] for t in done]),
                "ms_per_utterance": round(sum(timed) / max(len(timed), 1), 1)}
    target.mkdir(parents=True, exist_ok=True)
    tmp = target / ".metrics.json.tmp"
    tmp.write_text(json.dumps(results, indent=1) + "\n")
    tmp.replace(target / "metrics.json")  # whole or not at all
    if into_model:
        write_card(record)
    return results




def report_line(name: str, key: str, r: dict) -> str:
    """One line of ``simul models eval``: a split and decoding's BLEU (per synthesizer),
    chrF, length ratio and sentence ends, or an ASR model's WER."""
    if "wer" in r:  # an ASR model
        engines = "".join(f", {e} {v['wer']:.2f}" for e, v in r.get("by_engine", {}).items())
        return (f"{name} {key}: WER {r['wer']:.2f} %{engines} ({r['n']} utt, "
                f"{r['ms_per_utterance']:.0f} ms/utt) {r['signature']}")
    engines = "".join(f", {e} {v['bleu']:.2f}" for e, v in r.get("by_engine", {}).items())
    ends = r.get("sentence_ends")
    ends = (f"; sentence ends as the reference's {100 * ends['same_count']:.1f} % of "
            f"{ends['n']}" if ends else "")
    return (f"{name} {key}: BLEU {r['bleu']:.2f}{engines}; chrF {r['chrf']:.2f}; "
            f"length {r['length_ratio']:.3f}{ends} ({r['n']} utt, "
            f"{r['ms_per_utterance']:.0f} ms/utt) {r['signature']}")


def main_eval(name: str | Path, *, max_utterances: int | None = None, beams=(1, 5),
              corpus_root=None, out: str | Path | None = None, into_model: bool = False) -> int:
    """``simul models eval``: :func:`evaluate`, a line per split and decoding, then where the
    results went."""
    model = registry.model(name)  # resolved once, for evaluate and the message
    results = evaluate(model, max_utterances=max_utterances, beams=tuple(beams),
                       corpus_root=corpus_root, out=out, into_model=into_model)
    for key, r in results.items():
        print(report_line(str(name), key, r))
    model_dir = model.directory
    where = (f"{model_dir}/metrics.json and card.md" if into_model else
             f"{Path(out or DEFAULT_OUT / model_dir.name) / 'metrics.json'}")
    print(f"wrote {where}")
    return 0
