"""Decoding a corpus split: one record per segment with any policy (offline is the reference
point), and the offline text of a cascade's halves (an MT model's translations of the gold
transcripts, an ASR model's CTC transcripts)."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from simul.corpus import DEFAULT_ROOT, find_split_dir, load
from simul.decoding.simulate import simulate
from simul.models import device as devices
from simul.models import registry
from simul.models.adapter import Adapter, ModelError, TextMTAdapter
from simul.policies.base import Policy
from simul.policies.cascade import CascadeWaitK
from simul.policies.offline import Offline
from simul.records import Record


def records(model: Adapter, policy: Policy, *, model_name: str, pair: str, split: str,
            corpus_root=DEFAULT_ROOT, max_utterances: int | None = None,
            progress: bool = True, skip: Collection[int] = (),
            total: int | None = None) -> Iterator[Record]:
    """One record per segment of ``split``, in corpus order; ``skip``: indices of segments
    left out (already decoded), ``total``: how many the progress bar expects."""
    if getattr(model, "ctc_only", False):
        raise ModelError(f"{model_name}: an ASR model with a CTC and no attention decoder "
                         "(ctc_weight 1.0) is read through its CTC (a cascade's ASR; its "
                         "transcripts: simul models eval), not decoded by a policy")
    segs = (seg for seg in load(corpus_root, pair, split, limit=max_utterances)
            if seg.index not in skip)
    for seg in tqdm(segs, desc=f"{policy.name} {model_name} {split}", unit="utt",
                    disable=not progress, total=max_utterances if total is None else total):
        yield simulate(model, policy, seg, model_name=model_name)


def offline_records(model: Adapter, *, beam: int = 1, **kw) -> Iterator[Record]:
    """Read the whole segment, then decode (greedy, or ESPnet beam search): every word's
    delay is the source length; elapsed adds the compute time (ms)."""
    return records(model, Offline(beam=beam), **kw)


@dataclass(frozen=True)
class Translation:
    """A model's offline text for one segment (a text MT model's translation, an ASR
    model's CTC transcript) and the reference it is scored against; ``ms``: its compute
    time."""

    index: int
    prediction: str
    reference: str
    ms: float


def text_offline(model: TextMTAdapter, *, beam: int = 1,
                 maxlenratio: float = CascadeWaitK.maxlenratio, model_name: str, pair: str,
                 split: str, corpus_root=DEFAULT_ROOT, max_utterances: int | None = None,
                 progress: bool = True) -> Iterator[Translation]:
    """A text MT model's offline translations of the gold source transcripts of ``split``
    (no audio is read): the second half of a cascade behind a perfect ASR. The output is
    capped at ``maxlenratio`` units per source unit, as the ``cascade`` policy caps it."""
    clock = devices.timing_clock(model.device)
    segs = load(corpus_root, pair, split, with_audio=False, limit=max_utterances)
    for seg in tqdm(segs, desc=f"offline {model_name} {split}", unit="utt",
                    disable=not progress, total=max_utterances):
        start = clock()
        ids = model.translate(seg.source.split(), beam=beam, maxlenratio=maxlenratio)
        text = model.detokenize(ids)
        yield Translation(seg.index, text, seg.target, 1000.0 * (clock() - start))


def ctc_offline(model: Adapter, *, model_name: str, pair: str, split: str,
                corpus_root=DEFAULT_ROOT, max_utterances: int | None = None,
                progress: bool = True) -> Iterator[Translation]:
    """An ASR model's greedy CTC transcripts of the whole segments of ``split``, scored
    against their English source text: what the ``cascade`` policy feeds the MT once the
    segment has been heard (:meth:`simul.models.adapters.cascade.Cascade.asr_words`, the ASR's
    :meth:`~simul.models.adapters.espnet_st.ESPnetST.ctc_words` of the encoded audio; no attention
    decoder runs). ``ms``: encoding and CTC."""
    clock = devices.timing_clock(model.device)
    segs = load(corpus_root, pair, split, limit=max_utterances)
    for seg in tqdm(segs, desc=f"CTC {model_name} {split}", unit="utt",
                    disable=not progress, total=max_utterances):
        start = clock()
        words = model.ctc_words(model.encode(seg.audio))
        yield Translation(seg.index, " ".join(words), seg.source, 1000.0 * (clock() - start))


def _beam_setting(policy: str, settings: dict[str, str], beam: int | None) -> dict[str, str]:
    """``--beam`` as a setting of a policy that has a beam (``offline``, ``onlinization``);
    refused, in one line, for a policy that decodes greedily or when ``--set beam`` says
    otherwise."""
    from simul.policies import lookup

    if beam is None:
        return settings
    cls = lookup(policy)
    if "beam" not in {f.name for f in dataclasses.fields(cls)}:
        raise ValueError(f"--beam {beam}: policy {cls.name} has no beam (it decodes greedily); "
                         "leave --beam out")
    if "beam" in settings and str(settings["beam"]) != str(beam):
        raise ValueError(f"--beam {beam} and --set beam={settings['beam']} disagree: give one")
    return {**settings, "beam": str(beam)}


def done_indices(path: Path, *, model: str, policy: str, settings: dict, device: str,
                 segments: list) -> set[int]:
    """The utterances an interrupted ``simul decode`` already wrote to ``path`` (their
    indices), after checking that every record there was made by this run's model, policy,
    settings and device from one of its ``segments`` (the split, with their ids and
    references); ``ValueError`` naming the line and field otherwise. A last line cut in the
    middle (a killed process) is removed first."""
    from simul import records as records_io

    if records_io.cut_partial_line(path):
        print(f"{path}: its last line was cut off (a stopped run); removed, that utterance "
              "is decoded again", file=sys.stderr)
    wanted = {"model": model, "policy": policy, "device": device,
              "settings": json.loads(json.dumps(settings, default=str))}
    by_index = {seg.index: seg for seg in segments}
    done: set[int] = set()
    for n, rec in enumerate(records_io.read(path), 1):
        where = f"{path}: record {n}"
        for name, value in wanted.items():
            found = getattr(rec, name)
            if found != value:
                raise ValueError(f"{where}: {name} {found!r}, this run's is {value!r}: written "
                                 "with other settings (give --overwrite to start again, or "
                                 "another --out)")
        seg = by_index.get(rec.index)
        if seg is None or (rec.segment_id, rec.reference) != (seg.id, seg.target):
            raise ValueError(f"{where}: segment {rec.segment_id or rec.index!r} is not "
                             f"utterance {rec.index} of this run's split (another pair, split, "
                             "corpus or --max-utterances; give --overwrite to start again)")
        if rec.index in done:
            raise ValueError(f"{where}: utterance {rec.index} is there twice")
        done.add(rec.index)
    return done


def main_decode(*, model: str | Path | registry.Model, policy: str, settings: dict[str, str],
                out: str | Path,
                beam: int | None = None, pair: str | None = None, split: str = "tst-COMMON",
                corpus_root=DEFAULT_ROOT, max_utterances: int | None = None,
                device: str = "cpu", resume: bool = False, overwrite: bool = False) -> int:
    """``simul decode``: records of ``split`` under ``policy`` written to ``out`` as each
    utterance finishes, then their BLEU.

    The split is read in the model's own pair (:func:`simul.models.registry.pair_for`:
    ``pair`` is refused when it is not the model's, and needed when the model does not
    record one). An existing ``out`` is refused unless ``resume`` (decode only the
    utterances it lacks, when it was written by the same model, policy, settings and
    device) or ``overwrite``. Ctrl-C stops after the records finished so far (exit code
    130). Every check runs before the model loads and before ``out`` is touched."""
    from simul import records as records_io
    from simul.corpus import load
    from simul.decoding.session import check_fit
    from simul.metrics.quality import corpus_quality
    from simul.models import loader
    from simul.policies import make

    on = devices.check(device)  # before any work
    if resume and overwrite:
        raise ValueError("--resume and --overwrite: give one (continue the records in --out, "
                         "or start them again)")
    out = Path(out)
    if out.is_dir():
        raise ValueError(f"--out {out}: a directory; give a file (JSON lines)")
    settings = _beam_setting(policy, dict(settings), beam)
    the_policy = make(policy, settings)
    model = registry.model(model)  # resolved once: what follows reads the record
    pair = registry.pair_for(model, pair)
    find_split_dir(corpus_root, pair, split)  # a mistyped split fails before the model loads
    done: set[int] = set()
    if out.exists() and not overwrite:
        if not resume:
            raise ValueError(f"--out {out} exists: --resume continues it, --overwrite "
                             "replaces it")
        segments = list(load(corpus_root, pair, split, with_audio=False, limit=max_utterances))
        done = done_indices(out, model=str(model), policy=the_policy.name,
                            settings=the_policy.settings(), device=devices.label(on),
                            segments=segments)
        if len(done) == len(segments):
            print(f"{out}: all {len(done)} utterances are there already", file=sys.stderr)
    appender = records_io.Appender(out, append=resume)
    try:
        adapter = loader.load(model, on)
        for note in check_fit(adapter, the_policy):  # refuses a policy the model cannot serve
            print(f"note: {note}", file=sys.stderr)
        total = None if max_utterances is None else max_utterances - len(done)
        with appender:
            for rec in records(adapter, the_policy, model_name=str(model), pair=pair,
                               split=split, corpus_root=corpus_root,
                               max_utterances=max_utterances, skip=done, total=total):
                appender.add(rec)
    except KeyboardInterrupt:
        appender.close()
        kept = len(done) + appender.written
        print(f"simul: interrupted: {kept} finished records kept in {out} (--resume continues)"
              if kept else "simul: interrupted before an utterance finished: nothing written",
              file=sys.stderr)
        return 130
    recs = records_io.read(out) if out.exists() else []
    q = corpus_quality([r.prediction for r in recs], [r.reference for r in recs])
    resumed = f" ({len(done)} of them from before)" if done else ""
    print(f"{len(recs)} records → {out}{resumed}; BLEU {q.bleu:.2f}, length ratio "
          f"{q.length_ratio:.3f} ({q.bleu_signature})")
    return 0
