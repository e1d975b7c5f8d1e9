"""Every policy on every shipped speech-translation model, the cascade policy on every
shipped cascade, the mma policy on every shipped MMA model and wait_k_text on every shipped
text MT model, a few tst-COMMON segments (issue: policies).

Skipped while no model is shipped. Properties: reading the whole input first gives the
offline output unit for unit; reads never go backwards and never past the end; no word is
delayed beyond the source; the run ends with the whole source read (pre-decision without
force_finish: or at the </s> it predicted while reading)."""

import json

import pytest

from simul.corpus import DEFAULT_ROOT, load_list
from simul.decoding.simulate import simulate
from simul.models import loader, registry
from simul.policies import make
from simul.policies.offline import Offline

pytestmark = [pytest.mark.corpus, pytest.mark.slow]

# the policies below decode offline-trained decoders; models whose decoder decides by itself
# (monotonic multihead attention) run their own policy, tested at the end
MMA_MODELS = [m for m in registry.shipped_translators()
              if registry.config(m).get("decoder") == "transformer_mma"]
MODELS = [m for m in registry.shipped_translators() if m not in MMA_MODELS]
CASCADES = registry.shipped_cascades()
WHOLE = 10_000_000  # a first read longer than any segment
SEGMENTS = 2  # first tst-COMMON segments per model (17 cases per model)

# (policy, settings making the first read cover the whole input, offline beam it equals)
WHOLE_INPUT = [
    ("wait_k_frames", {"k": WHOLE}, 1),
    ("wait_k_words", {"k": 10_000, "detection": "fixed"}, 1),
    ("wait_k_words", {"k": 10_000, "detection": "adaptive"}, 1),
    ("predecision", {"trigger": "fixed", "k": 10_000}, 1),
    ("wait_k_catchup", {"k": 10_000}, 1),
    ("onlinization", {"chunk_ms": WHOLE, "beam": 5}, 5),
    ("alignatt", {"chunk_ms": WHOLE}, 1),
    ("edatt", {"chunk_ms": WHOLE}, 1),
]
# ordinary low-latency settings of every policy
SIMULTANEOUS = [
    ("wait_k_frames", {"k": 100, "s": 20, "n": 2}),
    ("wait_k_words", {"k": 3, "detection": "fixed"}),
    ("wait_k_words", {"k": 3, "detection": "adaptive"}),
    ("predecision", {"trigger": "fixed", "step_ms": 280, "k": 3}),
    ("predecision", {"trigger": "word", "k": 2}),
    ("onlinization", {"chunk_ms": 1000, "rule": "la", "n": 2, "beam": 3}),
    ("wait_k_catchup", {"k": 3, "stride_ms": 300, "catchup": 0.25}),
    ("alignatt", {"chunk_ms": 500, "frames": 2}),
    ("edatt", {"chunk_ms": 500, "alpha": 0.3}),
]


def _applies(model, name: str, settings: dict) -> bool:
    if settings.get("detection") == "adaptive" and getattr(model.model, "ctc", None) is None:
        return False
    return True


@pytest.fixture(scope="module", params=MODELS or [None], ids=MODELS or ["none"])
def shipped(request):
    if request.param is None:
        pytest.skip("no shipped model yet (data/models/ is empty)")
    name = request.param
    pair = json.loads((registry.MODELS_DIR / name / "simul.json").read_text())["pair"]
    segments = load_list(DEFAULT_ROOT, pair, "tst-COMMON", limit=SEGMENTS)
    model = loader.load(name)
    offline = {beam: [simulate(model, Offline(beam=beam), s).units for s in segments]
               for beam in (1, 5)}
    return name, model, segments, offline


@pytest.mark.parametrize(("name", "settings", "beam"), WHOLE_INPUT,
                         ids=[f"{n}-{'-'.join(map(str, s.values()))}" for n, s, _ in WHOLE_INPUT])
def test_reading_everything_first_gives_the_offline_output(shipped, name, settings, beam):
    model_name, model, segments, offline = shipped
    if not _applies(model, name, settings):
        pytest.skip(f"{name} {settings} needs a source CTC; {model_name} has none")
    got = [simulate(model, make(name, settings), s).units for s in segments]
    assert got == offline[beam]
    assert any(got)  # a shipped model translates


@pytest.mark.parametrize(("name", "settings"), SIMULTANEOUS,
                         ids=[f"{n}-{'-'.join(map(str, s.values()))}" for n, s in SIMULTANEOUS])
def test_simultaneous_runs_read_forward_and_end_with_the_whole_source(shipped, name, settings):
    model_name, model, segments, offline = shipped
    if not _applies(model, name, settings):
        pytest.skip(f"{name} {settings} needs a source CTC; {model_name} has none")
    early = []
    for seg in segments:
        rec = simulate(model, make(name, settings), seg)
        reads = [r for r, _ in rec.trace]
        assert reads == sorted(reads)
        if name == "predecision" and not settings.get("force_finish"):
            # </s> predicted while reading ends the run there (SimulEval's behaviour): the
            # 500-unit BPE model does so on these segments; nothing is written after it
            assert reads[-1] <= rec.source_length and rec.delays[-1] <= reads[-1]
        else:
            assert reads[-1] == rec.source_length
        assert rec.prediction_length == len(rec.delays) == len(rec.elapsed) > 0
        assert rec.delays == sorted(rec.delays)
        assert all(0 < d <= rec.source_length for d in rec.delays)
        assert all(e >= d for e, d in zip(rec.elapsed, rec.delays, strict=True))
        early.append(rec.delays[0] < rec.source_length)
    assert any(early)  # it really is simultaneous: words come before the end of the source


@pytest.mark.parametrize("name", CASCADES or [None])
def test_a_shipped_cascade_reads_forward_and_writes_before_the_end(name):
    if name is None:
        pytest.skip("no shipped cascade")
    from simul.models.adapters.cascade import parts

    _, mt = parts(registry.MODELS_DIR / name)
    pair = json.loads((mt / "simul.json").read_text())["pair"]  # the MT's target language
    model = loader.load(name)
    early = []
    for seg in load_list(DEFAULT_ROOT, pair, "tst-COMMON", limit=SEGMENTS):
        rec = simulate(model, make("cascade", {"k": 2}), seg)
        reads = [r for r, _ in rec.trace]
        assert reads == sorted(reads) and reads[-1] == rec.source_length
        assert rec.prediction_length == len(rec.delays) > 0
        assert all(0 < d <= rec.source_length for d in rec.delays)
        early.append(rec.delays[0] < rec.source_length)
    assert any(early)


@pytest.mark.parametrize("name", MMA_MODELS or [None])
def test_a_shipped_mma_model_reads_forward_and_its_latency_weight_makes_it_write_early(name):
    if name is None:
        pytest.skip("no shipped MMA model")
    info = registry.info(name)
    model = loader.load(name)
    early = []
    for seg in load_list(DEFAULT_ROOT, info["pair"], "tst-COMMON", limit=SEGMENTS):
        rec = simulate(model, make("mma", {}), seg)
        reads = [r for r, _ in rec.trace]
        assert reads == sorted(reads) and reads[-1] <= rec.source_length
        assert rec.prediction_length == len(rec.delays) > 0
        assert rec.delays == sorted(rec.delays)
        assert all(0 < d <= reads[-1] for d in rec.delays)
        early.append(rec.delays[0] < rec.source_length)
    if info["monotonic_attention"]["latency_weight"] >= 0.3:  # λ = 0 waits (its card)
        assert any(early)


TEXT_MODELS = [m for m in registry.shipped()
               if not registry.is_cascade(registry.MODELS_DIR / m) and registry.task(m) == "mt"]


@pytest.mark.parametrize("name", TEXT_MODELS or [None])
def test_a_shipped_text_mt_under_wait_k_text(name):
    # every word read first: the offline greedy translation of the transcript; k = 2: words
    # before the end of the source
    if name is None:
        pytest.skip("no shipped text MT model")
    from simul.decoding.text import source_words

    info = registry.info(name)
    model = loader.load(name)
    early = []
    for seg in load_list(DEFAULT_ROOT, info["pair"], "tst-COMMON", limit=SEGMENTS,
                         with_audio=False):
        whole = simulate(model, make("wait_k_text", {"k": 10_000}), seg)
        offline = model.translate(source_words(seg), maxlenratio=2.0)
        assert whole.units == [model.token_list[u] for u in offline] and whole.units
        rec = simulate(model, make("wait_k_text", {"k": 2}), seg)
        assert rec.source_type == "text" and rec.source_length == len(source_words(seg))
        reads = [r for r, _ in rec.trace]
        assert reads == sorted(reads) and reads[-1] == rec.source_length
        assert rec.delays == sorted(rec.delays) and rec.prediction_length > 0
        assert all(2 <= d <= rec.source_length for d in rec.delays)
        early.append(rec.delays[0] < rec.source_length)
    assert any(early)
