"""The adapter's beam search stops as soon as its n-best list is settled (exact stopping).

ESPnet's search runs until every beam item has ended (or the length cap, or, offline, its
end detection). A scorer whose scores are pseudo-random but reproducible lets us compare
both searches on many cases, for ESPnet's list and batched implementations."""

import pytest
import torch

from simul.models.adapters.espnet_st import _prefix_search_class
from simul.models.espnet_env import import_espnet

VOCAB, SOS_EOS = 12, 11


class RandomLM:
    """log P(next | y): reproducible random logits per prefix; EOS likelier with length."""

    def __init__(self, seed: int, eos_slope: float):
        self.seed, self.eos_slope = seed, eos_slope

    def logp(self, y: torch.Tensor) -> torch.Tensor:
        g = torch.Generator().manual_seed(hash((self.seed, *y.tolist())) % 2**31)
        logits = 2.0 * torch.randn(VOCAB, generator=g)
        logits[SOS_EOS] += -4.0 + self.eos_slope * len(y)
        logits[0] = -1e9  # blank never proposed
        return torch.log_softmax(logits, -1)


def scorer(lm: RandomLM):
    iface = import_espnet("espnet.nets.scorer_interface")

    class Scorer(iface.BatchScorerInterface):
        def init_state(self, x):
            return None

        def score(self, y, state, x):
            return lm.logp(y), None

        def batch_score(self, ys, states, xs):
            return torch.stack([lm.logp(y) for y in ys]), [None] * len(ys)

    return Scorer()


def search(batched: bool, lm: RandomLM, beam: int, nbest, steps: list):
    module = "espnet.nets.batch_beam_search" if batched else "espnet.nets.beam_search"
    base = getattr(import_espnet(module), "BatchBeamSearch" if batched else "BeamSearch")
    cls = _prefix_search_class(base)
    s = cls(scorers={"decoder": scorer(lm)}, weights={"decoder": 1.0}, beam_size=beam,
            vocab_size=VOCAB, sos=SOS_EOS, eos=SOS_EOS, pre_beam_score_key="full")
    s.nbest = nbest
    step = s.search

    def counted(*a, **k):
        steps.append(1)
        return step(*a, **k)
    s.search = counted
    return s


@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("maxlenratio", [0.0, -25])  # end detection (offline) / a fixed cap
def test_stopping_early_keeps_the_n_best_of_the_full_search(batched, maxlenratio):
    x = torch.zeros(25, 4)  # only its length matters (the cap when maxlenratio is 0)
    steps = {"early": [], "full": []}
    cases = 0
    for seed in range(12):
        lm = RandomLM(seed, eos_slope=0.6)
        for beam in (3, 5):
            for nbest in range(1, beam + 1):
                for primer in ([SOS_EOS], [SOS_EOS, 3, 4]):
                    got = {}
                    for kind, n in (("early", nbest), ("full", None)):
                        s = search(batched, lm, beam, n, steps[kind])
                        s.set_hyp_primer(primer)
                        hyps = s(x=x, maxlenratio=maxlenratio, minlenratio=0.0)
                        got[kind] = [(h.yseq.tolist(), float(h.score)) for h in hyps[:nbest]]
                    assert got["early"] == got["full"], (seed, beam, nbest, primer)
                    cases += 1
    assert cases == 12 * 2 * 8
    # the point of it: fewer decoder calls for the same n-best
    assert len(steps["early"]) < 0.8 * len(steps["full"])
