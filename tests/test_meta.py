"""Meta-learning steps (H20 §2.2, eqs. 1–2) against updates worked out by hand, and
resumed runs against uninterrupted ones."""

import json

import pytest
import torch

from simul.models.training import meta


class Linear(torch.nn.Module):
    """ŷ = w·x, loss ½ (ŷ − y)² averaged over the batch; ``unused`` takes no part."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
        self.unused = torch.nn.Parameter(torch.tensor([5.0]))

    def forward(self, batch):
        x, y = batch
        return 0.5 * ((x @ self.w - y) ** 2).mean()


D = (torch.tensor([[1.0, 0.0]]), torch.tensor([0.0]))        # w·x = 1: gradient (1, 0)
D_PRIME = (torch.tensor([[1.0, 1.0]]), torch.tensor([0.0]))  # w·x = 3 at θm


def test_meta_step_by_hand():
    # eq. 1: θa = (1, 2) − 0.5 · (1, 0) = (0.5, 2); on D′ at θa, w·x = 2.5: gradient
    # (2.5, 2.5); eq. 2 with SGD, β = 0.1: θm = (1, 2) − 0.1 · (2.5, 2.5) = (0.75, 1.75).
    # (At θm the gradient would be (3, 3); second-order MAML's, (I − αxxᵀ)·(2.5, 2.5) =
    # (1.25, 2.5).)
    model = Linear()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    stats = meta.meta_step(model, D, D_PRIME, 0.5, opt)
    torch.testing.assert_close(model.w.detach(), torch.tensor([0.75, 1.75]))
    assert model.unused.item() == 5.0 and model.unused.grad is None
    assert stats == pytest.approx({"loss_train": 0.5, "loss_test": 3.125})


def test_multitask_step_by_hand():
    # the mean of the gradients at θm: ((1, 0) + (3, 3)) / 2 = (2, 1.5); SGD 0.1
    model = Linear()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    meta.multitask_step(model, D, D_PRIME, opt)
    torch.testing.assert_close(model.w.detach(), torch.tensor([0.8, 1.85]))
    meta.plain_step(model, D, opt)  # w·x = 0.8: (0.8, 1.85) − 0.1 · (0.8, 0)
    torch.testing.assert_close(model.w.detach(), torch.tensor([0.72, 1.85]))


class Tiny(torch.nn.Module):
    """A small network with dropout: resumed runs must reproduce its random state."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.net = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(),
                                       torch.nn.Dropout(0.3), torch.nn.Linear(8, 1))

    def forward(self, batch):
        x, y = batch
        return ((self.net(x).squeeze(-1) - y) ** 2).mean()


def batches(seed, n):
    g = torch.Generator().manual_seed(meta.step_seed(seed, n))
    task = ["a", "b"][int(torch.randint(2, (1,), generator=g))]
    make = lambda: (torch.randn(4, 3, generator=g), torch.randn(4, generator=g))  # noqa: E731
    return meta.StepBatches(task, make(), make())


@pytest.mark.parametrize("kind", meta.KINDS)
def test_resume_equals_an_uninterrupted_run(kind, tmp_path):
    def run(workdir, steps):
        model = Tiny()
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        meta.train(model, opt, batches, kind=kind, steps=steps, workdir=workdir, seed=3,
                   alpha=0.05, checkpoint_every=2, progress=False)
        return model

    whole = run(tmp_path / "whole", 10)
    run(tmp_path / "parts", 5)  # stops after 5 steps (checkpoint at 4 and at 5)
    resumed = run(tmp_path / "parts", 10)
    for a, b in zip(whole.parameters(), resumed.parameters(), strict=True):
        assert torch.equal(a, b)
    lines = [json.loads(x) for x in (tmp_path / "parts" / meta.LOG).read_text().splitlines()]
    assert [x["step"] for x in lines] == list(range(10))
    assert not torch.equal(whole.net[0].weight, Tiny().net[0].weight)  # it did learn


def test_a_resume_of_another_kind_or_seed_is_refused(tmp_path):
    model = Tiny()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    meta.train(model, opt, batches, kind="plain", steps=2, workdir=tmp_path, progress=False)
    with pytest.raises(ValueError, match="a plain run with seed 0, not meta"):
        meta.train(model, opt, batches, kind="meta", steps=4, workdir=tmp_path, alpha=0.1,
                   progress=False)
    with pytest.raises(ValueError, match="alpha"):
        meta.train(model, opt, batches, kind="meta", steps=4, workdir=tmp_path / "x",
                   progress=False)


def test_warmup_schedule_is_espnets_warmuplr():
    from simul.models.espnet_env import import_espnet

    warmup_lr = import_espnet("espnet2.schedulers.warmup_lr").WarmupLR
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=0.002)
    ref = warmup_lr(opt, warmup_steps=25)
    ours = meta.warmup_lr(0.002, 25)
    for n in range(60):  # ESPnet steps its scheduler after each update
        assert ours(n) == pytest.approx(opt.param_groups[0]["lr"], rel=1e-12)
        opt.step()
        ref.step()


def test_clipping_by_hand():
    # inner gradient (1, 0) has norm 1: unchanged at clip 2; the meta-test gradient
    # (2.5, 2.5) has norm 3.536: scaled to norm 2, (1.4142, 1.4142); SGD 0.1
    model = Linear()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    meta.meta_step(model, D, D_PRIME, 0.5, opt, clip=2.0)
    torch.testing.assert_close(model.w.detach(),
                               torch.tensor([1 - 0.1 * 2**0.5, 2 - 0.1 * 2**0.5]))
    # a far batch: y = −9, residual 10, inner gradient (10, 0). Unclipped (clip 100):
    # θa = (1 − 5, 2) = (−4, 2), on D′ w·x = −2, gradient (−2, −2): θm = (1.2, 2.2)
    far = (torch.tensor([[1.0, 0.0]]), torch.tensor([-9.0]))
    model = Linear()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    meta.meta_step(model, far, D_PRIME, 0.5, opt, clip=100.0)
    torch.testing.assert_close(model.w.detach(), torch.tensor([1.2, 2.2]))
    # clip 1: inner (1, 0), θa = (0.5, 2); D′ gradient (2.5, 2.5) scaled to norm 1
    model = Linear()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    meta.meta_step(model, far, D_PRIME, 0.5, opt, clip=1.0)
    torch.testing.assert_close(model.w.detach(),
                               torch.tensor([1 - 0.1 / 2**0.5, 2 - 0.1 / 2**0.5]))
