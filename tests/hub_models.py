"""Tiny published models, built offline with the libraries' own classes and laid out as
their Hub repos are, and a Hugging Face Hub cache that holds them.

- :func:`make_s2t_repo`: a transformers Speech2Text repo (fairseq S2T) — ``config.json``
  with the keys of ``facebook/s2t-small-mustc-en-de-st``'s (tiny dimensions),
  ``preprocessor_config.json`` of ``Speech2TextFeatureExtractor``, the weights,
  ``sentencepiece.bpe.model`` and ``vocab.json`` of a SentencePiece model trained on a few
  sentences with fairseq's special ids, ``tokenizer_config.json``, a model card whose front
  matter tags it ``speech-translation`` in ``en`` and ``de``.
- :func:`make_espnet_repo`: ESPnet2's packed layout of a tiny Conformer ST model (the
  keys of ESPnet's MuST-C recipe: BPE units on both sides, global MVN), packed by
  ``espnet2.main_funcs.pack_funcs.pack`` from a recipe directory and extracted as ESPnet
  uploads it: ``meta.yaml``, ``exp/st_train_…/config.yaml`` (root-relative paths) and
  ``valid.acc.ave_10best.pth`` (float32), ``exp/st_stats_…/train/feats_stats.npz``,
  ``data/en_de_token_list/{src,tgt}_bpe_unigram…/bpe.model``.
- :func:`place_in_cache`: a repo as ``huggingface_hub`` caches it,
  ``models--OWNER--NAME/{refs/main,snapshots/<rev>/…}``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tarfile
from pathlib import Path

import numpy as np
import torch
import yaml

SENTENCES = [
    "the cat sat on the mat", "a dog runs in the park", "we speak about the weather today",
    "she reads a book every night", "they went to the market and bought fish",
    "die katze sitzt auf der matte", "ein hund läuft im park", "wir sprechen über das wetter",
    "sie liest jeden abend ein buch", "sie gingen zum markt und kauften fisch",
]
"""What the tiny SentencePiece models are trained on (English and German)."""


def train_sentencepiece(prefix: Path, vocab_size: int, *, fairseq_ids: bool) -> Path:
    """A unigram SentencePiece model trained on :data:`SENTENCES`; ``fairseq_ids``: the
    special ids of fairseq's dictionary (<s> 0, <pad> 1, </s> 2, <unk> 3), as fairseq's S2T
    recipes train theirs."""
    import sentencepiece as spm

    prefix.parent.mkdir(parents=True, exist_ok=True)
    text = prefix.parent / "sentences.txt"
    text.write_text("\n".join(SENTENCES * 3) + "\n")
    ids = (dict(bos_id=0, pad_id=1, eos_id=2, unk_id=3) if fairseq_ids
           else dict(bos_id=-1, eos_id=-1, unk_id=0))
    spm.SentencePieceTrainer.train(
        input=str(text), model_prefix=str(prefix), vocab_size=vocab_size, model_type="unigram",
        character_coverage=1.0, num_threads=1, minloglevel=2, **ids)
    text.unlink()
    return prefix.with_suffix(".model")


S2T_CONFIG = {  # the keys of facebook/s2t-small-mustc-en-de-st's config.json, tiny dimensions
    "activation_dropout": 0.1, "activation_function": "relu",
    "architectures": ["Speech2TextForConditionalGeneration"], "attention_dropout": 0.1,
    "bos_token_id": 0, "classifier_dropout": 0.0, "conv_channels": 32,
    "conv_kernel_sizes": [5, 5], "d_model": 16, "decoder_attention_heads": 2,
    "decoder_ffn_dim": 32, "decoder_layerdrop": 0.0, "decoder_layers": 2,
    "decoder_start_token_id": 2, "dropout": 0.1, "early_stopping": True,
    "encoder_attention_heads": 2, "encoder_ffn_dim": 32, "encoder_layerdrop": 0.0,
    "encoder_layers": 2, "eos_token_id": 2, "init_std": 0.02, "input_channels": 1,
    "input_feat_per_channel": 80, "is_encoder_decoder": True, "max_length": 200,
    "max_source_positions": 6000, "max_target_positions": 1024,
    "model_type": "speech_to_text", "num_beams": 5, "num_conv_layers": 2,
    "num_hidden_layers": 2, "pad_token_id": 1, "scale_embedding": True, "use_cache": True,
}

S2T_CARD = """---
language:
- en
- de
datasets:
- mustc
tags:
- audio
- speech-translation
- automatic-speech-recognition
license: mit
pipeline_tag: automatic-speech-recognition
---

# a tiny random Speech2Text model (tests)
"""


def make_s2t_repo(directory: Path, seed: int = 0, card: str = S2T_CARD) -> Path:
    """A random tiny transformers Speech2Text ST model in its published layout."""
    from transformers import (
        Speech2TextConfig,
        Speech2TextFeatureExtractor,
        Speech2TextForConditionalGeneration,
        Speech2TextTokenizer,
    )

    directory.mkdir(parents=True, exist_ok=True)
    spm_file = train_sentencepiece(directory / "build" / "spm", 60, fairseq_ids=True)
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(spm_file))
    vocab = {sp.id_to_piece(i): i for i in range(sp.get_piece_size())}
    (directory / "build" / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False))
    tokenizer = Speech2TextTokenizer(str(directory / "build" / "vocab.json"), str(spm_file))
    tokenizer.save_pretrained(directory)
    shutil.rmtree(directory / "build")
    Speech2TextFeatureExtractor(feature_size=80, num_mel_bins=80).save_pretrained(directory)
    torch.manual_seed(seed)
    # untied output projection: tied to random embeddings, a model repeats its input unit
    config = {**S2T_CONFIG, "vocab_size": len(vocab), "tie_word_embeddings": False,
              "transformers_version": "4.4.0.dev0"}
    model = Speech2TextForConditionalGeneration(Speech2TextConfig(**config))
    for p in model.parameters():  # spread the logits so greedy paths are not all ties
        torch.nn.init.normal_(p, std=0.3)
    with torch.no_grad():  # </s> scored along the final layer norm's bias: hypotheses of
        norm = model.model.decoder.layer_norm.bias  # several units that end on longer input
        model.lm_head.weight[2] = 0.3 * model.lm_head.weight[2] + 0.6 * norm / norm.norm()
    # the published files: the weights as pytorch_model.bin, config.json as converted from
    # fairseq (generation settings in it), and generation_config.json as added later
    torch.save(model.state_dict(), directory / "pytorch_model.bin")
    (directory / "config.json").write_text(json.dumps(config, indent=2))
    (directory / "generation_config.json").write_text(json.dumps({
        "_from_model_config": True, "bos_token_id": 0, "decoder_start_token_id": 2,
        "early_stopping": True, "eos_token_id": 2, "max_length": 200, "num_beams": 5,
        "pad_token_id": 1, "transformers_version": "4.27.0.dev0"}, indent=2))
    (directory / "README.md").write_text(card)
    return directory


ESPNET_RUN = "exp/st_train_st_conformer_raw_en_de_bpe_tc60_sp"
ESPNET_STATS = "exp/st_stats_raw_en_de_bpe_tc60_sp/train/feats_stats.npz"
ESPNET_BPE = {"bpemodel": "data/en_de_token_list/tgt_bpe_unigram60/bpe.model",
              "src_bpemodel": "data/en_de_token_list/src_bpe_unigram60/bpe.model"}

ESPNET_CARD = """---
tags:
- espnet
- audio
- speech-translation
language: noinfo
datasets:
- must_c_v2
license: cc-by-4.0
---

## ESPnet2 ST model (a tiny random one, tests)
"""


def _espnet_conf(token_list: list[str], src_token_list: list[str]) -> dict:
    """An ST config with the fields of ESPnet's must_c_v2 Conformer recipe (tiny sizes)."""
    return {
        "token_type": "bpe", "src_token_type": "bpe", **ESPNET_BPE,
        "token_list": token_list, "src_token_list": src_token_list,
        "frontend": "default",
        "frontend_conf": {"n_fft": 512, "win_length": 400, "hop_length": 160, "n_mels": 80},
        "specaug": None, "normalize": "global_mvn",
        "normalize_conf": {"stats_file": ESPNET_STATS},
        "encoder": "conformer",
        "encoder_conf": {"output_size": 32, "attention_heads": 2, "linear_units": 64,
                         "num_blocks": 2, "input_layer": "conv2d", "macaron_style": True,
                         "rel_pos_type": "latest", "pos_enc_layer_type": "rel_pos",
                         "selfattention_layer_type": "rel_selfattn", "activation_type": "swish",
                         "use_cnn_module": True, "cnn_module_kernel": 7},
        "decoder": "transformer",
        "decoder_conf": {"attention_heads": 2, "linear_units": 64, "num_blocks": 2},
        "extra_asr_decoder": "transformer",
        "extra_asr_decoder_conf": {"attention_heads": 2, "linear_units": 64, "num_blocks": 1},
        "model_conf": {"asr_weight": 0.3, "mt_weight": 0.0, "mtlalpha": 1.0,
                       "lsm_weight": 0.1, "length_normalized_loss": False},
        "init": None,
    }


def make_espnet_repo(directory: Path, seed: int = 0, card: str = ESPNET_CARD) -> Path:
    """A random tiny ESPnet2 Conformer ST model in ESPnet's packed layout (as uploaded)."""
    from espnet2.main_funcs.pack_funcs import pack

    from simul.models.espnet_env import import_espnet

    st = import_espnet("espnet2.tasks.st").STTask
    recipe = directory.parent / f"{directory.name}_recipe"  # ESPnet's egs2/must_c_v2/st1
    pieces = {}
    for key, rel in ESPNET_BPE.items():
        model = train_sentencepiece(recipe / Path(rel).with_suffix(""), 60, fairseq_ids=False)
        import sentencepiece as spm

        sp = spm.SentencePieceProcessor(model_file=str(model))
        pieces[key] = ["<blank>", "<unk>",
                       *[sp.id_to_piece(i) for i in range(1, sp.get_piece_size())], "<sos/eos>"]
    stats = recipe / ESPNET_STATS
    stats.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    count = 1000
    mean, std = rng.normal(0.0, 2.0, 80), rng.uniform(1.0, 3.0, 80)
    np.savez(stats, count=np.array(count), sum=mean * count,
             sum_square=(std**2 + mean**2) * count)
    run = recipe / ESPNET_RUN
    run.mkdir(parents=True, exist_ok=True)
    conf = _espnet_conf(pieces["bpemodel"], pieces["src_bpemodel"])
    (run / "config.yaml").write_text(yaml.safe_dump(conf))
    with contextlib.chdir(recipe):  # ESPnet's configs hold paths relative to the recipe
        args = st.get_parser().parse_args(["--config", f"{ESPNET_RUN}/config.yaml"])
        torch.manual_seed(seed)
        model = st.build_model(args)
        for p in model.parameters():
            torch.nn.init.normal_(p, std=0.3)
        with torch.no_grad():
            model.decoder.output_layer.bias[model.eos] -= 4.0
        (run / "config.yaml").write_text(yaml.safe_dump(vars(args), allow_unicode=True))
        torch.save(model.state_dict(), run / "valid.acc.ave_10best.pth")
        with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):
            pack(files={"st_model_file": f"{ESPNET_RUN}/valid.acc.ave_10best.pth"},
                 yaml_files={"st_train_config": f"{ESPNET_RUN}/config.yaml"},
                 option=[ESPNET_STATS, *ESPNET_BPE.values()], outpath="packed/model.tgz")
        with tarfile.open("packed/model.tgz") as archive:  # the repo holds the archive's files
            archive.extractall(directory, filter="data")
    shutil.rmtree(recipe)
    (directory / "README.md").write_text(card)
    return directory


def place_in_cache(cache: Path, repo_id: str, source: Path, revision: str = "0" * 40) -> Path:
    """Copy ``source`` into ``cache`` as huggingface_hub lays a downloaded repo out
    (``models--OWNER--NAME/snapshots/<revision>/``, ``refs/main`` naming it); the
    snapshot."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / revision
    shutil.copytree(source, snapshot)
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(revision)
    return snapshot
