"""A model's card (``card.md``: what it is, the command that made it, its measured quality)
and the summary line ``simul models`` prints for it.
"""

from __future__ import annotations

from pathlib import Path

import torch

from simul.models import registry
from simul.models.registry import MODELS_DIR


def summary_line(name: str | registry.Model) -> str:
    """What ``simul models`` prints for a shipped model (a name or its
    :class:`~simul.models.registry.Model`): its corpus version, then per test split the
    greedy BLEU (per synthesizer in brackets) and the beam BLEU; an ASR model's WER instead
    (its attention decoder's greedy and beam, then its CTC's greedy, which the cascade
    reads), an MT model's BLEU on the gold transcripts. A cascade is named with its two
    models."""
    model = registry.model(name)
    name = model.label
    if model.family == "cascade":
        try:
            asr, mt = model.parts
        except ValueError as e:
            return f"{name}  (a cascade that does not load: {e})"
        return f"{name}  (cascade: ASR {asr.directory.name} → MT {mt.directory.name})"
    try:
        task = model.task
    except ValueError as e:
        return f"{name}  ({e})"
    label = {"asr": "ASR, ", "mt": "MT of the gold transcripts, "}.get(task, "")
    head = f"{name}  ({label}trained and scored on corpus v{registry.corpus_version(model)}"
    head += ": stale, retrain on the current corpus)" if registry.stale(model) else ")"
    m = registry.metrics(model)
    if not m:
        return head + "  not evaluated (simul models eval NAME --into-model)"
    score, what = ("wer", "WER ") if task == "asr" else ("bleu", "")
    rows = {}
    for key, r in m.items():
        split, beam = key.split("/")
        how = {"beam1": "greedy", "ctc": "CTC greedy"}.get(beam, beam)
        cell = f"{how} {what}{r[score]:.1f}"
        if r.get("by_engine"):
            cell += " (" + ", ".join(f"{e} {v[score]:.1f}"
                                     for e, v in r["by_engine"].items()) + ")"
        rows.setdefault(split, []).append(cell)
    return head + "".join(f"\n  {split:11s} " + "   ".join(cells)
                          for split, cells in rows.items())


def _recipe_of(name: str, command: str) -> Path | None:
    """The recipe a model was trained with: its own name's, else the one its command line
    trains (``simul train RECIPE --set …`` for a model of a family, e.g. one per λ; ``simul
    meta-train RECIPE …`` for a meta-learning recipe's)."""
    from simul.models.training.meta_train import RECIPES as META_RECIPES
    from simul.models.training.train import RECIPES

    words = command.split()
    trains = {"train": RECIPES, "meta-train": META_RECIPES}
    candidates = [(RECIPES, name)]
    if len(words) > 2 and words[0] == "simul" and words[1] in trains:
        candidates.append((trains[words[1]], words[2]))
    return next((where / f"{candidate}.yaml" for where, candidate in candidates
                 if (where / f"{candidate}.yaml").is_file()), None)


def _kept_line(state: dict, modules: list[str]) -> str:
    """The parent's modules' tensors the child's file still holds: the running statistics
    that training moved under frozen weights (:func:`simul.models.parent.split`)."""
    from simul.models import parent

    kept = [k for k in state if parent._in(k, modules)]
    if not kept:
        return ""
    kinds = _and(sorted({k.rsplit(".", 1)[-1] for k in kept}))
    return f", but for the {len(kept)} running statistics that training moved ({kinds})"


def _and(words: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return " and ".join([", ".join(words[:-1]), words[-1]] if len(words) > 1 else words)


def _monotonic_line(how: dict, pre_decision: str = "fixed") -> str:
    blocks = (f"fixed pre-decision blocks of {how['step_ms']:g} ms" if pre_decision == "fixed"
              else f"oracle {pre_decision} blocks, one per {pre_decision} read at its end")
    return ("- monotonic multihead attention (simul.models.extensions.mma_decoder, MMA-IL): "
            f"every head of every decoder layer stops over {blocks}, encoder frames of "
            f"{how['frame_ms']:g} ms; latency weight λ = "
            f"{how['latency_weight']:g}, variance weight {how['variance_weight']:g}, noise on "
            f"the monotonic energies σ = {how['noise_std']:g}; decoded by the mma policy "
            "(greedy, the whole input: `simul models eval --beams 1`)")


def _simultaneous_line(how: dict) -> str:
    ks = how["k_train"]
    which = (f"k_train = {ks}" if isinstance(ks, int) else
             f"multi-path, k_train drawn per batch from {ks}")
    if how.get("source") == "text":  # a text MT trained with wait-k over source words
        return ("- trained in simultaneous mode (simul.models.extensions.waitk_decoder): "
                f"wait-k over source words (Ma et al. 2019), {which}: target word w attends to the "
                "encoder states of the first k + w source words; decoded as ESPnet's "
                "Transformer decoder")
    if how.get("step", "word") == "unit":  # Han et al. 2020's wait-k with a stride
        return ("- trained in simultaneous mode (simul.models.extensions.waitk_decoder): "
                f"wait-k with a stride, {which}, one target unit per stride of "
                f"{how['word_ms']:g} ms of audio (unit t sees the first (k + t) strides), "
                f"encoder frames of {how['frame_ms']:g} ms; decoded as ESPnet's Transformer "
                "decoder")
    if how.get("detection") == "adaptive":  # P22 §2.2's adaptive strategy
        return ("- trained in simultaneous mode (simul.models.extensions.waitk_decoder): "
                f"wait-k over source words, {which}, words by adaptive detection: the greedy "
                "transcript of the model's own source CTC over the utterance's encoder "
                "output, a word where its first unit is emitted (target word w sees the "
                "frames read when the CTC has begun k + w words); decoded as ESPnet's "
                "Transformer decoder")
    return ("- trained in simultaneous mode (simul.models.extensions.waitk_decoder): "
            f"wait-k over source words, {which}, a word every {how['word_ms']:g} ms of audio "
            f"({how['detection']} detection), encoder frames of {how['frame_ms']:g} ms; "
            "decoded as ESPnet's Transformer decoder")


def _asr_table(results: dict) -> list[str]:
    """The card's lines for an ASR model's metrics.json (:func:`asr_summary`)."""
    engines = sorted({e for r in results.values() for e in r.get("by_engine", {})})
    lines = ["Offline word error rate (jiwer; full splits of the mini corpus) of the "
             "transcripts against the English source text, both lowercased, punctuation but "
             "the apostrophe removed, spaces collapsed; WER per synthesizer of the speech. "
             "Greedy and beam: the attention decoder's transcripts; CTC greedy: the CTC's "
             "greedy transcript of the whole segment, which the cascade policy feeds the MT:",
             "",
             "| split | decoding | WER % | " + "".join(f"{e} | " for e in engines) + "ms/utt |",
             "|---" * (4 + len(engines)) + "|"]
    for key, r in results.items():
        split, beam = key.split("/")
        how = {"beam1": "greedy", "ctc": "CTC greedy (what the cascade reads)"}.get(
            beam, beam.replace("beam", "beam "))
        per = "".join(f"{r['by_engine'][e]['wer']:.2f} | " if e in r.get("by_engine", {})
                      else "– | " for e in engines)
        lines.append(f"| {split} | {how} | {r['wer']:.2f} | {per}{r['ms_per_utterance']:.0f} |")
    if results:
        lines += ["", f"Signature: `{next(iter(results.values()))['signature']}`"]
    return lines


def _augmentation_line(info: dict) -> list[str]:
    """What the training speech went through (simul.json's ``augmentation``, from the recipe
    as run); nothing for a model packed before it was recorded."""
    aug = info.get("augmentation")
    if aug is None:
        return []
    parts = []
    if aug.get("speed_perturb"):
        parts.append("speed " + " / ".join(f"{f:g}" for f in aug["speed_perturb"]))
    if aug.get("gain_db"):
        # baked into each speed copy at export; without copies (simul meta-train) drawn per read
        per = "copy" if aug.get("speed_perturb") else "read"
        parts.append("a level per {} over {:g} to {:+g} dB".format(per, *aug["gain_db"]))
    if aug.get("rooms"):
        low, high = aug["rt60"]
        parts.append(f"{aug['rooms']} simulated rooms, RT60 {low:g}–{high:g} s "
                     f"({aug['rir_prob']:.0%} of reads)")
    if aug.get("babble") or aug.get("coloured"):
        parts.append(f"noise ({aug['babble']} babble, {aug['coloured']} coloured) at "
                     f"{aug['snr_db'][0]:g}–{aug['snr_db'][1]:g} dB SNR ({aug['noise_prob']:.0%} "
                     "of reads)")
    if not parts:
        return ["- augmentation: none (the corpus speech as is)"]
    return [f"- augmentation (simul.augment, seed {aug.get('seed', 0)}): {'; '.join(parts)}"]


def _cost_line(out: Path, info: dict | None = None) -> list[str]:
    """What training cost, from ``learning_curve.csv`` (ESPnet's train and valid seconds of
    every epoch, resumed runs included), or from ``simul meta-train``'s ``cost.json`` (its
    stages' process CPU time, the start's included); none without either."""
    import pandas as pd

    cost = (info or {}).get("training_cost")
    if cost:
        parts = []
        while cost:
            minutes = f"{cost['cpu_seconds'] / 60:.0f} min"
            counted = cost.get("counted_steps", cost["steps"])
            if counted < cost["steps"]:  # invocations killed before cost.json kept time
                minutes += f" for the last {counted} of them; the others' time was not kept"
            parts.append(f"{cost['stage']} {cost['steps']} steps ({minutes})")
            cost = cost.get("start")
        return [f"- training cost: {' after '.join(parts)} of process CPU time, one thread "
                "(simul meta-train's cost.json)"]
    path = out / "learning_curve.csv"
    if not path.is_file():
        return []
    curve = pd.read_csv(path)
    seconds = sum(curve[c].fillna(0).sum() for c in ("train_seconds", "valid_seconds")
                  if c in curve)
    if not seconds:
        return []
    hours, minutes = divmod(round(seconds / 60), 60)
    return [f"- training cost: {len(curve)} epochs, {hours} h {minutes:02d} min of ESPnet "
            "train and valid time (learning_curve.csv), one core"]


def write_card(name: str | registry.Model, root: Path = MODELS_DIR) -> Path:
    """``card.md``: what the model is, the command that made it, its measured BLEU (an
    ASR model's WER). ``name``: a model in ``root``, or a
    :class:`~simul.models.registry.Model` (``root`` unused)."""
    model = name if isinstance(name, registry.Model) else registry.model(root / name)
    out, name = model.directory, model.directory.name
    task = model.task
    info = model.info
    conf = model.config
    from simul.models import parent

    state = torch.load(out / "model.pth", map_location="cpu")
    n_own = sum(v.numel() for v in state.values() if v.is_floating_point())
    inherited = parent.info(out)
    if inherited:  # the whole model: this file and the modules its parent supplies
        whole = torch.load(parent.assembled(out, out / "model.pth"), map_location="cpu")
        n_params = sum(v.numel() for v in whole.values() if v.is_floating_point())
    recipe = _recipe_of(name, info.get("command") or "")
    about = [line[2:] for line in recipe.read_text().splitlines()
             if line.startswith("# ")] if recipe is not None else []
    lines = [f"# {name}", "", *about, "",
             f"- pair: {info['pair']}; units: {conf.get('token_type')} "
             f"({len(conf['token_list'])} target units)",
             f"- encoder: {conf['encoder']} {conf.get('encoder_conf', {})}",
             f"- decoder: {conf['decoder']} {conf.get('decoder_conf', {})}",
             *([f"- parameters: {n_params / 1e6:.2f} M, of which {n_own / 1e6:.2f} M in its "
                f"file ({(out / 'model.pth').stat().st_size / 2**20:.1f} MiB): the "
                f"{_and(inherited['modules'])} of `{inherited['model']}` (sha256 "
                f"{inherited['sha256'][:12]}…) "
                f"{'is' if len(inherited['modules']) == 1 else 'are'} not shipped again"
                f"{_kept_line(state, inherited['modules'])}; the loader puts "
                f"{'it' if len(inherited['modules']) == 1 else 'them'} back"] if inherited else
               [f"- parameters: {n_own / 1e6:.2f} M; "
                f"file {(out / 'model.pth').stat().st_size / 2**20:.1f} MiB"]),
             f"- averaged snapshots: {', '.join(info['averaged'])}; weights stored in "
             f"{info.get('stored', 'float32')}, computed in float32",
             *([f"- started from (ESPnet init_param, file:source:module): "
                f"{', '.join(info['initialized_from'])}"] if info.get("initialized_from")
               else []),
             *([f"- continues the model packed before under this name "
                f"({info['continues']['epochs']} epochs, averaged "
                f"{', '.join(info['continues']['averaged'] or [])}), every module: its "
                f"epochs come first in the learning curve and the training cost"]
               if info.get("continues") else []),
             *([f"- frozen while training: {', '.join(info['frozen'])}"]
               if info.get("frozen") else []),
             *([_simultaneous_line(info["simultaneous_training"])]
               if info.get("simultaneous_training") else []),
             *([_monotonic_line(info["monotonic_attention"],
                                (conf.get("decoder_conf") or {}).get("pre_decision", "fixed"))]
               if info.get("monotonic_attention") else []),
             *_augmentation_line(info),
             *_cost_line(out, info),
             f"- trained on: mini corpus, builder version "
             f"{info.get('corpus_builder_version', 'unrecorded')}",
             "", "Made by:", "", "```", info.get("command") or f"simul train {name}",
             f"simul models pack RUN/exp {name} --pair {info['pair']} "
             f"--average {len(info['averaged'])}",
             f"simul models eval {name} --into-model", "```", ""]
    results = registry.metrics(model)
    if task == "asr":
        return _finish_card(out, info, lines + _asr_table(results),
                            "; its valid cer and wer are the attention decoder's, "
                            "teacher-forced, valid cer_ctc the CTC's greedy, fractions", task)
    lines += [("Offline quality of translating the gold English transcripts" if task == "mt"
               else "Offline quality") + " (sacrebleu, full splits of the mini corpus); BLEU "
              "per synthesizer of the source speech; length: BLEU's hypothesis/reference "
              "length ratio:", ""]
    engines = sorted({e for r in results.values() for e in r.get("by_engine", {})})
    lines += ["| split | decoding | BLEU | chrF | " + "".join(f"{e} | " for e in engines)
              + "length | ms/utt |", "|---" * (6 + len(engines)) + "|"]
    for key, r in results.items():
        split, beam = key.split("/")
        how = "greedy" if beam == "beam1" else beam.replace("beam", "beam ")
        per = "".join(f"{r['by_engine'][e]['bleu']:.2f} | " if e in r.get("by_engine", {})
                      else "– | " for e in engines)
        ratio = f"{r['length_ratio']:.2f}" if "length_ratio" in r else "–"
        lines.append(f"| {split} | {how} | {r['bleu']:.2f} | {r['chrf']:.2f} | {per}{ratio} "
                     f"| {r['ms_per_utterance']:.0f} |")
    if results:
        lines += ["", f"Signature: `{next(iter(results.values()))['signature']}`"]
    ends = [(k, r["sentence_ends"]) for k, r in results.items() if "sentence_ends" in r]
    if ends:
        lines += ["", "Segments of two or more sentences whose hypothesis has as many sentence "
                  "ends as the reference: " + "; ".join(
                      f"{k.replace('/beam1', ' greedy').replace('/beam', ' beam ')} "
                      f"{100 * e['same_count']:.1f} % of {e['n']}" for k, e in ends) + "."]
    return _finish_card(out, info, lines, "; its valid BLEU is teacher-forced", task)


def _finish_card(out: Path, info: dict, lines: list[str], about_valid: str,
                 task: str = "st") -> Path:
    """The card's learning-curve part (with the dev curve of ``pack --dev-utterances``,
    :data:`simul.zoo.curves.DEV_CURVE`), then ``card.md`` written."""
    source = ("simul meta-train's teacher-forced dev loss and accuracy per snapshot; its "
              "epoch is a snapshot's number" if "training_cost" in info else
              f"ESPnet's per-epoch train/valid statistics{about_valid}")
    lines += ["", f"Learning curve: `learning_curve.csv` and `learning_curve.png` ({source})."]
    if (out / "learning_curve.png").is_file():
        lines += ["", "![learning curve](learning_curve.png)", ""]
    if "dev_wer_ctc_averaged" in info:
        lines += [f"WER of the CTC's greedy transcripts (what the cascade reads) of the first "
                  f"{info['dev_utterances']} dev segments: {info['dev_wer_ctc_averaged']:.2f} % "
                  "for the averaged model; per kept snapshot in the column `dev_wer_ctc`."]
    elif "dev_bleu_greedy_averaged" in info:
        what = ("Greedy BLEU of translating the gold English transcripts of" if task == "mt"
                else "Greedy BLEU on")
        lines += [f"{what} the first {info['dev_utterances']} dev segments: "
                  f"{info['dev_bleu_greedy_averaged']:.2f} for the averaged model; per kept "
                  "snapshot in the column `dev_bleu_greedy`."]
    (out / "card.md").write_text("\n".join(lines) + "\n")
    return out / "card.md"


PAPERS = (
    ("conformer_bpe_en-de_mma*", "M20 (MMA)"),
    ("conformer_bpe_en-de_meta_*", "H20 Table 7"),
    ("conformer_bpe_en-de_k?_s*", "H20 Table 6"),
    ("conformer_bpe_en-??_waitk?", "P22 §3, H20 Table 6"),
    ("conformer_bpe_en-??_multipath", "P22 §3"),
    ("conformer_bpe_en-de", "P22, M20, K22, H20"),
    ("conformer_bpe_en-es", "P22"),
    ("transformer_bpe_en-??_waitk*_*", "P22 Figs. 1–2"),
    ("transformer_bpe_en-??", "P22 Table 1"),
    ("blstm_char_en-pt", "N21 Table 2"),
    ("blstm_char_en-??", "N21 Table 1"),
    ("blstm_bpe-*_en-pt", "N21 Fig. 2"),
    ("mt_transformer_bpe_en-de_waitk?", "H20 Table 4"),
    ("mt_transformer_bpe_en-de_multipath", "N21 Fig. 3, H20 Table 4"),
    ("mt_transformer_bpe_en-??", "N21 Fig. 3"),
    ("asr_conformer_bpe_en", "N21 Fig. 3"),
    ("asr_transformer_bpe_en", "P22 Table 1"),
    ("cascade_en-??*", "N21 Fig. 3"),
)
"""The papers each shipped model reproduces (the README's Citing, in short: N21 Nguyen et
al. 2021, P22 Papi et al. 2022, M20 Ma et al. 2020, K22 Polák et al. 2022, H20 Han et al.
2020), by name pattern (fnmatch), the first match: what ``simul models`` and
docs/reference/models.md's table say (tests/test_models_zoo.py checks they agree)."""


def papers(name: str) -> str:
    """The papers a shipped model reproduces (:data:`PAPERS`); "" for a model of none."""
    import fnmatch

    return next((what for pattern, what in PAPERS if fnmatch.fnmatchcase(name, pattern)), "")


def listed_pair(name: str | registry.Model) -> str:
    """The pair ``simul models`` shows: a model's own (a cascade's MT's; an ASR model hears
    only the source language), "?" where its metadata does not say."""
    try:
        model = registry.model(name)
        if model.parts is not None:
            return listed_pair(model.parts[1])
        found = model.pair or "?"
        return found.split("-")[0] if model.task == "asr" else found
    except ValueError:
        return "?"


def main_list() -> int:
    """``simul models``: every shipped model's name, pair and papers in columns, then its
    :func:`summary_line` (corpus, offline quality)."""
    names = registry.shipped()
    if not names:
        print("no shipped models yet (data/models/ is empty)")
        return 0
    models = {name: registry.model(name) for name in names}  # each resolved once
    rows = [(name, listed_pair(models[name]), papers(name) or "–") for name in names]
    widths = [max(len(row[c]) for row in [("model", "pair", "papers"), *rows])
              for c in range(3)]
    print(f"{'model':<{widths[0]}}  {'pair':<{widths[1]}}  {'papers':<{widths[2]}}  "
          "offline quality (N21 … H20: the papers of the README's Citing)")
    for name, pair, paper in rows:
        line = summary_line(models[name])
        print(f"{name:<{widths[0]}}  {pair:<{widths[1]}}  {paper:<{widths[2]}}"
              f"{line[len(name):]}")
    return 0
