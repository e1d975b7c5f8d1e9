"""Every policy on every shipped speech-translation model, the cascade policy on every
shipped cascade, the mma policy on every shipped MMA model and wait_k_text on every shipped
text MT model, a few tst-COMMON segments (issue: policies).

Skipped while no model is shipped. Properties: reading the whole input first gives the
offline output unit for unit; reads never go backwards and never past the end; no word is
delayed beyond the source; the run ends with the whole source read (pre-decision without
force_finish: or at the </s> it predicted while reading).

Every policy runs on one model of each build (encoder, decoder and unit type: characters or
subwords): the model that the others of its build were fine-tuned from, or the first by
name. The others (other pairs and vocabularies of the same build, simultaneously trained or
meta-learned decoders on the same modules) run wait-k over words, reading everything first
and at k = 3: what they differ in is their weights, not the code a policy runs."""

import json

import pytest

from simul.corpus import DEFAULT_ROOT, load_list
from simul.decoding.simulate import simulate
from simul.models import loader, registry
from simul.policies import make
from simul.policies.offline import Offline

pytestmark = [pytest.mark.corpus, pytest.mark.slow, pytest.mark.long]

# the policies below decode offline-trained decoders; models whose decoder decides by itself
# (monotonic multihead attention) run their own policy, tested at the end
MMA_MODELS = [m for m in registry.shipped_translators()
              if registry.config(m).get("decoder") == "transformer_mma"]
MODELS = [m for m in registry.shipped_translators() if m not in MMA_MODELS]


def _build(name: str) -> tuple:
    conf = registry.config(name)
    return conf.get("encoder"), conf.get("decoder"), conf.get("token_type")


def _representatives(models: list[str]) -> set[str]:
    """Per build, the model the others descend from: not trained in simultaneous mode, and
    the shortest name of those (the parent's name is a prefix of its children's)."""
    builds: dict[tuple, list[str]] = {}
    for name in models:
        builds.setdefault(_build(name), []).append(name)
    return {min(names, key=lambda n: (bool(registry.model(n).training_schedule), len(n), n))
            for names in builds.values()}


FULL = _representatives(MODELS)
CASCADES = registry.shipped_cascades()
WHOLE = 10_000_000  # a first read longer than any segment
FIRST = 4  # the segment: the shortest of tst-COMMON's first four (17 cases per build)


def _segments(pair: str, **kw) -> list:
    """The one tst-COMMON segment every case decodes: the shortest of the first
    :data:`FIRST` (5.7 s and 14 words on the mini corpus, where the first lasts 9.1 s)."""
    return [min(load_list(DEFAULT_ROOT, pair, "tst-COMMON", limit=FIRST, **kw),
                key=lambda seg: seg.duration_ms)]

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


def _cases(table: list[tuple]) -> list:
    """``table``'s cases for every model of :data:`FULL`; its wait_k_words cases with fixed
    detection for the others (their builds' models run the rest)."""
    out = []
    for model in MODELS:
        for case in table:
            name, settings = case[:2]
            if model in FULL or (name == "wait_k_words" and settings["detection"] == "fixed"):
                out.append(pytest.param(model, *case, id="-".join(
                    [model, name, *map(str, settings.values())])))
    return out or [pytest.param(None, *table[0], id="none")]


def _skip_without_ctc(model_name: str, model, name: str, settings: dict) -> None:
    if settings.get("detection") == "adaptive" and getattr(model.model, "ctc", None) is None:
        pytest.skip(f"{name} {settings} needs a source CTC; {model_name} has none")


@pytest.fixture(scope="module")
def loaded():
    """{model name: (name, model, segments, offline units by beam)}, each model loaded and
    decoded offline once for the module's two tests (pytest orders them test by test)."""
    return {}


@pytest.fixture
def shipped(request, loaded):
    name = request.param
    if name is None:
        pytest.skip("no shipped model yet (data/models/ is empty)")
    if name not in loaded:
        pair = json.loads((registry.MODELS_DIR / name / "simul.json").read_text())["pair"]
        segments = _segments(pair)
        model = loader.load(name)
        offline = {beam: [simulate(model, Offline(beam=beam), s).units for s in segments]
                   for beam in ((1, 5) if name in FULL else (1,))}
        loaded[name] = name, model, segments, offline
    return loaded[name]


@pytest.mark.parametrize(("shipped", "name", "settings", "beam"), _cases(WHOLE_INPUT),
                         indirect=["shipped"])
def test_reading_everything_first_gives_the_offline_output(shipped, name, settings, beam):
    model_name, model, segments, offline = shipped
    _skip_without_ctc(model_name, model, name, settings)
    got = [simulate(model, make(name, settings), s).units for s in segments]
    assert got == offline[beam]
    assert any(got)  # a shipped model translates


@pytest.mark.parametrize(("shipped", "name", "settings"), _cases(SIMULTANEOUS),
                         indirect=["shipped"])
def test_simultaneous_runs_read_forward_and_end_with_the_whole_source(shipped, name, settings):
    model_name, model, segments, offline = shipped
    _skip_without_ctc(model_name, model, name, settings)
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
    for seg in _segments(pair):
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
    for seg in _segments(info["pair"]):
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
    for seg in _segments(info["pair"], with_audio=False):
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
