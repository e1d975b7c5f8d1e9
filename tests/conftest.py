"""Shared fixtures: tiny randomly initialised ESPnet2 ST models, and a tiny ASR + MT cascade
(no training needed); the order the tests run in."""

import json
import os
from pathlib import Path

# One OpenMP thread in every process the tests start (CLIs, sweep pools, simuleval, notebook
# kernels), set before torch is imported: the suite's workers share the cores, and threads
# beyond the free cores slow decoding down many times over (a benchmark subprocess on two
# threads beside the other worker: minutes instead of seconds).
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
import yaml  # noqa: E402

# Tiny models gain nothing from threads, and oversubscribed OpenMP threads make small LSTM
# steps crawl when another process (a training run) holds the cores.
torch.set_num_threads(1)

CHARS = list("abcdefghijklmnopqrstuvwxyz") + ["<space>", ".", "?"]


def _conf(decoder: str) -> dict:
    conf = {
        "token_type": "char",
        "token_list": ["<blank>", "<unk>", *CHARS, "<sos/eos>"],
        "src_token_type": "char",
        "src_token_list": ["<blank>", "<unk>", *CHARS, "<sos/eos>"],
        "frontend": "default",
        "frontend_conf": {"n_fft": 512, "win_length": 400, "hop_length": 160, "n_mels": 40},
        "normalize": "utterance_mvn",
        "model_conf": {"asr_weight": 0.3, "mtlalpha": 1.0, "mt_weight": 0.0},
        "init": None,
    }
    if decoder == "transformer":
        conf.update(
            encoder="conformer",
            encoder_conf={"output_size": 32, "attention_heads": 2, "linear_units": 64,
                          "num_blocks": 2, "input_layer": "conv2d", "macaron_style": True,
                          "rel_pos_type": "latest", "pos_enc_layer_type": "rel_pos",
                          "selfattention_layer_type": "rel_selfattn", "use_cnn_module": True,
                          "cnn_module_kernel": 7},
            decoder="transformer",
            decoder_conf={"attention_heads": 2, "linear_units": 64, "num_blocks": 2},
        )
    else:
        conf.update(
            encoder="rnn",
            encoder_conf={"rnn_type": "lstm", "bidirectional": True, "num_layers": 2,
                          "hidden_size": 32, "output_size": 32, "subsample": [2, 2, 1]},
            decoder="rnn",
            decoder_conf={"rnn_type": "lstm", "num_layers": 1, "hidden_size": 32,
                          "att_conf": {"atype": "add", "adim": 32}},
        )
    return conf


def make_tiny_model(directory: Path, decoder: str, seed: int = 0) -> Path:
    """Write config.yaml + model.pth of a random tiny ST model; return the directory."""
    from simul.models.espnet_env import import_espnet

    st = import_espnet("espnet2.tasks.st").STTask
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.yaml").write_text(yaml.safe_dump(_conf(decoder)))
    args = st.get_parser().parse_args(["--config", str(directory / "config.yaml")])
    torch.manual_seed(seed)
    model = st.build_model(args)
    for p in model.parameters():  # spread the logits so greedy paths are not all ties
        torch.nn.init.normal_(p, std=0.3)
    out = getattr(model.decoder, "output_layer", None) or model.decoder.output
    with torch.no_grad():  # make <sos/eos> rarer: hypotheses of several units
        out.bias[model.eos] -= 4.0
    (directory / "config.yaml").write_text(yaml.safe_dump(vars(args), allow_unicode=True))
    torch.save(model.state_dict(), directory / "model.pth")
    return directory


@pytest.fixture(scope="session", autouse=True)
def record_store(tmp_path_factory):
    """The tests' own record store (simul.sweep.store), shared by the session: sweeps, their
    subprocesses and notebook kernels never read or fill the user's ~/.cache. Each
    pytest-xdist worker is a session with a base temporary directory of its own, so each has
    its own store: what one worker's tests find stored never depends on the other's timing.
    The other caches under ~/.cache/simul (assembled child models, word alignments, rooms)
    stay shared: each file is keyed by what it is made from and written to a temporary file
    of its own, then renamed into place, so two workers at once cost at most the work twice."""
    with pytest.MonkeyPatch.context() as mp:
        root = tmp_path_factory.mktemp("record_store")
        mp.setenv("SIMUL_STORE", str(root))
        yield root


@pytest.fixture(autouse=True)
def claims_configuration(monkeypatch):
    """``notebook.setup`` configures the claims module for its process (a quick run
    measures a finding that needs the full run by its effect alone, on fewer resamples):
    each test starts from the configuration the session started with, and leaves it."""
    from simul.analysis.claims import resampling

    for name in ("QUICK", "RESAMPLES", "WORKERS"):
        monkeypatch.setattr(resampling, name, getattr(resampling, name))


@pytest.fixture(scope="session", params=["transformer", "rnn"])
def tiny_model_dir(request, tmp_path_factory):
    return make_tiny_model(tmp_path_factory.mktemp(f"tiny_{request.param}"), request.param)


@pytest.fixture(scope="session")
def speech():
    """1.2 s of a deterministic chirp + noise at 16 kHz."""
    rng = np.random.default_rng(0)
    t = np.arange(19200) / 16000
    return (0.3 * np.sin(2 * np.pi * (200 + 300 * t) * t)
            + 0.05 * rng.standard_normal(t.size)).astype(np.float32)


CASCADE_CHARS = ["<blank>", "<unk>", *"abcdefgh", "<space>", "<sos/eos>"]
"""The units of the tiny cascade's ASR and MT models (both sides of the MT)."""


def make_tiny_task_model(directory: Path, task: str, conf: dict, seed: int) -> Path:
    """Write config.yaml + model.pth of a random tiny ESPnet2 ``asr`` or ``mt`` model."""
    from simul.models.espnet_env import import_espnet

    module, cls = {"asr": ("espnet2.tasks.asr", "ASRTask"),
                   "mt": ("espnet2.tasks.mt", "MTTask")}[task]
    espnet_task = getattr(import_espnet(module), cls)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.yaml").write_text(yaml.safe_dump(conf))
    args = espnet_task.get_parser().parse_args(["--config", str(directory / "config.yaml")])
    torch.manual_seed(seed)
    model = espnet_task.build_model(args)
    for p in model.parameters():
        torch.nn.init.normal_(p, std=0.3)
    with torch.no_grad():
        model.decoder.output_layer.bias[model.eos] -= 4.0  # hypotheses of several units
        if task == "asr":  # a transcript of several words
            model.ctc.ctc_lo.bias[0] -= 3.0
            model.ctc.ctc_lo.bias[CASCADE_CHARS.index("<space>")] += 0.3
    (directory / "config.yaml").write_text(yaml.safe_dump(vars(args), allow_unicode=True))
    torch.save(model.state_dict(), directory / "model.pth")
    return directory


_DEC = {"attention_heads": 2, "linear_units": 32, "num_blocks": 1}


def tiny_mt_config(target_units: list[str]) -> dict:
    """A tiny character MT's config: CASCADE_CHARS in, ``target_units`` out."""
    return {
        "token_type": "char", "token_list": target_units, "src_token_type": "char",
        "src_token_list": CASCADE_CHARS, "frontend": "embed",
        "frontend_conf": {"embed_dim": 16, "positional_dropout_rate": 0.0},
        "encoder": "transformer",
        "encoder_conf": {"output_size": 16, "attention_heads": 2, "linear_units": 32,
                         "num_blocks": 1, "input_layer": "linear"},
        "decoder": "transformer", "decoder_conf": _DEC, "init": None}


@pytest.fixture(scope="module")
def cascade_dir(tmp_path_factory) -> Path:
    """``tiny_cascade/`` (its cascade.json) beside the model directories ``asr/``, ``mt/``."""
    root = tmp_path_factory.mktemp("cascade")
    make_tiny_task_model(root / "asr", "asr", {
        "token_type": "char", "token_list": CASCADE_CHARS, "frontend": "default",
        "frontend_conf": {"n_fft": 512, "win_length": 400, "hop_length": 160, "n_mels": 20},
        "normalize": "utterance_mvn", "encoder": "transformer",
        "encoder_conf": {"output_size": 16, "attention_heads": 2, "linear_units": 32,
                         "num_blocks": 1, "input_layer": "conv2d"},
        "decoder": "transformer", "decoder_conf": _DEC, "model_conf": {"ctc_weight": 0.5},
        "init": None}, seed=1)
    make_tiny_task_model(root / "mt", "mt", tiny_mt_config(CASCADE_CHARS), seed=2)
    (root / "tiny_cascade").mkdir()
    (root / "tiny_cascade" / "cascade.json").write_text(json.dumps({"asr": "../asr",
                                                                    "mt": "../mt"}))
    return root / "tiny_cascade"


# ------------------------------------------------------------------------ the order of the tests
# `make test` runs the suite on every core with pytest-xdist (`-n N --dist loadfile
# --no-loadscope-reorder`): a free worker takes the next whole module, so a module's shared
# fixtures (the notebooks' quick run, a shipped model's offline decodes) are made once, by one
# worker; modules go out in the order below. Without -n the order holds too.


@pytest.hookimpl(trylast=True)  # after pytest's own order (a parametrized fixture's runs)
def pytest_collection_modifyitems(config, items):
    """The modules marked ``longest`` first: each takes a worker for most of the suite, so it
    starts at once beside the others. Then quick checks, so that a failure shows within
    minutes: the modules without a test marked ``slow`` or ``long``. Then the modules marked
    ``long`` (a minute or more each), before the other slow ones: the suite ends on short
    modules, not on one worker running a long one while the other waits. Each tier in
    pytest's order."""
    def marked(name: str) -> set:
        return {item.path for item in items if item.get_closest_marker(name)}

    longest, long, slow = marked("longest"), marked("long"), marked("slow")

    def tier(item) -> int:
        if item.path in longest:
            return 0
        if item.path in long:
            return 2
        return 3 if item.path in slow else 1

    items[:] = sorted(items, key=tier)
