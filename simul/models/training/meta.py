"""Meta-learning over source tasks (Han et al. 2020 §2.2), its control, and fine-tuning.

H20 adopts the modality-agnostic meta-learning of Indurthi et al. 2020 (MAML, Finn et al.
2017) for data-scarce speech translation: a *meta-learning phase* over high-resource source
tasks (ASR, MT, ST), then a *fine-tuning phase* on the target task from the meta-learned
parameters θm. Each meta step (§2.2) draws one source task τ uniformly and two of its
batches, D and D′:

- meta-train: auxiliary parameters θa = θm − α ∇θm ℓ(D; θm)        (eq. 1, SGD, rate α)
- meta-test: θm ← θm − β ∇θa ℓ(D′; θa)                            (eq. 2)

Eq. 2 takes the gradient at θa and applies it to θm: the first-order form of MAML, which is
what :func:`meta_step` computes (the outer update goes through an optimizer; with SGD at
rate β it is eq. 2 as written). :func:`multitask_step` is the control H20 lacks: one
ordinary update on the same two batches (the mean of their losses), so that a model
pre-trained on the same source tasks, the same examples and as many updates tells what the
meta-gradient adds. :func:`plain_step` is an ordinary update (fine-tuning, the target task
alone).

:func:`train` runs any of them for a number of steps, resumably: the batches of step n and
the random state of its dropout depend on (seed, n) alone, and a checkpoint holds the
parameters, the optimizer's state and n, so a run stopped and resumed ends with the
parameters of an uninterrupted one.

A model here is a ``torch.nn.Module`` whose ``forward(batch)`` returns the scalar loss of a
batch (:mod:`simul.models.adapters.meta_st` builds such a model on ESPnet's modules and losses).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from torch.func import functional_call

KINDS = ("meta", "multitask", "plain")
CHECKPOINT = "checkpoint.pt"
LOG = "steps.jsonl"


@dataclass(frozen=True)
class StepBatches:
    """What step n trains on: its task's name and the batches D (and D′ for two-batch
    steps)."""

    task: str
    train: object
    test: object | None = None


def _trainable(model: torch.nn.Module) -> dict[str, torch.nn.Parameter]:
    return {n: p for n, p in model.named_parameters() if p.requires_grad}


def _clipped(grads, clip: float | None):
    """``grads`` scaled to a global L2 norm of at most ``clip`` (as ESPnet's trainer clips
    every update, ``grad_clip``); None entries stay None."""
    if clip is None:
        return list(grads)
    norm = torch.sqrt(sum((g.detach() ** 2).sum() for g in grads if g is not None))
    scale = min(1.0, clip / (float(norm) + 1e-6))
    return [None if g is None else g * scale for g in grads]


def meta_step(model: torch.nn.Module, train_batch, test_batch, alpha: float,
              optimizer: torch.optim.Optimizer, clip: float | None = None
              ) -> dict[str, float]:
    """One meta step (eqs. 1–2): the loss of ``train_batch`` at θm gives θa by one SGD step of
    rate ``alpha``; the gradient of the loss of ``test_batch`` at θa is θm's gradient for
    ``optimizer``. Parameters the task leaves without a gradient (another modality's front
    end) keep θa = θm and get no update. ``clip``: both gradients clipped to that global
    norm first (None: as the equations are written)."""
    params = _trainable(model)
    names = list(params)
    loss_train = model(train_batch)
    grads = _clipped(torch.autograd.grad(loss_train, [params[n] for n in names],
                                         allow_unused=True), clip)
    aux = {n: (params[n].detach() - alpha * g if g is not None else params[n].detach())
           .requires_grad_(True) for n, g in zip(names, grads, strict=True)}
    buffers = dict(model.named_buffers())
    loss_test = functional_call(model, {**buffers, **aux}, (test_batch,))
    meta_grads = _clipped(torch.autograd.grad(loss_test, [aux[n] for n in names],
                                              allow_unused=True), clip)
    optimizer.zero_grad(set_to_none=True)
    for n, g in zip(names, meta_grads, strict=True):
        params[n].grad = g
    optimizer.step()
    return {"loss_train": loss_train.item(), "loss_test": loss_test.item()}


def multitask_step(model: torch.nn.Module, train_batch, test_batch,
                   optimizer: torch.optim.Optimizer, clip: float | None = None
                   ) -> dict[str, float]:
    """One ordinary update on both batches (the mean of their losses): the multi-task
    control of a meta step, same examples, one update."""
    optimizer.zero_grad(set_to_none=True)
    loss_a, loss_b = model(train_batch), model(test_batch)
    ((loss_a + loss_b) / 2).backward()
    if clip is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()
    return {"loss_train": loss_a.item(), "loss_test": loss_b.item()}


def plain_step(model: torch.nn.Module, batch, optimizer: torch.optim.Optimizer,
               clip: float | None = None) -> dict[str, float]:
    """One ordinary update on one batch."""
    optimizer.zero_grad(set_to_none=True)
    loss = model(batch)
    loss.backward()
    if clip is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()
    return {"loss_train": loss.item()}


def warmup_lr(peak: float, warmup: int) -> Callable[[int], float]:
    """ESPnet's ``warmuplr`` schedule by step (0-based): rises linearly to ``peak`` at
    step ``warmup``, then decays as the inverse square root of the step."""
    def lr(n: int) -> float:
        step = n + 1
        return peak * warmup**0.5 * min(step**-0.5, step * warmup**-1.5)
    return lr


def step_seed(seed: int, step: int) -> int:
    """The random seed of step ``step``: batches and dropout depend on (seed, step) alone."""
    return (seed * 1_000_003 + step) % (2**63 - 1)


def _save(path: Path, state: dict) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    os.close(fd)
    try:
        torch.save(state, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def train(model: torch.nn.Module, optimizer: torch.optim.Optimizer,
          batches: Callable[[int, int], StepBatches], *, kind: str, steps: int,
          workdir: str | Path, seed: int = 0, alpha: float = 0.0,
          checkpoint_every: int = 100, progress: bool = True,
          lr_at: Callable[[int], float] | None = None, clip: float | None = None,
          on_checkpoint: Callable[[int], None] | None = None) -> int:
    """Run ``kind`` steps ("meta", "multitask" or "plain") until ``steps`` steps are done,
    resuming from ``workdir``'s checkpoint when there is one. ``batches(seed, n)`` gives step
    n's :class:`StepBatches` (two batches for "meta" and "multitask"). A checkpoint is
    written every ``checkpoint_every`` steps and at the end (``on_checkpoint(n)`` is called
    after each); one line per step goes to ``steps.jsonl``. ``lr_at(n)``, when given, sets
    the optimizer's rate of step n (a schedule that depends on n alone resumes exactly);
    ``clip``: every gradient clipped to that global norm.
    Returns the steps done."""
    if kind not in KINDS:
        raise ValueError(f"kind: {kind!r} is not one of {KINDS}")
    if kind == "meta" and not alpha > 0:
        raise ValueError("alpha: the meta-train rate must be > 0")
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    ckpt = workdir / CHECKPOINT
    done = 0
    if ckpt.is_file():
        state = torch.load(ckpt, map_location="cpu", weights_only=False)
        if state["kind"] != kind or state["seed"] != seed:
            raise ValueError(f"{ckpt}: a {state['kind']} run with seed {state['seed']}, "
                             f"not {kind} with seed {seed}")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        done = state["step"]
    log = workdir / LOG
    if log.is_file():  # lines past the checkpoint are replayed
        kept = [line for line in log.read_text().splitlines()
                if line and json.loads(line)["step"] < done]
        log.write_text("".join(line + "\n" for line in kept))
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=steps, initial=done, desc=f"{kind} steps", unit="step")
    model.train()
    with log.open("a") as out:
        for n in range(done, steps):
            torch.manual_seed(step_seed(seed, n))
            if lr_at is not None:
                for group in optimizer.param_groups:
                    group["lr"] = lr_at(n)
            b = batches(seed, n)
            if kind == "meta":
                stats = meta_step(model, b.train, b.test, alpha, optimizer, clip)
            elif kind == "multitask":
                stats = multitask_step(model, b.train, b.test, optimizer, clip)
            else:
                stats = plain_step(model, b.train, optimizer, clip)
            if not all(math.isfinite(v) for v in stats.values()):
                raise FloatingPointError(f"step {n} ({b.task}): loss {stats}")
            out.write(json.dumps({"step": n, "task": b.task, **stats}) + "\n")
            if bar is not None:
                bar.update(1)
            if (n + 1) % checkpoint_every == 0 or n + 1 == steps:
                out.flush()
                _save(ckpt, {"kind": kind, "seed": seed, "step": n + 1,
                             "model": model.state_dict(),
                             "optimizer": optimizer.state_dict()})
                if on_checkpoint is not None:
                    on_checkpoint(n + 1)
    if bar is not None:
        bar.close()
    return steps
