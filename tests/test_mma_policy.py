"""The MMA decoder (simul.models.extensions.mma_decoder), its adapter
(simul.models.adapters.mma_st) and the ``mma`` policy on tiny random models.

The references are other code paths of simul and ESPnet, never the formulas under test:
with its stop probabilities forced to wait-k's pattern (p_ij = 1 once j ≥ i + k − 1, else
0; M20 §3.1) the ``mma`` policy must write what ``predecision`` wait-k writes on the same
triggers with the offline decoder whose weights it shares; a head that never stops before
the last block must give ESPnet's own Transformer decoder (full attention), in training as
in decoding; and M20's latency term is worked by hand for such heads."""

from __future__ import annotations

import pytest
import torch
import yaml

from simul.decoding.simulate import simulate
from simul.models.adapters.espnet_st import ESPnetST, ModelError
from simul.models.adapters.mma_st import ESPnetMMA
from simul.models.extensions.mma_decoder import MMATransformerDecoder, MonotonicMultiheadAttention
from simul.models.loader import load_dir
from simul.policies import make, registry
from simul.policies.mma import MonotonicAttention
from simul.policies.offline import Offline
from simul.policies.predecision import Predecision
from tests.conftest import _conf, make_tiny_model
from tests.test_policy_predecision import ALIGNMENT
from tests.test_policy_word_detection import segment, writes
from tests.test_stream import counting_clock, stream

STEP_MS = 200.0


def mma_copy(offline_dir, directory, seed: int = 1, pre_decision: str = "fixed"):
    """An MMA model (``transformer_mma``, Δt = 200 ms, or trained on oracle ``word`` ends)
    whose every other weight is the offline model's; the monotonic energies are random."""
    from simul.models.espnet_env import import_espnet
    from simul.models.extensions import mma_decoder

    mma_decoder.register()
    st = import_espnet("espnet2.tasks.st").STTask
    conf = _conf("transformer")
    conf["decoder"] = "transformer_mma"
    conf["decoder_conf"] = {**conf["decoder_conf"], "step_ms": STEP_MS, "frame_ms": 40.0,
                            "pre_decision": pre_decision}
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.yaml").write_text(yaml.safe_dump(conf))
    args = st.get_parser().parse_args(["--config", str(directory / "config.yaml")])
    torch.manual_seed(seed)
    model = st.build_model(args)
    missing, unexpected = model.load_state_dict(torch.load(offline_dir / "model.pth"),
                                                strict=False)
    assert not unexpected and all("_mono" in k or "energy_bias" in k for k in missing)
    (directory / "config.yaml").write_text(yaml.safe_dump(vars(args), allow_unicode=True))
    torch.save(model.state_dict(), directory / "model.pth")
    return directory


@pytest.fixture(scope="module")
def offline_dir(tmp_path_factory):
    return make_tiny_model(tmp_path_factory.mktemp("tiny_offline"), "transformer")


@pytest.fixture(scope="module")
def mma_model(offline_dir, tmp_path_factory):
    return load_dir(mma_copy(offline_dir, tmp_path_factory.mktemp("tiny_mma")))


@pytest.fixture(scope="module")
def mma_word_model(offline_dir, tmp_path_factory):
    """The same MMA model, as if trained on oracle word ends."""
    return load_dir(mma_copy(offline_dir, tmp_path_factory.mktemp("tiny_mma_word"),
                             pre_decision="word"))


@pytest.fixture(scope="module")
def offline_model(offline_dir):
    return ESPnetST.from_dir(offline_dir)


def force_stops(monkeypatch, rule):
    """Replace every head's stop probability by ``rule(step, n_blocks) → [p_j]``."""
    def stop_probability(self, query, block_keys):
        n_blocks = block_keys.shape[1]
        if self.context is not None:
            row = rule(self.context.step, n_blocks)
            return torch.tensor(row, dtype=query.dtype).expand(1, self.h, 1, n_blocks)
        rows = [rule(i, n_blocks) for i in range(query.shape[1])]
        return torch.tensor(rows, dtype=query.dtype).expand(query.shape[0], self.h, -1, -1)

    monkeypatch.setattr(MonotonicMultiheadAttention, "stop_probability", stop_probability)


def wait_k(k):
    return lambda i, n: [1.0 if j >= i + k - 1 else 0.0 for j in range(n)]


def never(i, n):
    return [0.0] * n


def test_loaded_as_mma_and_registered(mma_model):
    assert isinstance(mma_model, ESPnetMMA)
    assert mma_model.pre_decision_ms == STEP_MS
    assert registry()["mma"] is MonotonicAttention
    assert make("mma", {"trigger": "word"}).trigger == "word"


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_wait_k_stops_write_what_predecision_writes(monkeypatch, mma_model, offline_model,
                                                     speech, k):
    force_stops(monkeypatch, wait_k(k))
    want = simulate(offline_model, Predecision(trigger="fixed", step_ms=STEP_MS, k=k),
                    segment(speech))
    got = simulate(mma_model, MonotonicAttention(), segment(speech))
    assert got.units == want.units
    assert len(want.units) > k  # some units are written while reading
    assert got.delays == want.delays


def test_heads_that_never_stop_decode_offline(monkeypatch, mma_model, offline_model, speech):
    force_stops(monkeypatch, never)
    want = simulate(offline_model, Offline(), segment(speech))
    assert simulate(mma_model, Offline(), segment(speech)).units == want.units
    # while reading they wait: nothing is written before the end of the input
    got = simulate(mma_model, MonotonicAttention(), segment(speech))
    assert got.units == want.units
    assert set(got.delays) == {1200.0}


def test_training_forward_with_heads_at_the_last_block_is_espnets(monkeypatch, mma_model,
                                                                  offline_model):
    force_stops(monkeypatch, never)
    torch.manual_seed(0)
    hs = torch.randn(2, 30, 32)
    hlens = torch.tensor([30, 22])
    ys = torch.randint(2, 20, (2, 6))
    ys_lens = torch.tensor([6, 4])
    mma_dec, dec = mma_model.model.decoder, offline_model.model.decoder
    with torch.no_grad():
        got, _ = mma_dec(hs, hlens, ys, ys_lens)
        want, _ = dec(hs, hlens, ys, ys_lens)
    for b, n in enumerate(ys_lens.tolist()):
        torch.testing.assert_close(got[b, :n], want[b, :n], atol=1e-5, rtol=1e-5)


def test_latency_term_by_hand(monkeypatch, mma_model):
    # every head stops at the last block: each step waits for the whole source, so the
    # first step is already written with all of it (τ = 1) and AL = d_1 = |X|, here in
    # frames of 40 ms: 30 and 22 frames; λ = 0.1 → 0.1 · (30 + 22) / 2 = 2.6; heads agree,
    # so the variance term is 0
    force_stops(monkeypatch, never)
    dec: MMATransformerDecoder = mma_model.model.decoder
    dec.latency_weight, dec.variance_weight, dec.latency_unit_ms = 0.1, 1.0, 40.0
    try:
        with torch.no_grad():
            dec(torch.randn(2, 30, 32), torch.tensor([30, 22]), torch.randint(2, 20, (2, 6)),
                torch.tensor([6, 4]))
        assert float(dec.latency) == pytest.approx(2.6)
        assert float(dec.latency_stats["latency_al"]) == pytest.approx(26 * 40)
        assert float(dec.latency_stats["latency_var"]) == pytest.approx(0.0, abs=1e-9)
    finally:
        dec.latency_weight, dec.variance_weight, dec.latency_unit_ms = 0.0, 0.0, 40.0


def test_first_block_stops_read_one_block(monkeypatch, mma_model, offline_model, speech):
    # p = 1 everywhere: every head stops at the first block it scans, so the first trigger
    # (200 ms) writes units until the length cap (the encoder frames of 200 ms of audio),
    # and every later trigger writes as many more as its frames allow
    force_stops(monkeypatch, lambda i, n: [1.0] * n)
    rec = simulate(mma_model, MonotonicAttention(), segment(speech))
    done = writes(rec)
    first = mma_model.max_length(mma_model.encode(speech[:3200]))
    assert done[0] == (STEP_MS, done[0][1]) and len(done[0][1]) == first
    assert [ms for ms, _ in done[:5]] == [200, 400, 600, 800, 1000]


def test_other_models_and_decodings_are_refused(mma_model, offline_model, speech):
    with pytest.raises(ValueError, match="decodes models trained with a transformer_mma"):
        simulate(offline_model, MonotonicAttention(), segment(speech))
    with pytest.raises(ModelError, match="greedily"):
        mma_model.beam_search(mma_model.encode(speech))
    with pytest.raises(ValueError, match="mma"):
        MonotonicAttention(trigger="frame")


def test_espnet_training_step_adds_the_latency_term(mma_model, speech):
    # the ST model's loss is ESPnet's plus λ · max(AL, 0) of the decoder (register() wraps
    # ESPnetSTModel.forward); with λ = 0 it is ESPnet's loss alone
    model = mma_model.model
    dec = model.decoder
    batch = {"speech": torch.tensor(speech).unsqueeze(0), "speech_lengths": torch.tensor([19200]),
             "text": torch.tensor([[3, 4, 5, 6]]), "text_lengths": torch.tensor([4]),
             "src_text": torch.tensor([[3, 4]]), "src_text_lengths": torch.tensor([2])}
    model.train()
    try:
        torch.manual_seed(0)
        base, stats, _ = model(**batch)
        assert float(stats["loss_latency"]) == 0.0
        dec.latency_weight = 0.5
        torch.manual_seed(0)
        loss, stats, _ = model(**batch)
        assert float(stats["loss_latency"]) > 0
        want = float(base.detach()) + float(stats["loss_latency"])
        assert float(loss.detach()) == pytest.approx(want, rel=1e-5)
        loss.backward()
        assert model.decoder.decoders[0].src_attn.linear_q_mono.weight.grad.abs().sum() > 0
    finally:
        dec.latency_weight = 0.0
        model.zero_grad()
        model.eval()


@pytest.mark.parametrize("trigger", ["fixed", "word"])
def test_chunking_changes_nothing(monkeypatch, mma_model, mma_word_model, speech, trigger):
    # each on the triggers of its training (a model trained over fixed blocks is refused
    # oracle ones: test_mma_fit.py)
    mma_model = mma_word_model if trigger == "word" else mma_model
    # stops that vary with the step and the block: some steps wait, others do not
    force_stops(monkeypatch, lambda i, n: [1.0 if (i + j) % 3 == 0 else 0.2 for j in range(n)])
    policy = {"trigger": trigger}
    whole = simulate(mma_model, make("mma", policy), segment(speech, ALIGNMENT),
                     clock=counting_clock())
    assert whole.units and writes(whole)[0][0] < whole.source_length  # writes while reading
    for chunk_ms in (10, 37, 1000):
        session, updates = stream(mma_model, make("mma", policy), speech, chunk_ms)
        rec = session.record(index=0, reference="x y", segment_id="t_0",
                             source=["t.wav", "t_0"], source_text="a b")
        assert rec == whole, f"{chunk_ms} ms chunks"
        assert [u for up in updates for u in up.units] == rec.units


def test_fixed_and_oracle_blocks_by_hand():
    from simul.models.extensions.mma_decoder import fixed_blocks, oracle_blocks

    # 80 ms frames; sources of 10 frames (800 ms) and 4 (320 ms); Δt = 280 ms: blocks read
    # at 280, 560, 800 ms (frames 3, 7, 10 read: last indices 2, 6, 9) and at 280, 320 ms
    fixed = fixed_blocks(torch.tensor([10, 4]), 280.0, 80.0)
    assert fixed.ms.tolist() == [[280, 560, 800], [280, 320, 320]]
    assert fixed.ends.tolist() == [[2, 6, 9], [2, 3, 3]]
    assert fixed.valid.tolist() == [[True, True, True], [True, True, False]]
    # oracle ends at 150, 420 and 900 ms (past the 800 ms source: dropped, the source's end
    # is the last block) and at 100 ms (before the first frame: attends to frame 0)
    oracle = oracle_blocks(torch.tensor([[150.0, 420.0, 900.0], [100.0, 0.0, 0.0]]),
                           torch.tensor([3, 1]), torch.tensor([10, 4]), 80.0)
    assert oracle.ms.tolist() == [[150, 420, 800], [100, 320, 320]]
    assert oracle.ends.tolist() == [[0, 4, 9], [0, 3, 3]]
    assert oracle.valid.tolist() == [[True, True, True], [True, True, False]]


def test_word_boundaries_reach_the_decoder_through_the_batch(monkeypatch, mma_model, speech):
    # a decoder trained on oracle word ends reads them from the batch (data block_ms); every
    # head at the last block (p = 0): the blocks change nothing but the latency's times
    force_stops(monkeypatch, never)
    dec = mma_model.model.decoder
    batch = {"speech": torch.tensor(speech).unsqueeze(0), "speech_lengths": torch.tensor([19200]),
             "text": torch.tensor([[3, 4, 5, 6]]), "text_lengths": torch.tensor([4]),
             "src_text": torch.tensor([[3, 4]]), "src_text_lengths": torch.tensor([2])}
    dec.pre_decision = "word"
    try:
        with pytest.raises(RuntimeError, match="block_ms"):
            mma_model.model(**batch)
        with torch.no_grad():
            mma_model.model(**batch, block_ms=torch.tensor([[150.0, 420.0, 700.0]]),
                            block_ms_lengths=torch.tensor([3]))
        assert dec.decoders[0].src_attn.alpha.shape[-1] == 4  # three words and the end
    finally:
        dec.pre_decision = "fixed"


def test_oracle_ends_exported_for_training(tmp_path):
    # simul train exports the oracle ends a word-trained MMA decoder reads (text_float),
    # per utterance id as export_split names them, scaled for speed-perturbed copies
    from simul.corpus import DEFAULT_ROOT, load_list
    from simul.models.training import prepare

    out = prepare.export_boundaries(DEFAULT_ROOT, "en-de", "tst-HE", tmp_path, "word",
                                    speed_factors=(1.0, 0.9), progress=False)
    lines = dict(line.split(" ", 1) for line in out.read_text().splitlines())
    first = load_list(DEFAULT_ROOT, "en-de", "tst-HE", limit=1, with_audio=False)[0]
    ends = sorted({w.end_ms for w in first.alignment.words})
    assert [float(t) for t in lines["tst-HE_000000"].split()] == pytest.approx(ends, abs=0.01)
    assert [float(t) for t in lines["sp0.9-tst-HE_000000"].split()] == pytest.approx(
        [t / 0.9 for t in ends], abs=0.01)
    with pytest.raises(ValueError, match="syllable"):
        prepare.export_boundaries(DEFAULT_ROOT, "en-de", "tst-HE", tmp_path, "syllable")


@pytest.mark.parametrize("model", ["tiny", "conformer_bpe_en-de_mma"])
def test_keys_and_values_made_when_encoding_change_nothing(monkeypatch, mma_model, model):
    """Each step projects only its query; the heads' keys and values of the encoder output,
    made once when encoding, give the units, delays and scores of projecting them at every
    step (forward_qkv), bit for bit."""
    from simul import corpus
    from simul.models import loader

    if model != "tiny":
        mma_model = loader.load(model)
    seg = corpus.load_list(corpus.DEFAULT_ROOT, "en-de", "tst-COMMON", limit=1)[0]
    seg = segment(seg.audio[:64000])
    assert "memory_kv" in mma_model.encode(seg.audio).derived
    fast = simulate(mma_model, MonotonicAttention(), seg)
    offline = mma_model.greedy(mma_model.encode(seg.audio))
    layers = len(mma_model.model.decoder.decoders)
    monkeypatch.setattr(ESPnetMMA, "_memory_kv", lambda self, enc: [None] * layers)
    slow = simulate(mma_model, MonotonicAttention(), seg)
    assert (fast.units, fast.delays) == (slow.units, slow.delays) and len(fast.units) >= 3
    again = mma_model.greedy(mma_model.encode(seg.audio))
    assert (offline.tokens, offline.score) == (again.tokens, again.score)
