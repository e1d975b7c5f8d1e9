"""Seconds per training update of a recipe, on the shipped model it starts from, one thread:
what a run of N updates costs before starting it.

Builds the recipe's ESPnet model as ``simul train`` configures it (its decoder settings,
``--set`` overrides, frozen modules), copies the start model's weights into it (the first
``simul.init`` entry, assembled from its parent when it is a child), and times ``--updates``
updates (forward, backward, gradient clipping at ESPnet's 5, Adam) after one untimed one, on
batches of real dev segments grouped as ESPnet's ``numel`` batches group them (sorted by
length, about ``batch_bins`` samples a batch); the data loading, SpecAugment aside, is not
timed. Prints the mean and the spread of the updates in wall-clock seconds, and the mean
CPU seconds of this process per update: on a machine busy with other work the wall clock
grows with the load, the CPU time is what one free core would take.

    OMP_NUM_THREADS=1 python benchmarks/update_time.py transformer_bpe_en-de_waitk5_adaptive \
        [--updates 5] [--set espnet.freeze_param=[encoder,ctc]]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import sentencepiece as spm
import torch
import yaml

from simul.corpus import DEFAULT_ROOT, load_list
from simul.models import parent, registry
from simul.models.espnet_env import import_espnet
from simul.models.extensions import register
from simul.models.training import train


def build(name: str, overrides: list[str], tmp: Path):
    """(model, start directory, ESPnet config) of recipe ``name`` as simul train builds it."""
    recipe = train.apply_overrides(train.load_recipe(name), overrides)
    start = registry.MODELS_DIR / recipe["simul"]["init"][0]["model"]
    shipped = yaml.safe_load((start / "config.yaml").read_text())
    conf = dict(recipe["espnet"])
    for key in ("token_list", "src_token_list", "token_type", "src_token_type"):
        conf[key] = shipped[key]
    conf["normalize_conf"] = {"stats_file": str(start / "feats_stats.npz")}
    if conf.get("decoder") == "transformer_waitk":
        for key, units in (("units_file", "token_list"), ("src_units_file", "src_token_list")):
            (tmp / f"{units}.txt").write_text("\n".join(shipped[units]) + "\n")
            conf.setdefault("decoder_conf", {})[key] = str(tmp / f"{units}.txt")
        conf["decoder_conf"].update(unit_type=shipped["token_type"],
                                    src_unit_type=shipped["src_token_type"])
    (tmp / "config.yaml").write_text(yaml.safe_dump(conf))
    register()
    st = import_espnet("espnet2.tasks.st").STTask
    args = st.get_parser().parse_args(["--config", str(tmp / "config.yaml")])
    model = st.build_model(args)
    weights = torch.load(parent.assembled(start, start / "model.pth"), map_location="cpu")
    model.load_state_dict({k: v.float() if v.is_floating_point() else v
                           for k, v in weights.items()}, strict=False)
    for key, p in model.named_parameters():
        if any(key.startswith(f + ".") for f in conf.get("freeze_param") or []):
            p.requires_grad = False
    return model, start, conf, recipe["simul"]["pair"]


def batches(start: Path, pair: str, bins: int, count: int, model) -> list[dict]:
    """``count`` batches of dev segments, sorted by length, about ``bins`` samples each."""
    tgt = spm.SentencePieceProcessor(model_file=str(start / "bpe.model"))
    src = spm.SentencePieceProcessor(model_file=str(start / "src_bpe.model"))
    segs = sorted(load_list(DEFAULT_ROOT, pair, "dev"), key=lambda s: len(s.audio))
    index = {u: i for i, u in enumerate(model.token_list)}
    src_index = {u: i for i, u in enumerate(model.src_token_list)}
    out, group, size = [], [], 0
    for seg in segs[len(segs) // 3:]:  # from the middle lengths up: typical batches
        group.append(seg)
        size += len(seg.audio)
        if size >= bins:
            out.append(_tensors(group, tgt, src, index, src_index))
            group, size = [], 0
            if len(out) == count:
                break
    return out


def _ids(sp, text: str, index: dict) -> list[int]:
    return [index.get(p, 1) for p in sp.encode(text, out_type=str)]  # 1: <unk>


def _pad(rows: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    lens = torch.tensor([len(r) for r in rows])
    out = torch.full((len(rows), int(lens.max())), -1, dtype=torch.long)
    for i, r in enumerate(rows):
        out[i, : len(r)] = torch.tensor(r)
    return out, lens


def _tensors(group, tgt, src, index, src_index) -> dict:
    speech_lens = torch.tensor([len(s.audio) for s in group])
    speech = torch.zeros(len(group), int(speech_lens.max()))
    for i, s in enumerate(group):
        speech[i, : len(s.audio)] = torch.from_numpy(s.audio)
    text, text_lens = _pad([_ids(tgt, s.target, index) for s in group])
    src_text, src_lens = _pad([_ids(src, s.source, src_index) for s in group])
    return {"speech": speech, "speech_lengths": speech_lens, "text": text,
            "text_lengths": text_lens, "src_text": src_text.clamp(min=0),
            "src_text_lengths": src_lens}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("recipe")
    parser.add_argument("--updates", type=int, default=5)
    parser.add_argument("--set", action="append", default=[], dest="overrides")
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as tmp:
        model, start, conf, pair = build(args.recipe, args.overrides, Path(tmp))
    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    optim = torch.optim.Adam(trainable, **(conf.get("optim_conf") or {}))
    data = batches(start, pair, int(conf["batch_bins"]), args.updates + 1, model)
    times, cpu = [], []
    for n, batch in enumerate(data):
        began, began_cpu = time.perf_counter(), time.process_time()
        loss = model(**batch)[0]
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 5.0)
        optim.step()
        optim.zero_grad()
        if n:  # the first update warms up
            times.append(time.perf_counter() - began)
            cpu.append(time.process_time() - began_cpu)
    print(f"{args.recipe} {' '.join(args.overrides)}: {len(times)} updates of "
          f"{sum(len(b['speech']) for b in data[1:]) / len(times):.1f} segments, "
          f"{statistics.mean(times):.2f} s per update "
          f"(min {min(times):.2f}, max {max(times):.2f}), {statistics.mean(cpu):.2f} s of CPU; "
          f"{sum(p.numel() for p in trainable) / 1e6:.2f} M trainable parameters")


if __name__ == "__main__":
    main()
