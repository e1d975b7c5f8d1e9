"""The cached Transformer scorer against ESPnet's own decoder scoring (tiny random model)."""

import pytest
import torch

from simul import corpus
from simul.corpus import DEFAULT_ROOT
from simul.models import loader
from simul.models.adapters.espnet_st import ESPnetST
from simul.models.extensions import decoder_scorers
from tests.conftest import make_tiny_model


@pytest.fixture(scope="module")
def adapter(tmp_path_factory):
    return ESPnetST.from_dir(make_tiny_model(tmp_path_factory.mktemp("tiny"), "transformer"))


def test_scores_and_states_follow_espnet(adapter, speech):
    dec = adapter.model.decoder
    assert decoder_scorers.supports_transformer(dec)
    enc = adapter.encode(speech)
    ours = decoder_scorers.CachedTransformerScorer(dec, enc.states)
    g = torch.Generator().manual_seed(0)
    ys = torch.cat([torch.full((3, 1), adapter.sos),
                    torch.randint(1, len(adapter.token_list) - 1, (3, 6), generator=g)], 1)
    xs = enc.states.expand(3, *enc.states.shape)
    with torch.inference_mode():
        # primer of three units, then four single-unit steps, as a beam search calls it
        theirs_logp, theirs_state = dec.batch_score(ys[:, :3], [None] * 3, xs)
        our_logp, our_state = ours.batch_score(ys[:, :3], [None] * 3, xs)
        assert torch.allclose(our_logp, theirs_logp, atol=1e-5)
        for t in range(4, ys.shape[1] + 1):
            order = [2, 0, 1]  # the beam reorders hypotheses between steps
            theirs_state = [theirs_state[b] for b in order]
            our_state = [our_state[b] for b in order]
            ys = ys[order]
            theirs_logp, theirs_state = dec.batch_score(ys[:, :t], theirs_state, xs)
            our_logp, our_state = ours.batch_score(ys[:, :t], our_state, xs)
            assert torch.allclose(our_logp, theirs_logp, atol=1e-5)
            assert all(len(s) == len(dec.decoders) and s[0][0].shape[1] == t for s in our_state)
        with pytest.raises(ValueError, match="another encoder output"):
            ours.batch_score(ys, our_state, enc.states[:-1].expand(3, -1, -1))


def test_beam_search_units_equal_espnet_scoring(adapter, speech):
    enc = adapter.encode(speech)
    free = adapter.greedy(enc).tokens
    for prefix in ([], free[:2], free[:5]):
        for beam in (1, 3, 5):
            adapter.use_decoder_scorers = True
            fast = adapter.beam_search(enc, prefix, beam=beam)
            adapter.use_decoder_scorers = False
            slow = adapter.beam_search(enc, prefix, beam=beam)
            assert [h.tokens for h in fast] == [h.tokens for h in slow]
            assert [h.score for h in fast] == pytest.approx([h.score for h in slow], abs=1e-4)
    adapter.use_decoder_scorers = True


def test_rnn_decoders_keep_espnet_beam_scoring(tmp_path):
    adapter = ESPnetST.from_dir(make_tiny_model(tmp_path, "rnn"))
    assert not decoder_scorers.supports_transformer(adapter.model.decoder)


def _walk(adapter, speech, fast: bool):
    """Greedy over growing prefixes, each resuming the state of the previous one (N21's
    decoder-state reuse), then one step from scratch: every log-probability seen."""
    adapter.use_decoder_scorers = fast
    seen, units, resume = [], [], None
    for n in (6400, 9600, 12800, len(speech)):
        enc = adapter.encode(speech[:n])
        hyp = adapter.greedy(enc, units, max_new=3, state=resume)
        units, resume = units + hyp.tokens, hyp.resume
        seen.append(adapter.step(enc, resume, units)[0])
    seen.append(adapter.step(enc, None, units)[0])
    adapter.use_decoder_scorers = True
    return units, seen


@pytest.mark.parametrize("model", ["tiny", "blstm_char_en-es"])
def test_rnn_steps_are_espnets_bit_for_bit(tmp_path, speech, model):
    if model == "tiny":
        adapter = ESPnetST.from_dir(make_tiny_model(tmp_path, "rnn"))
    else:
        adapter = loader.load(model)
        speech = corpus.load_list(DEFAULT_ROOT, "en-es", "dev", limit=1)[0].audio[:48000]
    assert decoder_scorers.supports_rnn(adapter.model.decoder)
    units_fast, fast = _walk(adapter, speech, True)
    units_espnet, espnet = _walk(adapter, speech, False)
    assert units_fast == units_espnet and len(units_fast) >= 4
    assert all(torch.equal(a, b) for a, b in zip(fast, espnet, strict=True))


def test_transformer_decoders_take_no_rnn_path(adapter):
    assert not decoder_scorers.supports_rnn(adapter.model.decoder)


@pytest.mark.parametrize("model", ["tiny", "conformer_bpe_en-de", "transformer_bpe_en-es"])
def test_transformer_greedy_steps_are_espnets_bit_for_bit(tmp_path, speech, model, adapter):
    if model != "tiny":
        adapter = loader.load(model)
        speech = corpus.load_list(DEFAULT_ROOT, "en-es", "dev", limit=1)[0].audio[:48000]
    assert decoder_scorers.supports_transformer(adapter.model.decoder)
    assert "memory_kv" in adapter.encode(speech).derived  # made when encoding, not later
    units_fast, fast = _walk(adapter, speech, True)
    units_espnet, espnet = _walk(adapter, speech, False)
    assert units_fast == units_espnet and len(units_fast) >= 4
    assert all(torch.equal(a, b) for a, b in zip(fast, espnet, strict=True))


def test_text_mt_steps_are_espnets_bit_for_bit():
    mt = loader.load("mt_transformer_bpe_en-de")
    words = "the children who live in the house by the river".split()
    steps = {}
    for fast in (True, False):
        mt.use_decoder_scorers = fast
        units, resume, seen = [], None, []
        for n in (4, 7, len(words)):  # growing sources, the decoder state reused
            enc = mt.encode_words(words[:n])
            hyp = mt.greedy(enc, units, max_new=2, state=resume)
            units, resume = units + hyp.tokens, hyp.resume
            seen.append(mt.step(enc, resume, units)[0])
        steps[fast] = units, seen
    mt.use_decoder_scorers = True
    assert steps[True][0] == steps[False][0] and len(steps[True][0]) >= 4
    assert all(torch.equal(a, b) for a, b in zip(steps[True][1], steps[False][1], strict=True))


def test_prefix_memory_resumes_bit_for_bit(adapter, speech):
    """Steps taken from scratch over an encoder output are remembered by prefix; a later
    call resumes from the longest one, is charged what those steps cost (a clock that ticks
    1 ms per reading: 1 ms a step), and computes what decoding from scratch computes."""
    import itertools

    from simul.models.adapters.espnet_st import PrefixMemory

    ticks = itertools.count()
    charged = []
    enc = adapter.encode(speech)
    enc.derived["prefixes"] = PrefixMemory(lambda: next(ticks) / 1000.0, charged.append)
    fresh = adapter.encode(speech)  # no memory: every step from scratch
    units = adapter.greedy(fresh, max_new=8).tokens
    assert len(units) >= 6
    for tokens, resumed in ((units[:3], 0), (units[:6], 4), (units[:2], 3), (units[:6], 7)):
        logp, state = adapter.step(enc, None, tokens)
        want_logp, want = adapter.step(fresh, None, tokens)
        assert torch.equal(logp, want_logp)
        assert all(torch.equal(a, b) for a, b in zip(state.state, want.state, strict=True))
        assert state.tokens == want.tokens
        assert sum(charged) == pytest.approx(resumed)  # <sos> and the units resumed
        charged.clear()
