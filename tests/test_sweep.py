"""Sweeps: shared computations, honest CA charges, resuming after a kill, Dask execution."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
import yaml

from simul import sweep
from simul.corpus import load_list
from simul.decoding.simulate import simulate
from simul.models.adapters.espnet_st import ESPnetST
from simul.sweep import Setting, Spec, SweepError
from simul.sweep.calls import SharedCalls
from tests.test_mustc import PAIR, SPLIT, make_corpus

pytestmark = pytest.mark.long  # a minute or more (tests/conftest.py's order)

# A grid that reads the same prefixes under several settings, and one setting of every
# other policy family (beam search, CTC, attention, pre-decision, catch-up).
GRID = [
    {"policy": "wait_k_frames", "grid": {"k": [20, 40], "s": [10, 20], "n": [1, 2]},
     "fixed": {"maxlenratio": 1.0}},
    {"policy": "offline"},
    {"policy": "onlinization", "settings": [{"chunk_ms": 250, "rule": "la", "n": 2, "beam": 2}]},
    {"policy": "wait_k_words", "settings": [{"k": 1, "detection": "adaptive", "chunk_ms": 200},
                                            {"k": 2, "detection": "fixed", "word_ms": 150}]},
    {"policy": "alignatt", "settings": [{"chunk_ms": 300, "frames": 1}]},
    {"policy": "predecision", "settings": [{"step_ms": 200, "k": 2}]},
    {"policy": "wait_k_catchup", "settings": [{"k": 2, "stride_ms": 200, "catchup": 0.25}]},
]
NCA = ["BLEU", "chrF", "AL", "LAAL", "DAL", "AP", "ATD", "StartOffset", "EndOffset",
       "AL_N21", "AL_N21_orig", "AL_M20", "AL_K22", "length_diff", "utterances"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    make_corpus(root / PAIR)
    return root


@pytest.fixture(scope="module")
def segments(corpus):
    return load_list(corpus, PAIR, SPLIT)


@pytest.fixture(scope="module")
def model(tiny_model_dir):
    return ESPnetST.from_dir(tiny_model_dir)


def spec(tiny_model_dir, corpus, output, policies=None, **extra) -> dict:
    return {"models": [str(tiny_model_dir)], "pair": PAIR, "splits": [SPLIT],
            "corpus": str(corpus), "output": str(output), "policies": policies or GRID,
            **extra}


def settings() -> list[Setting]:
    return sweep.expand(GRID, "test")


def without_times(record: dict) -> dict:
    return {k: v for k, v in record.items() if k != "elapsed"}


# --------------------------------------------------------------------------- sharing
def test_shared_results_equal_unshared_unit_for_unit(tiny_model_dir, segments):
    ref = sweep.resolve_model(str(tiny_model_dir))
    for seg in segments:
        shared = sweep.decode_utterance(ref, settings(), seg, share=True)
        alone = sweep.decode_utterance(ref, settings(), seg, share=False)
        assert [without_times(r) for r in shared] == [without_times(r) for r in alone]
        assert any(r["units"] for r in shared)


def test_grid_shares_encoder_outputs(model, segments):
    shared = SharedCalls(model)
    for setting in settings()[:8]:  # the wait-k grid: 100 ms multiples only
        simulate(shared, setting.make(), segments[2])
    lengths = sorted(k[2] for k in shared._memory if k[0] == "encode")
    full = segments[2].audio.size  # 1.25 s
    assert lengths == [*range(3200, full, 1600), full]  # once each: 200, 300, …, 1200 ms, end
    assert shared.misses["encode"] == len(lengths)
    assert shared.hits["encode"] > 3 * shared.misses["encode"]  # 8 settings read them


class FakeClock:
    """Time advances only when a model call costs something (ms)."""

    def __init__(self):
        self.ms = 0.0

    def __call__(self) -> float:
        return self.ms / 1000.0


class Costly:
    """The adapter, with a fixed fake cost per call (encode 7 ms, decoder calls 3 ms)."""

    COSTS = {"encode": 7.0, "greedy": 3.0, "beam_search": 5.0, "ctc_words": 1.0,
             "cross_attention": 2.0}

    def __init__(self, model, clock: FakeClock):
        self.model, self.clock = model, clock

    def __getattr__(self, name):
        attr = getattr(self.model, name)
        if name not in self.COSTS:
            return attr

        def call(*args, **kwargs):
            self.clock.ms += self.COSTS[name]
            return attr(*args, **kwargs)

        return call


def test_remembered_results_are_charged_what_they_cost(model, segments):
    # With deterministic costs, a setting's elapsed times are the same whether it computed
    # everything itself or found most of it computed by the settings before it.
    clock = FakeClock()
    costly = Costly(model, clock)
    shared = SharedCalls(costly, clock=clock)
    for setting in settings():
        alone = simulate(costly, setting.make(), segments[2], clock=clock)
        with_memory = simulate(shared, setting.make(), segments[2], clock=clock)
        assert with_memory.elapsed == pytest.approx(alone.elapsed, abs=1e-6), setting.slug
        assert alone.elapsed[-1] > alone.delays[-1]
    assert shared.hits["encode"] > 0 and shared.hits["greedy"] > 0


def test_costs_count_calls_and_what_computing_them_alone_would_cost(model, segments):
    # Fixed fake costs: what the settings are charged is what each would have spent alone
    # (the clock of a run without memory), and what was computed is the clock of the run.
    clock = FakeClock()
    costly = Costly(model, clock)
    for setting in settings():
        simulate(costly, setting.make(), segments[2], clock=clock)
    alone_ms = clock.ms
    clock.ms = 0.0
    shared = SharedCalls(costly, clock=clock)
    for setting in settings():
        simulate(shared, setting.make(), segments[2], clock=clock)
    costs = shared.costs()
    assert sum(c["charged_ms"] for c in costs.values()) == pytest.approx(alone_ms)
    assert sum(c["computed_ms"] for c in costs.values()) == pytest.approx(clock.ms)
    for name, c in costs.items():
        assert c["made"] == shared.hits[name] + shared.misses[name]
        assert c["computed"] == shared.misses[name]
        assert c["computed_ms"] == pytest.approx(Costly.COSTS[name] * c["computed"])
    assert costs["encode"]["made"] > costs["encode"]["computed"]


def test_resumed_decoder_steps_are_charged_what_they_cost(monkeypatch, model, segments):
    # Every Transformer decoder step costs 1 ms on the fake clock. Settings re-decode their
    # committed units over encoder outputs they share; a setting that resumes from steps
    # another one took (the prefix memory) is charged them, so its elapsed times are those
    # of decoding alone, while the sweep takes fewer steps.
    if model.prefix_memory(FakeClock(), lambda ms: None) is None:
        pytest.skip("the prefix memory serves Transformer decoders")
    from simul.models.extensions import decoder_scorers

    clock = FakeClock()
    steps = {"alone": 0, "shared": 0}
    mode = "alone"
    real = decoder_scorers.transformer_score

    def costly_step(*args):
        clock.ms += 1.0
        steps[mode] += 1
        return real(*args)

    monkeypatch.setattr(decoder_scorers, "transformer_score", costly_step)
    costly = Costly(model, clock)
    shared = SharedCalls(costly, clock=clock)
    grid = sweep.expand([{"policy": "wait_k_words", "grid": {"k": [1, 2, 3]},
                          "fixed": {"detection": "fixed", "word_ms": 100, "chunk_ms": 100}}],
                        "test")
    for setting in grid:
        mode = "alone"
        alone = simulate(costly, setting.make(), segments[2], clock=clock)
        mode = "shared"
        with_memory = simulate(shared, setting.make(), segments[2], clock=clock)
        assert with_memory.units == alone.units and len(alone.units) > 3
        assert with_memory.elapsed == pytest.approx(alone.elapsed, abs=1e-6), setting.slug
    assert steps["shared"] < 0.8 * steps["alone"]


def test_steps_resumed_outside_a_remembered_call_are_charged(model, segments):
    # Decoder steps resumed by a call the memory does not wrap (the adapter called directly
    # on a shared encoder output) are charged at the next settle. The clock ticks 1 ms per
    # reading: each step costs 1 ms.
    if model.prefix_memory(FakeClock(), lambda ms: None) is None:
        pytest.skip("the prefix memory serves Transformer decoders")
    import itertools

    ticks = itertools.count()
    shared = SharedCalls(model, clock=lambda: next(ticks) / 1000.0)
    enc = shared.encode(segments[2].audio)
    units = model.greedy(enc, max_new=4, avoid_eos=True).tokens  # <sos> remembered
    assert len(units) == 4 and shared.settle() == 0.0
    model.step(enc, None, units[:3])  # resumes <sos> (1 ms), computes three more
    model.step(enc, None, units[:3])  # resumes all four
    assert shared.settle() == pytest.approx(5.0)
    assert shared.settle() == 0.0


def test_shared_prefixes_keep_a_conformers_records(tmp_path):
    # P22's grid on the shipped en-de Conformer: settings that resume each other's decoder
    # steps write what each writes alone, unit for unit and delay for delay.
    from simul.corpus import DEFAULT_ROOT
    from simul.papers import papi2022

    s = Spec.load(papi2022.spec("conformer_bpe_en-de", "en-de", "tst-COMMON",
                                str(tmp_path / "out"), word_ms=360, ks=(3, 5, 7)))
    ref = sweep.resolve_model("conformer_bpe_en-de")
    seg = load_list(DEFAULT_ROOT, "en-de", "tst-COMMON", limit=2)[1]
    settings_ = [x for x in s.settings if x.policy == "wait_k_words"]
    shared = sweep.decode_utterance(ref, settings_, seg, share=True)
    alone = sweep.decode_utterance(ref, settings_, seg, share=False)
    assert [without_times(r) for r in shared] == [without_times(r) for r in alone]
    assert all(len(r["units"]) > 5 for r in shared)


def test_ca_latency_with_and_without_sharing_agree_within_noise(tiny_model_dir, corpus,
                                                                 tmp_path):
    # Real clocks: every setting's computation-aware overhead (LAAL_CA − LAAL) measured with
    # shared computations is that of the setting computing alone, up to timing noise.
    # Without the charge, settings after the first would show a fraction of it.
    grid = GRID[:1]
    # a first run pays the one-time costs (lazy imports, the first calls of each kernel):
    # left out, so that neither measured run carries them
    sweep.run(spec(tiny_model_dir, corpus, tmp_path / "warm-up", grid, share=False,
                   store=False), workers=1, progress=False)
    # each way three times, in turn; the least overhead of each (another process taking the
    # core, as the suite's other worker does, only ever adds time)
    over: dict[bool, list[float]] = {True: [], False: []}
    for turn in range(3):
        for share in (True, False):
            run = sweep.run(spec(tiny_model_dir, corpus, tmp_path / f"{share}{turn}", grid,
                                 share=share, store=False), workers=1, progress=False)
            if turn == 0 and share:
                shared = run
            elif turn == 0:
                pd.testing.assert_frame_equal(shared[NCA], run[NCA])
            over[share].append(float((run.LAAL_CA - run.LAAL).sum()))
    assert min(over[False]) > 0
    assert 0.6 < min(over[True]) / min(over[False]) < 1.67


# --------------------------------------------------------------------------- the runner
def test_run_writes_records_summary_and_provenance(tiny_model_dir, corpus, segments, tmp_path):
    out = tmp_path / "out"
    table = sweep.run(spec(tiny_model_dir, corpus, out), workers=1, progress=False)
    assert len(table) == len(settings())
    assert list(table.setting[:2]) == ["maxlenratio=1.0_k=20_s=10_n=1",
                                       "maxlenratio=1.0_k=20_s=10_n=2"]
    for col in ["BLEU", "LAAL", "LAAL_CA", "AL_N21", "BLEU_signature", "model_checksum",
                "corpus_checksum", "git_commit", "machine", "simul_version", "param_k"]:
        assert col in table, col
    assert (table.utterances == len(segments)).all()
    # the records file of a setting holds what deciding that setting alone gives
    ref = sweep.resolve_model(str(tiny_model_dir))
    row = table.iloc[3]
    lines = (out / row.records).read_text().splitlines()
    got = [json.loads(line) for line in lines]
    expected = [json.loads(json.dumps(sweep.decode_utterance(ref, [settings()[3]], s,
                                                             share=False)[0]))
                for s in segments]
    assert [without_times(r) for r in got] == [without_times(r) for r in expected]
    assert sweep.read_summary(out).setting.tolist() == table.setting.tolist()


def test_finished_sweep_is_not_decoded_again(tiny_model_dir, corpus, tmp_path):
    s = spec(tiny_model_dir, corpus, tmp_path / "out", GRID[:2])
    first = sweep.run(s, workers=1, progress=False)
    calls = []
    again = sweep.run(s, workers=1, progress=False, on_result=lambda: calls.append(1))
    assert calls == []
    pd.testing.assert_frame_equal(first[NCA], again[NCA])


def test_changed_spec_is_refused_unless_forced(tiny_model_dir, corpus, tmp_path):
    out = tmp_path / "out"
    sweep.run(spec(tiny_model_dir, corpus, out, GRID[1:2]), workers=1, progress=False)
    changed = spec(tiny_model_dir, corpus, out, GRID[1:2], max_utterances=2)
    with pytest.raises(SweepError, match=r"changed: max_utterances"):
        sweep.run(changed, workers=1, progress=False)
    table = sweep.run(changed, workers=1, progress=False, force=True)
    assert table.utterances.tolist() == [2]


def test_a_notebooks_sweep_starts_over_when_its_spec_changed(tiny_model_dir, corpus,
                                                              tmp_path):
    # a notebook's runs are its own: where `simul sweep` refuses (above), it starts over
    from simul.papers import notebook

    nb = notebook.setup(tmp_path / "figures", tmp_path / "runs", workers=1)
    out = tmp_path / "runs" / "grid"
    nb.sweep(spec(tiny_model_dir, corpus, out, GRID[1:2]))
    table = nb.sweep(spec(tiny_model_dir, corpus, out, GRID[1:2], max_utterances=2))
    assert table.utterances.tolist() == [2]


def test_changed_model_is_refused(tmp_path, corpus):
    from tests.conftest import make_tiny_model

    model_dir = make_tiny_model(tmp_path / "m", "rnn", seed=1)
    out = tmp_path / "out"
    sweep.run(spec(model_dir, corpus, out, GRID[1:2]), workers=1, progress=False)
    make_tiny_model(model_dir, "rnn", seed=2)
    with pytest.raises(SweepError, match=r"changed: models"):
        sweep.run(spec(model_dir, corpus, out, GRID[1:2]), workers=1, progress=False)


KILLER = """
import os, signal, sys
from simul import sweep
count = 0
def maybe_die():
    global count
    count += 1
    if count == int(sys.argv[2]):
        os.kill(os.getpid(), signal.SIGKILL)
sweep.run(sys.argv[1], workers=1, progress=False, on_result=maybe_die)
"""


@pytest.mark.slow
def test_sweep_killed_and_restarted_equals_uninterrupted(tiny_model_dir, corpus, tmp_path):
    grid = [{"policy": "wait_k_frames", "grid": {"k": [20, 40]},
             "fixed": {"s": 10, "n": 1, "maxlenratio": 1.0}}, GRID[2]]
    whole = sweep.run(spec(tiny_model_dir, corpus, tmp_path / "whole", grid, store=False),
                      workers=1, progress=False)
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(spec(tiny_model_dir, corpus, tmp_path / "killed",
                                             grid, store=False), sort_keys=False))
    proc = subprocess.run([sys.executable, "-c", KILLER, str(spec_file), "2"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == -9, proc.stderr
    journal = tmp_path / "killed" / "journal" / Path(tiny_model_dir).name / f"{SPLIT}.jsonl"
    assert len(journal.read_text().splitlines()) == 2
    assert not (tmp_path / "killed" / "summary.csv").exists()
    with open(journal, "a") as f:  # as if killed in the middle of the next append
        f.write('{"position": 3, "segment_id": "ted_2_1", "reco')
    calls = []
    resumed = sweep.run(spec_file, workers=1, progress=False, on_result=lambda: calls.append(1))
    assert len(calls) == 2  # the other two utterances
    pd.testing.assert_frame_equal(resumed[NCA], whole[NCA])


# --------------------------------------------------------------------------- execution
@pytest.mark.slow
def test_process_pool_and_dask_cluster_give_the_local_records(corpus, tmp_path):
    from tests.conftest import make_tiny_model

    distributed = pytest.importorskip("distributed")
    tiny_model_dir = make_tiny_model(tmp_path / "tiny_rnn", "rnn")  # workers start slowly
    grid = GRID[:1] + GRID[3:4]
    local = sweep.run(spec(tiny_model_dir, corpus, tmp_path / "local", grid, store=False),
                      workers=1, progress=False)
    pool = sweep.run(spec(tiny_model_dir, corpus, tmp_path / "pool", grid, store=False),
                     workers=2, progress=False)
    pd.testing.assert_frame_equal(pool[NCA], local[NCA])
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        dask = sweep.run(spec(tiny_model_dir, corpus, tmp_path / "dask", grid, store=False),
                         scheduler=cluster.scheduler_address, progress=False)
    pd.testing.assert_frame_equal(dask[NCA], local[NCA])
    for name in ("pool", "dask"):
        for row in local.records:
            ours = [without_times(json.loads(x))
                    for x in (tmp_path / name / row).read_text().splitlines()]
            theirs = [without_times(json.loads(x))
                      for x in (tmp_path / "local" / row).read_text().splitlines()]
            assert ours == theirs


@pytest.mark.slow
def test_workers_kept_between_sweeps_until_the_code_changes(corpus, tmp_path, monkeypatch):
    """A process's next sweep decodes in the same worker processes (started, torch imported
    and the model loaded once) and gets the same records; workers that imported code
    changed since are replaced; a sweep stopped half-way takes its pool with it. The first
    sweep may find the pool an earlier test of this process left: kept as well."""
    from simul.sweep import executors
    from tests.conftest import make_tiny_model

    tiny_model_dir = make_tiny_model(tmp_path / "tiny_rnn", "rnn")
    grid = GRID[3:4]

    def run(name, **kw):
        return sweep.run(spec(tiny_model_dir, corpus, tmp_path / name, grid, store=False),
                         workers=2, progress=False, **kw)

    def pool():
        return executors._POOLS[(2, "cpu")][0]

    first = run("first")
    kept, pids = pool(), set(pool()._processes)
    assert pids
    second = run("second")
    assert pool() is kept and pids <= set(kept._processes)
    pd.testing.assert_frame_equal(second[NCA], first[NCA])

    monkeypatch.setattr(executors.record_store, "source_digest", lambda: "edited")
    again = run("edited")
    assert pool() is not kept and not set(pool()._processes) & pids
    pd.testing.assert_frame_equal(again[NCA], first[NCA])

    def stop():
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        run("stopped", on_result=stop)
    assert (2, "cpu") not in executors._POOLS
    executors.shutdown_pools()
    assert not executors._POOLS


# --------------------------------------------------------------------------- the spec
BAD_SPECS = [
    ({"policies": "x"}, "field 'policies'"),
    ({"pair": "english"}, "field 'pair'"),
    ({"max_utterances": 0}, "field 'max_utterances'"),
    ({"colour": 1}, "unknown field(s) ['colour']"),
    ({"policies": [{"policy": "wait_k"}]}, "policies'[0].policy: unknown policy 'wait_k'"),
    ({"policies": [{"policy": "wait_k_frames", "grid": {"kk": [1]}}]},
     "has no setting 'kk'"),
    ({"policies": [{"policy": "wait_k_frames", "grid": {"k": []}}]}, "[0].grid"),
    ({"policies": [{"policy": "offline"}, {"policy": "offline", "fixed": {"beam": 1}}]},
     "[1]: setting beam=1 repeats"),
]


@pytest.mark.parametrize(("change", "message"), BAD_SPECS)
def test_bad_spec_names_the_field(tmp_path, change, message):
    data = {"models": ["m"], "pair": "en-es", "output": "out", "policies": [
        {"policy": "offline"}], **change}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(SweepError) as info:
        Spec.load(path)
    assert str(path) in str(info.value)
    assert message in str(info.value)


def test_spec_paths_are_relative_to_the_spec_file(tmp_path):
    path = tmp_path / "specs" / "n21.yaml"
    path.parent.mkdir()
    path.write_text(textwrap.dedent("""
        models: [m]
        pair: en-es
        output: ../runs/n21
        policies: [{policy: wait_k_frames, grid: {k: [100, 200]}}]
    """))
    spec_ = Spec.load(path)
    assert spec_.output == path.parent / "../runs/n21"
    assert [s.slug for s in spec_.settings] == ["k=100", "k=200"]
    assert spec_.splits == ["tst-COMMON"]


def test_longest_utterances_are_decoded_first_and_records_keep_corpus_order(
        tiny_model_dir, corpus, segments, tmp_path):
    out = tmp_path / "out"
    table = sweep.run(spec(tiny_model_dir, corpus, out, GRID[1:2], store=False), workers=1,
                      progress=False)
    journal = out / "journal" / Path(tiny_model_dir).name / f"{SPLIT}.jsonl"
    order = [json.loads(line)["position"] for line in journal.read_text().splitlines()]
    durations = [segments[p].duration_ms for p in order]
    assert len(set(durations)) > 1  # the test corpus' segments differ in length
    assert durations == sorted(durations, reverse=True)
    assert sorted(order) == list(range(len(segments)))
    lines = (out / table.records[0]).read_text().splitlines()
    assert [json.loads(line)["segment_id"] for line in lines] == [s.id for s in segments]


def test_a_splits_corpus_checksum_ignores_the_other_splits(tmp_path):
    # a mini corpus speaks train when training needs it: dev's sweeps and stored records
    # must keep their key when the manifest gains train's files
    import hashlib

    from simul.sweep.journal import corpus_checksum

    for split in ("dev", "train"):
        (tmp_path / "en-es" / "data" / split / "txt").mkdir(parents=True)
    dev = {"en-es/data/dev/txt/dev.en": {"bytes": 4, "sha256": "a" * 64},
           "en-es/data/dev/wav/talk_0001.wav": {"bytes": 9, "sha256": "b" * 64}}
    train = {"en-es/data/train/txt/train.en": {"bytes": 5, "sha256": "c" * 64}}

    def key(files, **more):
        (tmp_path / "manifest.json").write_text(json.dumps({"files": files, **more}))
        return corpus_checksum(tmp_path, "en-es", "dev")

    before = key({**dev, **train}, splits=["dev"])
    assert before.startswith("split:")
    assert key({**dev, **train, "en-es/data/train/wav/talk_0002.wav": {
        "bytes": 9, "sha256": "d" * 64}}, splits=["train", "dev"]) == before
    assert key({**dev, "en-es/data/dev/txt/dev.en": {"bytes": 4, "sha256": "e" * 64}},
               splits=["dev"]) != before
    # read from the pair's folder: the same key
    assert corpus_checksum(tmp_path / "en-es", "en-es", "dev") == corpus_checksum(
        tmp_path, "en-es", "dev")
    # a manifest from before splits were spoken one by one keys sweeps as it did: by itself
    key({**dev, **train})
    assert corpus_checksum(tmp_path, "en-es", "dev") == hashlib.sha256(
        (tmp_path / "manifest.json").read_bytes()).hexdigest()
