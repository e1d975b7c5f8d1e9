"""`simul models eval` of a cascade's halves: an ASR model's WER against the English source
text (its attention decoder's, and its CTC's greedy transcript, which the cascade reads), an
MT model's BLEU on the gold transcripts; and `simul models pack`'s dev curve of each. Worked
out by hand, and checked against jiwer and sacrebleu on the tiny ASR and MT models of the
cascade fixture (conftest.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jiwer
import numpy as np
import pytest
import sacrebleu
import soundfile as sf
import torch
import yaml

from simul.commands.cli import main
from simul.corpus import load_list
from simul.decoding import decode_split
from simul.metrics.quality import normalize_for_wer, word_error_rate
from simul.models import registry
from simul.models.adapter import ModelError
from simul.models.adapters.cascade import Cascade, SpeechASR, TextMT
from simul.zoo import curves, evaluation, pack
from simul.zoo.card import summary_line, write_card
from tests.conftest import CASCADE_CHARS, make_tiny_model, make_tiny_task_model, tiny_mt_config
from tests.test_mustc import tone

PAIR = "en-es"
# split → (talk, offset s, duration s, synthesizer, English source, Spanish target)
SPLITS = {
    "tst-COMMON": [("ted_1", 0.0, 0.8, "espeak-ng", "Hello, World!", "Hola, bebé."),
                   ("ted_1", 1.0, 0.9, "festival", "This is a test. Is it?",
                    "Es una prueba. ¿Lo es?"),
                   ("ted_2", 0.2, 1.0, "espeak-ng", "A bad cab, faded.",
                    "Una cabeza mala, desvaída."),
                   ("ted_2", 1.3, 0.6, "espeak-ng", "¡…!", "¡Bah!")],  # no words to hear
    "tst-HE": [("ted_3", 0.0, 0.7, "festival", "Vitamin D.", "Vitamina D."),
               ("ted_3", 0.9, 0.8, "espeak-ng", "Each bead had a face.",
                "Cada bebé tenía una cara.")],
    "dev": [("ted_3", 0.0, 1.0, "espeak-ng", "Plan D.", "Plan D."),
            ("ted_1", 0.5, 0.8, "festival", "Feed Ed.", "Alimenta a Ed."),
            ("ted_2", 1.0, 0.9, "espeak-ng", "A bed.", "Una cama.")],
}
TONES = {"ted_1": 330.0, "ted_2": 550.0, "ted_3": 440.0}


def talk_audio(talk: str) -> np.ndarray:
    """A talk's 2 s of audio: a tone; ted_3's is on and off every 0.3 s, where the tiny
    ASR's CTC writes a <space> between the tone's letters (a transcript of several words)."""
    audio = tone(2.0, TONES[talk])
    if talk == "ted_3":
        audio[(np.arange(audio.size) // 4800) % 2 == 1] = 0.0
    return audio


def write_corpus(root: Path, splits: dict) -> Path:
    """Splits of a MuST-C layout whose yaml names each segment's synthesizer."""
    for split, segments in splits.items():
        wav, txt = (root / PAIR / "data" / split / d for d in ("wav", "txt"))
        wav.mkdir(parents=True)
        txt.mkdir()
        for talk in {s[0] for s in segments}:
            sf.write(wav / f"{talk}.wav", talk_audio(talk), 16000)
        (txt / f"{split}.yaml").write_text("".join(
            f"- {{duration: {d}, offset: {o}, speaker_id: spk, wav: {talk}.wav, "
            f"engine: {engine}}}\n" for talk, o, d, engine, _, _ in segments))
        (txt / f"{split}.en").write_text("".join(f"{s[4]}\n" for s in segments))
        (txt / f"{split}.es").write_text("".join(f"{s[5]}\n" for s in segments))
    return root


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """Two test splits and a dev split (:data:`SPLITS`)."""
    return write_corpus(tmp_path_factory.mktemp("corpus"), SPLITS)


def run_dir(model_dir: Path, name: str, root: Path, task: str | None,
            snapshots: tuple[Path, ...] = (), log: str = "") -> Path:
    """``model_dir`` as an ESPnet training run's ``exp``: its model.pth as ``1epoch.pth``,
    then ``snapshots`` (state dicts of the same model) as the later epochs, ``log`` as
    train.log; with ``task``, the run keeps its recipe as ``simul train`` does
    (``recipe.yaml`` beside ``exp``)."""
    exp = root / f"run_{name}" / "exp"
    shutil.copytree(model_dir, exp)
    for epoch, state in enumerate((exp / "model.pth", *snapshots), start=1):
        shutil.copy(state, exp / f"{epoch}epoch.pth")
    (exp / "train.log").write_text(log)
    if task:
        (exp.parent / "recipe.yaml").write_text(yaml.safe_dump(
            {"simul": {"task": task, "pair": PAIR}, "espnet": {}}))
    return exp


def packed(model_dir: Path, name: str, root: Path, task: str | None) -> Path:
    """``model_dir`` as a one-snapshot training run packed by ``pack.pack``."""
    return pack.pack(run_dir(model_dir, name, root, task), name, pair=PAIR, n_average=1,
                    out_root=root / "models", corpus_root=root, progress=False)


def ctc_a_for_d(asr_dir: Path, out: Path) -> Path:
    """The tiny ASR with its CTC's outputs for "a" and "d" swapped: the same transcripts,
    with "a" wherever the fixture's CTC writes "d"."""
    shutil.copytree(asr_dir, out)
    state = torch.load(out / "model.pth")
    a, d = CASCADE_CHARS.index("a"), CASCADE_CHARS.index("d")
    for key in ("ctc.ctc_lo.weight", "ctc.ctc_lo.bias"):
        state[key][[a, d]] = state[key][[d, a]]
    torch.save(state, out / "model.pth")
    return out


def ctc_transcripts(model: SpeechASR, mt_dir: Path, corpus: Path, split: str,
                    limit: int | None = None) -> list[str]:
    """What the cascade policy reads of each whole segment: the words of
    ``Cascade.asr_words`` of the encoded audio, joined by spaces."""
    cascade = Cascade(model, TextMT.from_dir(mt_dir))
    return [" ".join(cascade.asr_words(cascade.encode(seg.audio)))
            for seg in load_list(corpus, PAIR, split, limit=limit)]


# jiwer's own normalisation as the reference (the sources have no apostrophes)
LC_RM = jiwer.Compose([jiwer.ToLowerCase(), jiwer.RemovePunctuation(),
                       jiwer.RemoveMultipleSpaces(), jiwer.Strip(),
                       jiwer.ReduceToListOfListOfWords()])


def jiwer_wer(refs: list[str], hyps: list[str]) -> float:
    return jiwer.wer(refs, hyps, reference_transform=LC_RM, hypothesis_transform=LC_RM)


def engines_of(split: str) -> list[str]:
    return [s[3] for s in SPLITS[split]]


# ----------------------------------------------------------------- WER, by hand
def test_normalisation_lowercases_strips_punctuation_but_apostrophes_and_collapses_spaces():
    assert normalize_for_wer("  Hello,   World! It's  FINE… — “ok”?") == "hello world it's fine ok"
    assert normalize_for_wer("¿Qué? ¡Sí!") == "qué sí"


def test_wer_two_substitutions_in_ten_words_ignoring_case_and_punctuation():
    ref = "The cat sat on the mat, and the dog barked."
    assert word_error_rate(["the cat sat in the hat and the dog barked"], [ref]) == 0.2
    assert word_error_rate(["THE CAT SAT ON THE MAT AND THE DOG BARKED!"], [ref]) == 0.0
    assert word_error_rate(["dont stop"], ["Don't stop!"]) == 0.5  # the apostrophe counts


def test_corpus_wer_pools_the_errors_of_all_segments():
    # 0 errors in 4 words, then "e f" → "x": a substitution and a deletion in 2 words;
    # 2 / 6, not the mean of the segments' 0 and 1
    assert word_error_rate(["a b c d", "x"], ["a b c d", "e f"]) == pytest.approx(2 / 6)


def test_asr_summary_splits_by_synthesizer():
    refs = ["A b c d.", "e f", "g h i j k", "l m"]
    hyps = ["a b c d", "e x", "g h", "l m n"]  # 0, 1 substitution, 3 deletions, 1 insertion
    s = evaluation.asr_summary(hyps, refs, ["espeak-ng", "festival", "festival", ""])
    assert s["wer"] == 38.46 and s["n"] == 4  # 5 errors / 13 words
    assert s["by_engine"] == {"espeak-ng": {"wer": 0.0, "n": 1},
                              "festival": {"wer": 57.14, "n": 2}}  # 4 / 7; "" is no engine
    assert s["signature"].startswith("wer|jiwer:4.0.0|case:lc")
    with pytest.raises(ValueError, match="one of each per segment"):
        evaluation.asr_summary(hyps, refs, ["festival"])


# ----------------------------------------------------------------- the tiny models
def test_asr_eval_scores_transcripts_against_the_source_text(cascade_dir, corpus, tmp_path,
                                                             monkeypatch):
    out = packed(cascade_dir.parent / "asr", "asr_tiny", tmp_path, task="asr")
    assert json.loads((out / "simul.json").read_text())["task"] == "asr"
    results = evaluation.evaluate(out, corpus_root=corpus, progress=False, into_model=True)
    assert json.loads((out / "metrics.json").read_text()) == results
    assert sorted(results) == ["tst-COMMON/beam1", "tst-COMMON/beam5", "tst-COMMON/ctc",
                               "tst-HE/beam1", "tst-HE/beam5", "tst-HE/ctc"]
    model = SpeechASR.from_dir(out)
    decoded = {}
    for key, r in results.items():
        split, how = key.split("/")
        assert set(r) == {"wer", "n", "signature", "by_engine", "ms_per_utterance"}
        if how == "ctc":  # what the cascade reads, by the cascade's own call
            hyps = ctc_transcripts(model, cascade_dir.parent / "mt", corpus, split)
        else:
            hyps = [rec.prediction for rec in decode_split.offline_records(
                model, model_name="asr_tiny", pair=PAIR, split=split,
                beam=int(how.removeprefix("beam")), corpus_root=corpus, progress=False)]
        assert any(hyps), "a model that hears nothing tests little"
        decoded[key] = hyps
        refs = [s[4] for s in SPLITS[split]]
        assert r["n"] == len(refs) and r["ms_per_utterance"] > 0
        assert r["wer"] == round(100 * jiwer_wer(refs, hyps), 2)
        for engine in ("espeak-ng", "festival"):
            picked = [i for i, e in enumerate(engines_of(split)) if e == engine]
            expected = jiwer_wer([refs[i] for i in picked], [hyps[i] for i in picked])
            assert r["by_engine"][engine] == {"wer": round(100 * expected, 2),
                                              "n": len(picked)}
    # by hand: the tiny ASR writes one word per segment, none of the source's, so each
    # segment costs its words (a substitution, the rest deletions), or one insertion where
    # the source has none ("¡…!"): 2 + 6 + 4 + 1 = 13 errors in 12 words; espeak-ng's
    # 2 + 4 + 1 in 6 words (against the Spanish targets: 12 errors in 12 words)
    hyps = decoded["tst-COMMON/beam1"]
    assert [len(h.split()) for h in hyps] == [1] * 4
    assert not any(h in s[4].lower() for h, s in zip(hyps, SPLITS["tst-COMMON"], strict=True))
    assert results["tst-COMMON/beam1"]["wer"] == 108.33
    assert results["tst-COMMON/beam1"]["by_engine"] == {"espeak-ng": {"wer": 116.67, "n": 3},
                                                        "festival": {"wer": 100.0, "n": 1}}
    # by hand, the CTC: on ted_3's gated tone (tst-HE) it writes two words where the
    # attention decoder writes one: "Vitamin D." ← "d d" (a substitution, a hit), "Each bead
    # had a face." ← "d d" (2 substitutions, 3 deletions): 6 errors in 7 words; the attention
    # decoder's "ggg…" costs every word, 7
    assert decoded["tst-HE/ctc"] == ["d d", "d d"]
    assert [len(h.split()) for h in decoded["tst-HE/beam1"]] == [1, 1]
    assert results["tst-HE/ctc"]["wer"] == round(100 * 6 / 7, 2) == 85.71
    assert results["tst-HE/beam1"]["wer"] == 100.0
    assert results["tst-HE/ctc"]["by_engine"] == {"espeak-ng": {"wer": 100.0, "n": 1},
                                                  "festival": {"wer": 50.0, "n": 1}}
    card = (out / "card.md").read_text()
    assert "| split | decoding | WER % | espeak-ng | festival | ms/utt |" in card
    he = results["tst-HE/beam5"]
    assert (f"| tst-HE | beam 5 | {he['wer']:.2f} | {he['by_engine']['espeak-ng']['wer']:.2f} "
            f"| {he['by_engine']['festival']['wer']:.2f} |") in card
    ctc = results["tst-COMMON/ctc"]
    assert (f"| tst-COMMON | CTC greedy (what the cascade reads) | {ctc['wer']:.2f} | "
            f"{ctc['by_engine']['espeak-ng']['wer']:.2f} | "
            f"{ctc['by_engine']['festival']['wer']:.2f} | {ctc['ms_per_utterance']:.0f} |"
            ) in card
    assert "BLEU" not in card
    monkeypatch.setattr(registry, "MODELS_DIR", out.parent)
    line = summary_line("asr_tiny")
    common = results["tst-COMMON/beam1"]
    assert "(ASR, trained and scored on corpus v" in line
    assert (f"tst-COMMON  greedy WER {common['wer']:.1f} (espeak-ng "
            f"{common['by_engine']['espeak-ng']['wer']:.1f}, festival "
            f"{common['by_engine']['festival']['wer']:.1f})") in line
    he_ctc = results["tst-HE/ctc"]
    assert (f"CTC greedy WER {he_ctc['wer']:.1f} (espeak-ng "
            f"{he_ctc['by_engine']['espeak-ng']['wer']:.1f}, festival "
            f"{he_ctc['by_engine']['festival']['wer']:.1f})") in line.split("tst-HE")[1]


def test_the_asr_eval_cli_prints_the_ctc_wer(cascade_dir, corpus, tmp_path, capsys):
    out = packed(cascade_dir.parent / "asr", "asr_cli", tmp_path, task="asr")
    assert main(["models", "eval", str(out), "--corpus", str(corpus), "--beams", "1",
                 "--max-utterances", "2", "--out", str(tmp_path / "eval")]) == 0
    printed = capsys.readouterr().out
    results = json.loads((tmp_path / "eval" / "metrics.json").read_text())
    assert not (out / "metrics.json").exists()  # the model's folder is left as it was
    assert printed.endswith(f"wrote {tmp_path / 'eval' / 'metrics.json'}\n")
    assert sorted(results) == ["tst-COMMON/beam1", "tst-COMMON/ctc", "tst-HE/beam1",
                               "tst-HE/ctc"]
    r = results["tst-HE/ctc"]
    assert r["n"] == 2
    assert f"{out} tst-HE/ctc: WER {r['wer']:.2f} %" in printed


def test_mt_eval_translates_the_gold_transcripts(cascade_dir, corpus, tmp_path, capsys):
    # no recipe.yaml beside the run: pack reads the task from the config (an embedded source)
    out = packed(cascade_dir.parent / "mt", "mt_tiny", tmp_path, task=None)
    assert json.loads((out / "simul.json").read_text())["task"] == "mt"
    assert main(["models", "eval", str(out), "--corpus", str(corpus), "--beams", "1",
                 "5", "--into-model"]) == 0
    printed = capsys.readouterr().out
    results = json.loads((out / "metrics.json").read_text())
    assert sorted(results) == ["tst-COMMON/beam1", "tst-COMMON/beam5", "tst-HE/beam1",
                               "tst-HE/beam5"]
    model = TextMT.from_dir(out)
    for key, r in results.items():
        split, beam = key.split("/beam")
        hyps = []
        for _, _, _, _, source, _ in SPLITS[split]:  # the adapter's calls, cap 2 × source
            enc = model.encode_words(source.split())
            hyp = (model.greedy(enc, maxlenratio=2.0) if beam == "1" else
                   model.beam_search(enc, beam=5, nbest=1, maxlenratio=2.0)[0])
            hyps.append(model.detokenize(hyp.tokens))
        assert any(hyps), "a model that writes nothing tests little"
        refs = [s[5] for s in SPLITS[split]]
        bleu = sacrebleu.corpus_bleu(hyps, [refs])
        assert r["bleu"] == round(bleu.score, 2) and r["n"] == len(refs)
        assert r["chrf"] == round(sacrebleu.corpus_chrf(hyps, [refs]).score, 2) > 0
        assert r["length_ratio"] == round(bleu.sys_len / bleu.ref_len, 3)
        for engine in ("espeak-ng", "festival"):
            picked = [i for i, e in enumerate(engines_of(split)) if e == engine]
            chrf = sacrebleu.corpus_chrf([hyps[i] for i in picked], [[refs[i] for i in picked]])
            assert r["by_engine"][engine]["chrf"] == round(chrf.score, 2)
            assert r["by_engine"][engine]["n"] == len(picked)
        assert r["ms_per_utterance"] > 0
        assert f"{out} {key}: BLEU {r['bleu']:.2f}" in printed
    assert "sentence_ends" in results["tst-COMMON/beam1"]  # "This is a test. Is it?"
    card = (out / "card.md").read_text()
    assert "Offline quality of translating the gold English transcripts" in card
    assert "| split | decoding | BLEU | chrF | espeak-ng | festival | length | ms/utt |" in card


def test_st_eval_is_unchanged(corpus, tmp_path):
    out = packed(make_tiny_model(tmp_path / "st", "rnn"), "st_tiny", tmp_path, task=None)
    assert json.loads((out / "simul.json").read_text())["task"] == "st"
    results = evaluation.evaluate(out, corpus_root=corpus, beams=(1,), progress=False,
                                  into_model=True)
    assert sorted(results) == ["tst-COMMON/beam1", "tst-HE/beam1"]
    r = results["tst-COMMON/beam1"]
    assert set(r) == {"bleu", "chrf", "n", "signature", "length_ratio", "by_engine",
                      "sentence_ends", "ms_per_utterance"}
    from simul.models.adapters.espnet_st import ESPnetST

    recs = list(decode_split.offline_records(ESPnetST.from_dir(out), model_name="st_tiny",
                                       pair=PAIR, split="tst-COMMON", corpus_root=corpus,
                                       progress=False))
    refs = [s[5] for s in SPLITS["tst-COMMON"]]
    assert [rec.reference for rec in recs] == refs  # scored against the translations
    assert r["bleu"] == round(sacrebleu.corpus_bleu([x.prediction for x in recs],
                                                    [refs]).score, 2)
    assert "| split | decoding | BLEU | chrF |" in (out / "card.md").read_text()


# ----------------------------------------------------------------- tasks and errors
def test_a_model_packed_without_a_recorded_task_is_read_from_its_config(cascade_dir,
                                                                       tmp_path):
    out = packed(cascade_dir.parent / "asr", "asr_old", tmp_path, task="asr")
    info = json.loads((out / "simul.json").read_text())
    del info["task"]
    (out / "simul.json").write_text(json.dumps(info))
    assert registry.task(out) == "asr"


def test_an_unknown_task_is_refused_naming_the_file_and_field(cascade_dir, tmp_path,
                                                              monkeypatch):
    out = packed(cascade_dir.parent / "mt", "odd", tmp_path, task="mt")
    info = json.loads((out / "simul.json").read_text())
    (out / "simul.json").write_text(json.dumps({**info, "task": "tts"}))
    with pytest.raises(ValueError, match=r"odd/simul\.json: field 'task': 'tts'"):
        evaluation.evaluate(out)
    monkeypatch.setattr(registry, "MODELS_DIR", out.parent)
    assert "field 'task': 'tts'" in summary_line("odd")  # the listing goes on


# ----------------------------------------------------------------- pack: the dev curve
ASR_LOG = (  # ESPnet's ASR trainer, as it logs on CPU (cer/wer: validation only)
    "[vm] 2026-11-25 20:01:02,003 (trainer:338) INFO: 1epoch results: [train] "
    "iter_time=1.234e-04, forward_time=0.512, loss_ctc=95.321, loss_att=60.500, acc=0.210, "
    "loss=70.946, backward_time=0.801, optim_step_time=0.050, optim0_lr0=4.000e-05, "
    "train_time=1.400, time=3 minutes and 2.5 seconds, total_count=200, [valid] "
    "loss_ctc=80.125, cer_ctc=0.850, loss_att=55.250, acc=0.300, cer=0.700, wer=1.000, "
    "loss=62.713, time=4.12 seconds, total_count=10, [att_plot] time=1.5 seconds, "
    "total_count=0\n"
    "[vm] 2026-11-25 20:04:10,500 (trainer:338) INFO: 2epoch results: [train] "
    "loss_ctc=40.000, loss_att=30.000, acc=0.450, loss=33.000, optim0_lr0=8.000e-05, "
    "time=3 minutes and 1 second, total_count=400, [valid] loss_ctc=35.500, "
    "cer_ctc=4.500e-01, loss_att=28.000, acc=0.520, cer=0.400, wer=0.900, loss=30.250, "
    "time=4 seconds, total_count=20\n")


def test_an_asr_learning_curve_keeps_espnets_losses_and_error_rates(tmp_path):
    (tmp_path / "train.log").write_text(ASR_LOG)
    rows = curves.learning_curve(tmp_path, "asr")
    assert rows[0] == {"epoch": 1, "train_seconds": 182.5, "train_loss_ctc": 95.321,
                       "train_loss_att": 60.5, "train_acc": 0.21, "train_loss": 70.946,
                       "valid_seconds": 4.12, "valid_loss_ctc": 80.125, "valid_cer_ctc": 0.85,
                       "valid_loss_att": 55.25, "valid_acc": 0.3, "valid_cer": 0.7,
                       "valid_wer": 1.0, "valid_loss": 62.713}
    assert rows[1]["valid_cer_ctc"] == 0.45 and rows[1]["valid_wer"] == 0.9
    # an ST run's curve keeps what it kept
    assert set(curves.learning_curve(tmp_path)[0]) == {
        "epoch", "train_seconds", "train_loss", "train_acc", "valid_seconds", "valid_loss",
        "valid_acc", "valid_cer_ctc"}


def csv_rows(path: Path) -> list[dict]:
    lines = [line.split(",") for line in path.read_text().splitlines()]
    return [dict(zip(lines[0], line, strict=True)) for line in lines[1:]]


def test_pack_of_an_asr_run_measures_the_ctc_wer_of_every_snapshot(cascade_dir, corpus,
                                                                    tmp_path):
    # epoch 1: the fixture's ASR; epoch 2: its CTC writes "a" for "d"; averaged: epoch 2
    later = ctc_a_for_d(cascade_dir.parent / "asr", tmp_path / "later")
    exp = run_dir(cascade_dir.parent / "asr", "asr", tmp_path, "asr",
                  snapshots=(later / "model.pth",), log=ASR_LOG)
    out = pack.pack(exp, "asr_dev", pair=PAIR, n_average=1, out_root=tmp_path / "models",
                   dev_utterances=2, corpus_root=corpus, progress=False)
    refs = [s[4] for s in SPLITS["dev"][:2]]  # the first 2 dev segments
    mt_dir = cascade_dir.parent / "mt"
    expected = {}
    for epoch in (1, 2):
        model = SpeechASR(out / "config.yaml", exp / f"{epoch}epoch.pth")
        hyps = ctc_transcripts(model, mt_dir, corpus, "dev", limit=2)
        expected[epoch] = round(100 * jiwer_wer(refs, hyps), 2)
    # by hand: "Plan D." ← "d d" (1 error) or "a a" (2); "Feed Ed." ← "d" or "a" (2 each)
    assert ctc_transcripts(SpeechASR.from_dir(later), mt_dir, corpus, "dev", limit=2) == [
        "a a", "a"]
    assert expected == {1: 75.0, 2: 100.0}
    rows = csv_rows(out / "learning_curve.csv")
    assert [r["epoch"] for r in rows] == ["1", "2"]
    assert [float(r["dev_wer_ctc"]) for r in rows] == [expected[1], expected[2]]
    assert [float(r["valid_cer_ctc"]) for r in rows] == [0.85, 0.45]  # ESPnet's, kept
    assert [float(r["valid_wer"]) for r in rows] == [1.0, 0.9]
    assert "dev_bleu_greedy" not in rows[0]
    info = json.loads((out / "simul.json").read_text())
    averaged = ctc_transcripts(SpeechASR.from_dir(out), mt_dir, corpus, "dev", limit=2)
    assert info["dev_utterances"] == 2
    assert info["dev_wer_ctc_averaged"] == round(100 * jiwer_wer(refs, averaged), 2) == 100.0
    assert "dev_bleu_greedy_averaged" not in info
    assert (out / "learning_curve.png").stat().st_size > 10_000
    card = write_card("asr_dev", root=out.parent).read_text()
    assert (f"first 2 dev segments: {info['dev_wer_ctc_averaged']:.2f} % for the averaged "
            "model; per kept snapshot in the column `dev_wer_ctc`") in card
    curve = [{k: float(v) for k, v in r.items() if v} for r in rows]
    panels = curves.plot_curve(curve, tmp_path / "curve.png", "asr")
    assert panels[2] == ["valid CER, CTC greedy (ESPnet)", "valid CER, teacher-forced (ESPnet)",
                         "valid WER, teacher-forced (ESPnet)",
                         "dev WER, CTC greedy (what the cascade reads)"]


# The tiny MT of seed 8 writes varied letters, one word; read with "f" and "<space>" swapped
# in its target units (the same network), it writes several words, so BLEU has n-grams
# to match.
MT_TARGET_UNITS = [{"f": "<space>", "<space>": "f"}.get(u, u) for u in CASCADE_CHARS]


def tiny_mt(directory: Path, seed: int) -> Path:
    return make_tiny_task_model(directory, "mt", tiny_mt_config(MT_TARGET_UNITS), seed=seed)


def greedy_translations(model: TextMT, sources: list[str]) -> list[str]:
    """The adapter's calls, as the cascade's MT decodes at the end: greedy, cap 2 × source."""
    return [model.detokenize(model.greedy(model.encode_words(s.split()), maxlenratio=2.0).tokens)
            for s in sources]


def test_pack_of_an_mt_run_measures_the_bleu_of_translating_the_gold_transcripts(tmp_path):
    first = tiny_mt(tmp_path / "mt", seed=8)
    second = tiny_mt(tmp_path / "mt_later", seed=9)
    sources = [s[4] for s in SPLITS["dev"]]
    own = greedy_translations(TextMT.from_dir(first), sources)
    assert len(own[0].split()) >= 4, "BLEU of a one-word hypothesis is 0: it tests little"
    # dev: the first segment's reference is epoch 1's own translation of it (BLEU > 0)
    dev = [(*s[:5], own[0] if i == 0 else s[5]) for i, s in enumerate(SPLITS["dev"])]
    corpus = write_corpus(tmp_path / "corpus", {"dev": dev})
    log = ("x INFO: 1epoch results: [train] loss=50.0, acc=0.1, time=10 seconds, "
           "total_count=5, [valid] loss=40.0, acc=0.2, bleu=1.5, time=1 second, "
           "total_count=1\n")
    exp = run_dir(first, "mt", tmp_path, "mt", snapshots=(second / "model.pth",), log=log)
    out = pack.pack(exp, "mt_dev", pair=PAIR, n_average=1, out_root=tmp_path / "models",
                   dev_utterances=2, corpus_root=corpus, progress=False)
    refs = [s[5] for s in dev[:2]]  # the Spanish of the first 2 dev segments
    expected = {}
    for epoch in (1, 2):
        model = TextMT(out / "config.yaml", exp / f"{epoch}epoch.pth")
        hyps = greedy_translations(model, sources[:2])
        expected[epoch] = round(sacrebleu.corpus_bleu(hyps, [refs]).score, 2)
    assert expected[1] > 0
    rows = csv_rows(out / "learning_curve.csv")
    assert [r["epoch"] for r in rows] == ["1", "2"]
    assert [float(r["dev_bleu_greedy"]) for r in rows] == [expected[1], expected[2]]
    assert rows[0]["valid_bleu"] == "1.5" and rows[1]["valid_bleu"] == ""
    assert "dev_wer_ctc" not in rows[0]
    info = json.loads((out / "simul.json").read_text())
    averaged = greedy_translations(TextMT.from_dir(out), sources[:2])  # epoch 2, float16
    assert info["dev_bleu_greedy_averaged"] == round(
        sacrebleu.corpus_bleu(averaged, [refs]).score, 2)
    assert "dev_wer_ctc_averaged" not in info
    card = write_card("mt_dev", root=out.parent).read_text()
    assert ("Greedy BLEU of translating the gold English transcripts of the first 2 dev "
            f"segments: {info['dev_bleu_greedy_averaged']:.2f} for the averaged model") in card
    curve = [{k: float(v) for k, v in r.items() if v} for r in rows]
    assert curves.plot_curve(curve, tmp_path / "curve.png", "mt")[2] == [
        "valid, teacher-forced (ESPnet)", "dev, greedy decoding of the gold transcripts"]
    assert curves.plot_curve(curve, tmp_path / "curve.png")[2] == [  # an ST run's labels
        "valid, teacher-forced (ESPnet)", "dev, greedy decoding"]


def ctc_only(asr_dir: Path, out: Path) -> Path:
    """``asr_dir`` with no attention decoder (ESPnet's ctc_weight 1.0): the same encoder and
    CTC, as N21's cascade ASR (asr_blstm_char_en) ships."""
    shutil.copytree(asr_dir, out)
    conf = yaml.safe_load((out / "config.yaml").read_text())
    conf.update(decoder=None, decoder_conf={})
    conf["model_conf"] = {**(conf.get("model_conf") or {}), "ctc_weight": 1.0}
    (out / "config.yaml").write_text(yaml.safe_dump(conf, allow_unicode=True))
    state = torch.load(out / "model.pth")
    torch.save({k: v for k, v in state.items() if not k.startswith("decoder.")},
               out / "model.pth")
    return out


def test_a_ctc_only_asr_is_scored_by_its_ctc_and_refused_by_a_policy(cascade_dir, corpus,
                                                                     tmp_path):
    full = packed(cascade_dir.parent / "asr", "asr_tiny", tmp_path, task="asr")
    whole = evaluation.evaluate(full, corpus_root=corpus, progress=False, into_model=True)
    only = ctc_only(full, tmp_path / "models" / "asr_ctc_only")
    model = SpeechASR.from_dir(only)
    assert model.ctc_only and not SpeechASR.from_dir(full).ctc_only
    results = evaluation.evaluate(only, corpus_root=corpus, progress=False, into_model=True)
    assert sorted(results) == ["tst-COMMON/ctc", "tst-HE/ctc"]  # no decoder, no beams
    for key, r in results.items():  # the same encoder and CTC: the same transcripts
        assert {k: v for k, v in r.items() if k != "ms_per_utterance"} == \
            {k: v for k, v in whole[key].items() if k != "ms_per_utterance"}
    assert "CTC greedy (what the cascade reads)" in (only / "card.md").read_text()
    with pytest.raises(ModelError, match="asr_ctc_only: an ASR model with a CTC and no "
                                         "attention decoder"):
        list(decode_split.offline_records(model, model_name="asr_ctc_only", pair=PAIR,
                                          split="tst-COMMON", corpus_root=corpus,
                                          progress=False))
