"""``--device``: CUDA refused by every entry point where torch has none, before any work; the
clock waits for the GPU exactly when the model is on one; ``cpu`` changes no record; the
device in records, summaries and store keys. torch's CUDA functions are stubbed here: these
tests run on machines without a GPU (the GPU paths have not been run on one)."""

from __future__ import annotations

import json
import os
import re
import time

import pandas as pd
import pytest
import torch
import yaml

from simul import sweep
from simul.commands import cli, reproduce
from simul.decoding.session import Session
from simul.decoding.simulate import simulate
from simul.models import device as devices
from simul.models import loader
from simul.papers import notebook
from simul.policies import make
from simul.records import Record, read, write, write_simuleval_dir
from simul.sweep import executors, journal, store
from simul.sweep.calls import SharedCalls
from tests.test_mustc import PAIR, SPLIT, make_corpus
from tests.test_simulate import segment

NO_CUDA = "torch has no CUDA here (CPU build); install a CUDA build of torch"
POLICIES = [{"policy": "offline"},
            {"policy": "wait_k_frames", "settings": [{"k": 20, "s": 10, "n": 2}],
             "fixed": {"maxlenratio": 1.0}}]


def starts(text: str) -> str:
    """A pattern for pytest.raises: the message begins with ``text``."""
    return "^" + re.escape(text)


@pytest.fixture
def no_cuda(monkeypatch):
    """torch as a CPU build (whatever this machine has)."""
    monkeypatch.setattr(torch.version, "cuda", None)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)


@pytest.fixture
def fake_gpus(monkeypatch):
    """torch as a CUDA build that sees two GPUs; synchronize calls are recorded."""
    calls = []
    monkeypatch.setattr(torch.version, "cuda", "12.1")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: calls.append(device))
    monkeypatch.setattr(devices, "_gpu_name", lambda index: f"Fake GPU {index}")
    return calls


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    from tests.conftest import make_tiny_model

    return make_tiny_model(tmp_path_factory.mktemp("tiny_rnn"), "rnn")


@pytest.fixture(scope="module")
def model(model_dir):
    return loader.load(model_dir)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    make_corpus(root / PAIR)
    return root


@pytest.fixture
def executed(monkeypatch):
    """Notebooks that reproduce would run, with SIMUL_DEVICE as their kernel would see it."""
    import papermill

    calls = []
    monkeypatch.setattr(papermill, "execute_notebook", lambda src, out, parameters, **kw:
                        calls.append((out.name, os.environ.get("SIMUL_DEVICE"))))
    return calls


def spec(model_dir, corpus, output, **extra) -> dict:
    return {"models": [str(model_dir)], "pair": PAIR, "splits": [SPLIT], "corpus": str(corpus),
            "output": str(output), "policies": POLICIES, "max_utterances": 2, **extra}


def without_times(record: dict) -> dict:
    return {k: v for k, v in record.items() if k != "elapsed"}


def records_of(output, table) -> list[list[dict]]:
    return [[json.loads(x) for x in (output / p).read_text().splitlines()]
            for p in table.records]


# --------------------------------------------------------------------------- checking
def test_check_names_the_option_and_why(no_cuda, monkeypatch):
    assert devices.check(" CPU ") == "cpu" and devices.check(None) == "cpu"
    with pytest.raises(ValueError) as e:
        devices.check("cuda")
    assert str(e.value) == f"--device cuda: {NO_CUDA}"
    with pytest.raises(ValueError, match=starts(f"SIMUL_DEVICE=cuda:1: {NO_CUDA}")):
        devices.check("cuda:1", "SIMUL_DEVICE=cuda:1")
    with pytest.raises(ValueError, match="--device gpu: expected cpu, cuda or cuda:N"):
        devices.check("gpu")
    monkeypatch.setattr(torch.version, "cuda", "12.1")  # a CUDA build that sees no GPU
    with pytest.raises(ValueError, match="built for CUDA 12.1 but sees no GPU"):
        devices.check("cuda")


def test_check_knows_the_gpus(fake_gpus):
    assert devices.check("cuda") == "cuda" and devices.check("CUDA:1") == "cuda:1"
    with pytest.raises(ValueError, match="--device cuda:2: torch sees 2 GPU"):
        devices.check("cuda:2")
    assert [devices.kind(d) for d in ("cpu", "cuda", "cuda:1")] == ["cpu", "cuda", "cuda"]
    assert devices.label("cpu") == "cpu"
    assert devices.label("cuda") == "cuda:0 (Fake GPU 0)"
    assert devices.label(torch.device("cuda", 1)) == "cuda:1 (Fake GPU 1)"


def test_adapter_refuses_cuda_before_loading(no_cuda, model_dir):
    with pytest.raises(ValueError, match=starts(f"device cuda: {NO_CUDA}")):
        loader.load(model_dir, "cuda")


# --------------------------------------------------------------------------- entry points
def test_decode_cli_refuses_cuda_before_loading(no_cuda, monkeypatch, capsys, tmp_path):
    loaded = []
    monkeypatch.setattr(loader, "load", lambda name, device="cpu": loaded.append(device))
    out = tmp_path / "out.jsonl"
    argv = ["decode", "--model", str(tmp_path), "--pair", "en-es", "--out", str(out)]
    assert cli.main([*argv, "--device", "cuda"]) == 2
    assert f"simul: error: --device cuda: {NO_CUDA}" in capsys.readouterr().err
    assert loaded == [] and not out.exists()

    from simul.decoding import decode_split

    monkeypatch.setattr(decode_split, "records", lambda *a, **kw: [
        Record(index=0, prediction="a", delays=[1.0], elapsed=[1.0], prediction_length=1,
               reference="a", source_length=1.0, source=["x"])])
    assert cli.main(argv) == 0 and cli.main([*argv, "--device", "CPU", "--overwrite"]) == 0
    assert loaded == ["cpu", "cpu"]


def test_sweep_refuses_cuda_from_the_spec_or_the_option(no_cuda, model_dir, corpus, tmp_path,
                                                        capsys):
    out = tmp_path / "out"
    refused = starts(f"sweep spec field 'device': cuda: {NO_CUDA}")
    with pytest.raises(sweep.SweepError, match=refused):
        sweep.run(spec(model_dir, corpus, out, device="cuda"), workers=1, progress=False)
    with pytest.raises(sweep.SweepError, match=starts(f"--device cuda:0: {NO_CUDA}")):
        sweep.run(spec(model_dir, corpus, out), device="cuda:0", workers=1, progress=False)
    assert not out.exists()  # refused before any work
    with pytest.raises(sweep.SweepError, match="spec: field 'device': gpu: expected cpu"):
        sweep.Spec.load(spec(model_dir, corpus, out, device="gpu"))
    with pytest.raises(sweep.SweepError, match="field 'device': cpu, cuda or cuda:N"):
        sweep.Spec.load(spec(model_dir, corpus, out, device=0))
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec(model_dir, corpus, out)))
    assert cli.main(["sweep", str(path), "--quiet", "--device", "cuda"]) == 2
    assert f"simul: error: --device cuda: {NO_CUDA}" in capsys.readouterr().err
    assert not out.exists()


def test_reproduce_refuses_cuda_before_any_notebook(no_cuda, executed, tmp_path, monkeypatch,
                                                    capsys):
    kwargs = {"figures_dir": tmp_path / "f", "executed_dir": tmp_path / "e",
              "runs_dir": tmp_path / "r", "jobs": 1, "log": lambda *a: None}
    with pytest.raises(ValueError, match=starts(f"--device cuda: {NO_CUDA}")):
        reproduce.run(["tutorial"], device="cuda", **kwargs)
    monkeypatch.setenv("SIMUL_DEVICE", "cuda")
    with pytest.raises(ValueError, match=starts(f"SIMUL_DEVICE=cuda: {NO_CUDA}")):
        reproduce.run(["tutorial"], **kwargs)
    assert cli.main(["reproduce", "--only", "tutorial", "--device", "cuda:0",
                     "--runs", str(tmp_path / "r"), "--executed", str(tmp_path / "e"),
                     "--figures", str(tmp_path / "f")]) == 2
    assert f"simul: error: --device cuda:0: {NO_CUDA}" in capsys.readouterr().err
    assert executed == []
    # the option reaches every kernel as SIMUL_DEVICE, and the environment is restored
    reproduce.run(["tutorial", "ma2020"], device="cpu", **kwargs)
    assert executed == [("tutorial.ipynb", "cpu"), ("ma2020.ipynb", "cpu")]
    assert os.environ["SIMUL_DEVICE"] == "cuda"
    assert build_args(["reproduce", "--device", "cuda:1"]).device == "cuda:1"


def build_args(argv):
    return cli.build_parser().parse_args(argv)


def test_notebooks_read_simul_device(no_cuda, monkeypatch, tmp_path):
    monkeypatch.setenv("SIMUL_DEVICE", "cuda")
    with pytest.raises(ValueError, match=starts(f"SIMUL_DEVICE=cuda: {NO_CUDA}")):
        notebook.setup(tmp_path / "f", tmp_path / "r")
    monkeypatch.setenv("SIMUL_DEVICE", "cpu")
    nb = notebook.setup(tmp_path / "f", tmp_path / "r")
    assert nb.device == "cpu"
    asked = []
    monkeypatch.setattr(sweep, "run", lambda spec, **kw: asked.append(kw["device"]))
    nb.sweep({})
    monkeypatch.delenv("SIMUL_DEVICE")
    notebook.setup(tmp_path / "f", tmp_path / "r").sweep({})
    assert asked == ["cpu", None]  # unset: each spec's own device
    assert build_args(["sweep", "s.yaml", "--device", "cuda"]).device == "cuda"
    assert build_args(["sweep", "s.yaml"]).device is None
    assert build_args(["decode", "--model", "m", "--out", "o"]).device == "cpu"


# --------------------------------------------------------------------------- the clock
def test_clock_is_perf_counter_itself_on_cpu(model):
    assert devices.timing_clock("cpu") is time.perf_counter
    assert devices.timing_clock(None) is time.perf_counter
    assert devices.timing_clock(torch.device("cpu")) is time.perf_counter
    assert Session(model, make("offline")).clock is time.perf_counter
    assert SharedCalls(model)._clock is time.perf_counter


def test_clock_synchronizes_exactly_on_cuda(fake_gpus):
    clock = devices.timing_clock("cuda:1")
    assert clock is not time.perf_counter
    before = time.perf_counter()
    assert clock() >= before
    assert fake_gpus == [torch.device("cuda:1")]
    devices.timing_clock("cuda")()
    assert fake_gpus[1] == torch.device("cuda")  # the current GPU
    devices.timing_clock("cpu")()
    assert len(fake_gpus) == 2


class OnCuda:
    """The CPU model as if it were on a GPU: it says cuda, and computes on the CPU."""

    device = "cuda"

    def __init__(self, model):
        self.model = model

    def __getattr__(self, name):
        return getattr(self.model, name)


def test_session_on_cuda_synchronizes_around_every_decision(fake_gpus, model, speech):
    policy = {"k": 30, "s": 10, "n": 2}
    session = Session(OnCuda(model), make("wait_k_frames", policy))
    session.finish(speech)
    assert session.step > 3 and len(fake_gpus) == 2 * session.step  # start and end of each
    record = session.record()
    cpu = simulate(model, make("wait_k_frames", policy), segment(speech))
    assert record.units == cpu.units and record.delays == cpu.delays
    assert record.device == "cuda:0 (Fake GPU 0)" and cpu.device == "cpu"
    fake_gpus.clear()
    shared = SharedCalls(OnCuda(model))
    simulate(shared, make("wait_k_frames", policy), segment(speech))
    computed = sum(shared.misses.values())
    assert computed and len(fake_gpus) == 2 * (session.step + computed)


# --------------------------------------------------------------------------- sweeps
def test_device_cpu_gives_the_default_records_and_store_keys(model_dir, corpus, tmp_path,
                                                              monkeypatch):
    monkeypatch.setenv("SIMUL_STORE", str(tmp_path / "store"))  # this test's own
    default = sweep.run(spec(model_dir, corpus, tmp_path / "default"), workers=1,
                        progress=False, store=False)
    explicit = sweep.run(spec(model_dir, corpus, tmp_path / "cpu", device="cpu"), workers=1,
                         progress=False, store=False)
    a, b = records_of(tmp_path / "default", default), records_of(tmp_path / "cpu", explicit)
    assert [[without_times(r) for r in rs] for rs in a] == [
        [without_times(r) for r in rs] for rs in b]
    assert all(r["device"] == "cpu" for rs in a for r in rs)
    # the summary says where: next to the machine
    for table, out in ((default, tmp_path / "default"), (explicit, tmp_path / "cpu")):
        assert table.device.tolist() == ["cpu", "cpu"]
        columns = list(pd.read_csv(out / "summary.csv").columns)
        assert columns[columns.index("machine") + 1] == "device"
    # --device cpu overrides the spec's cuda (never checked), and stores under "cpu" ...
    first = sweep.run(spec(model_dir, corpus, tmp_path / "stored", device="cuda"),
                      device="cpu", workers=1, progress=False)
    assert first.decoded.tolist() == [2, 2]
    # ... which the default sweep finds: the explicit cpu and the default are one key
    again = sweep.run(spec(model_dir, corpus, tmp_path / "again"), workers=1, progress=False)
    assert again.from_store.tolist() == [2, 2]
    kinds = {json.loads(p.read_text())["key"]["device"]
             for p in store.Store(tmp_path / "store").files()}
    assert kinds == {"cpu"}


def test_store_keys_differ_by_device_kind(tmp_path):
    def fields(**change):
        return store.key_fields(model="m" * 64, corpus="c" * 64, pair="en-de", split="dev",
                                segment="seg_1", policy="offline", settings={"beam": 1},
                                code="v1", **change)

    assert fields() == fields(device="cpu") and fields()["device"] == "cpu"
    assert store.key(fields(device="cuda")) != store.key(fields())
    assert store.key(fields(device="cuda:1")) == store.key(fields(device="cuda"))
    s = store.Store(tmp_path)
    record = {"index": 0, "prediction": "a", "delays": [1.0], "elapsed": [2.0],
              "prediction_length": 1, "reference": "a", "source_length": 10.0,
              "source": ["x"], "policy": "offline", "settings": {"beam": 1},
              "segment_id": "seg_1", "device": "cpu"}
    s.put(fields(), record)
    assert s.get(fields()) == record and s.get(fields(device="cuda")) is None


def test_a_cpu_sweep_keeps_its_fingerprint_and_a_gpu_one_is_apart(model_dir, corpus,
                                                                   tmp_path):
    spec_ = sweep.Spec.load(spec(model_dir, corpus, tmp_path / "out"))
    refs = [sweep.resolve_model(str(model_dir))]
    cpu = journal._fingerprint(spec_, refs, {SPLIT: "c"})
    assert "device" not in cpu and cpu == journal._fingerprint(spec_, refs, {SPLIT: "c"}, "cpu")
    cuda = journal._fingerprint(spec_, refs, {SPLIT: "c"}, "cuda:1")
    assert cuda == {**cpu, "device": "cuda"}
    journal._claim(spec_.output, cpu, force=False)
    # once something is decoded, another device is another sweep
    (spec_.output / "journal").mkdir()
    (spec_.output / "journal" / f"{SPLIT}.jsonl").write_text('{"pos": 0}\n')
    with pytest.raises(sweep.SweepError, match="changed: device"):
        journal._claim(spec_.output, cuda, force=False)


def test_pool_workers_on_gpus(fake_gpus, monkeypatch):
    assert sweep.default_workers("cuda") == 2 and sweep.default_workers("cuda:1") == 1
    assert sweep.worker_devices("cuda", 3) == ["cuda:0", "cuda:1", "cuda:0"]
    assert sweep.worker_devices("cuda:1", 3) is None
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert sweep.worker_devices("cuda", 2) is None and sweep.default_workers("cuda") == 1


def test_pool_workers_take_their_device_from_the_queue(model_dir, corpus, tmp_path,
                                                       monkeypatch):
    assert sweep.default_workers("cpu") == (os.cpu_count() or 1)
    assert sweep.worker_devices("cpu", 4) is None
    local = sweep.run(spec(model_dir, corpus, tmp_path / "local"), workers=1, progress=False,
                      store=False)
    # as a cuda sweep over two GPUs would hand them out, with the CPU standing in for them
    monkeypatch.setattr(executors, "worker_devices", lambda device, workers: ["cpu"] * workers)
    pool = sweep.run(spec(model_dir, corpus, tmp_path / "pool"), workers=2, progress=False,
                     store=False)
    a, b = records_of(tmp_path / "local", local), records_of(tmp_path / "pool", pool)
    assert [[without_times(r) for r in rs] for rs in a] == [
        [without_times(r) for r in rs] for rs in b]


# --------------------------------------------------------------------------- records
def test_records_without_a_device_still_read_and_simuleval_never_sees_it(tmp_path):
    old = {"index": 0, "prediction": "a", "delays": [1.0], "elapsed": [2.0],
           "prediction_length": 1, "reference": "a", "source_length": 10.0, "source": ["x"]}
    (tmp_path / "old.jsonl").write_text(json.dumps(old) + "\n")
    assert read(tmp_path / "old.jsonl")[0].device == ""
    record = Record(**old, device="cuda:0 (Fake GPU 0)")
    assert read(write([record], tmp_path / "new.jsonl"))[0].device == "cuda:0 (Fake GPU 0)"
    log = write_simuleval_dir([record], tmp_path / "se") / "instances.log"
    assert "device" not in json.loads(log.read_text())
