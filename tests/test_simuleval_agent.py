"""simul's SimulEval agent (simul.decoding.simuleval_agent), run by SimulEval 1.1.4 itself.

On tst-COMMON segments of the mini corpus, SimulEval's instances.log has simul's
predictions (those of simulate(), word for word) and simul's delays rounded up to the audio
SimulEval had sent (a multiple of the source segment, capped at the source length); its
BLEU and latency scores are simul's scores of those records. Small fake policies check the
agent's protocol (a translation that ends before its source, the sample rate) in seconds.
"""

from __future__ import annotations

import ast
import csv
import dataclasses
import json
import logging
import math
import os
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

pytest.importorskip("simuleval", reason="simuleval 1.1.4 (pip install --no-deps "
                                        "simuleval==1.1.4 textgrid tornado) is not installed")

from simuleval.data.segments import SpeechSegment  # noqa: E402
from simuleval.utils.agent import EVALUATION_SYSTEM_LIST  # noqa: E402

from simul.corpus import DEFAULT_ROOT, export_simuleval, load_list  # noqa: E402
from simul.decoding.session import StreamError  # noqa: E402
from simul.decoding.simulate import simulate  # noqa: E402
from simul.decoding.simuleval_agent import SimulAgent  # noqa: E402
from simul.metrics.score import score_records  # noqa: E402
from simul.models import loader, registry
from simul.policies import make  # noqa: E402
from simul.policies.base import Policy, Read, Write  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SR = 16_000
MODEL = "conformer_bpe_en-es"
N_SEGMENTS = 5  # the shortest of tst-COMMON: the whole file runs in about a minute
AGENT = "simul.decoding.simuleval_agent.SimulAgent"
POLICIES = {  # (name, --set settings); both read in fixed steps of 360 and 250 ms
    "wait_k_words": {"k": "3"},
    "onlinization": {"chunk_ms": "250", "rule": "la", "n": "2"},
}
# (policy, segment ms, whether every read step is a multiple of the segment)
RUNS = [("wait_k_words", 10, True), ("wait_k_words", 250, False),
        ("onlinization", 250, True), ("onlinization", 40, False)]
SUBPROCESS_RUN = ("wait_k_words", 250)  # this one through the `simuleval` command itself


def simuleval_delay(delay_ms: float, segment_ms: int, n_samples: int) -> float:
    """The delay SimulEval charges a word that simul charges ``delay_ms``: the audio it had
    sent (ms) at the first call whose audio reaches ``delay_ms`` (SimulEval sends
    ``ceil(segment_ms / 1000 * rate)`` samples a call, the last call the rest)."""
    step = math.ceil(segment_ms / 1000 * SR)
    sent = min(step, n_samples)
    while sent < n_samples and sent * 1000 / SR < delay_ms:
        sent = min(sent + step, n_samples)
    return sent * 1000 / SR


@pytest.fixture(autouse=True)
def _keep_simuleval_system_list():
    """In-process runs add agent classes to SimulEval's global list: leave it as found."""
    saved = list(EVALUATION_SYSTEM_LIST)
    yield
    EVALUATION_SYSTEM_LIST[:] = saved


def _run_simuleval(args: list[str], out: Path, *, in_process: bool, monkeypatch,
                   capsys) -> tuple[list[dict], dict[str, float], str]:
    """SimulEval's command line, in this process (its entry point, cli.main) or as the
    `simuleval` command; returns instances.log, scores.tsv and what it printed."""
    argv = [*args, "--output", str(out), "--no-progress-bar"]
    if in_process:
        # importing simuleval.cli may configure the root logger (INFO, to stderr): undo it
        root = logging.getLogger()
        handlers, level = list(root.handlers), root.level
        try:
            from simuleval import cli

            monkeypatch.setattr(sys, "argv", ["simuleval", *argv])
            cli.main()
        finally:
            root.handlers[:] = handlers
            root.setLevel(level)
        printed = capsys.readouterr().out
    else:
        command = Path(sys.executable).with_name("simuleval")
        command = [str(command)] if command.is_file() else [sys.executable, "-m",
                                                             "simuleval.cli"]
        run = subprocess.run([*command, *argv], cwd=ROOT, capture_output=True, text=True,
                             env={**os.environ, "OMP_NUM_THREADS": "1"}, timeout=300)
        assert run.returncode == 0, run.stderr[-4000:]
        printed = run.stdout
    instances = [json.loads(line) for line in (out / "instances.log").read_text().splitlines()]
    with open(out / "scores.tsv") as f:
        (row,) = csv.DictReader(f, delimiter="\t")
    return instances, {k: float(v) for k, v in row.items()}, printed


# ------------------------------------------------------------------ a shipped model, SimulEval


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The shortest tst-COMMON segments (in corpus order), one float wav each, and
    SimulEval's source and target lists."""
    if not (DEFAULT_ROOT / "manifest.json").is_file():
        pytest.skip(f"no mini corpus at {DEFAULT_ROOT} (`make corpus` builds it)")
    if MODEL not in registry.shipped():
        pytest.skip(f"{MODEL} is not shipped (data/models/)")
    segments = load_list(DEFAULT_ROOT, "en-es", "tst-COMMON")
    segments = sorted(sorted(segments, key=lambda s: (s.duration_ms, s.index))[:N_SEGMENTS],
                      key=lambda s: s.index)
    directory = tmp_path_factory.mktemp("simuleval") / "data"
    # float samples: SimulEval reads exactly the segment's audio (`simul corpus simuleval`)
    export_simuleval(DEFAULT_ROOT, "en-es", "tst-COMMON", directory,
                     ids=[seg.id for seg in segments])
    return segments, directory


@pytest.fixture(scope="module")
def simul_records(corpus):
    """simulate()'s records of every policy (what `simul decode` writes), computed once."""
    segments, _ = corpus
    model = loader.load(MODEL)
    return {name: [simulate(model, make(name, settings), seg, model_name=MODEL)
                   for seg in segments] for name, settings in POLICIES.items()}


@pytest.mark.corpus
@pytest.mark.slow
@pytest.mark.parametrize(("policy", "segment_ms", "aligned"), RUNS,
                         ids=[f"{p}-{ms}ms" for p, ms, _ in RUNS])
def test_simuleval_gives_simul_predictions_and_rounded_delays(
        corpus, simul_records, tmp_path, monkeypatch, capsys, policy, segment_ms, aligned):
    segments, data = corpus
    settings = [a for k, v in POLICIES[policy].items() for a in ("--set", f"{k}={v}")]
    args = ["--agent-class", AGENT, "--model", MODEL, "--policy", policy, *settings,
            "--source", str(data / "source.txt"), "--target", str(data / "target.txt"),
            "--source-segment-size", str(segment_ms)]
    instances, scores, printed = _run_simuleval(
        args, tmp_path / "out", in_process=(policy, segment_ms) != SUBPROCESS_RUN,
        monkeypatch=monkeypatch, capsys=capsys)

    records = simul_records[policy]
    assert len(instances) == len(records) == N_SEGMENTS
    expected_records = []
    rounded_any = False
    for k, (inst, rec, seg) in enumerate(zip(instances, records, segments, strict=True)):
        assert inst["index"] == k
        assert inst["reference"] == seg.target == rec.reference
        assert inst["source_length"] == rec.source_length == len(seg.audio) * 1000 / SR
        assert inst["prediction"] == rec.prediction  # the same decisions, word for word
        assert inst["prediction_length"] == rec.prediction_length > 0
        expected = [simuleval_delay(d, segment_ms, len(seg.audio)) for d in rec.delays]
        assert inst["delays"] == expected, k
        if aligned:  # reads at multiples of the segment: SimulEval's delays are simul's
            assert inst["delays"] == rec.delays, k
        rounded_any |= inst["delays"] != rec.delays
        assert all(e >= d for e, d in zip(inst["elapsed"], inst["delays"], strict=True))
        expected_records.append(dataclasses.replace(rec, delays=expected, elapsed=[]))
    assert rounded_any != aligned  # the unaligned runs do round some delays up

    # SimulEval's scores (rounded to 3 decimals) are simul's of those records
    ours = score_records(expected_records)
    assert set(scores) == {"BLEU", "LAAL", "AL", "AP", "DAL", "ATD"}
    for name, value in scores.items():
        assert round(ours[name], 3) == value, name
    assert scores["BLEU"] == round(score_records(records)["BLEU"], 3)
    if aligned:
        assert round(score_records(records)["AL"], 3) == scores["AL"]
    assert "BLEU" in printed and "AL" in printed


MMA_MODEL = "conformer_bpe_en-de_mma_l0.32"  # writes before the end of its source


@pytest.mark.corpus
@pytest.mark.slow
def test_simuleval_runs_the_mma_policy(tmp_path, monkeypatch, capsys):
    # the mma policy reads on its model's 280 ms blocks: in 40 ms segments SimulEval's
    # delays are simul's own, and its predictions those of simulate()
    if not (DEFAULT_ROOT / "manifest.json").is_file():
        pytest.skip(f"no mini corpus at {DEFAULT_ROOT} (`make corpus` builds it)")
    if MMA_MODEL not in registry.shipped():
        pytest.skip(f"{MMA_MODEL} is not shipped (data/models/)")
    segments = sorted(load_list(DEFAULT_ROOT, "en-de", "tst-COMMON"),
                      key=lambda s: (s.duration_ms, s.index))[:3]
    segments.sort(key=lambda s: s.index)
    export_simuleval(DEFAULT_ROOT, "en-de", "tst-COMMON", tmp_path / "data",
                     ids=[seg.id for seg in segments])
    instances, scores, _ = _run_simuleval(
        ["--agent-class", AGENT, "--model", MMA_MODEL, "--policy", "mma",
         "--source", str(tmp_path / "data" / "source.txt"),
         "--target", str(tmp_path / "data" / "target.txt"), "--source-segment-size", "40"],
        tmp_path / "out", in_process=True, monkeypatch=monkeypatch, capsys=capsys)
    model = loader.load(MMA_MODEL)
    records = [simulate(model, make("mma", {}), seg, model_name=MMA_MODEL) for seg in segments]
    assert len(instances) == len(records)
    for inst, rec in zip(instances, records, strict=True):
        assert inst["prediction"] == rec.prediction
        assert inst["delays"] == rec.delays
    assert any(d < rec.source_length for rec in records for d in rec.delays)  # simultaneous
    assert scores["AL"] == round(score_records(records)["AL"], 3)


TEXT_MODEL = "mt_transformer_bpe_en-de"


@pytest.mark.corpus
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("k", [1, 3])
def test_simuleval_text_to_text_gives_simul_records(tmp_path, monkeypatch, capsys, k):
    # SimulEval sends a source word per call and charges a word the words it has sent:
    # simul's own delays (simul.decoding.text), predictions and scores
    from simul.decoding.text import simulate_text

    if not (DEFAULT_ROOT / "manifest.json").is_file():
        pytest.skip(f"no mini corpus at {DEFAULT_ROOT} (`make corpus` builds it)")
    if TEXT_MODEL not in registry.shipped():
        pytest.skip(f"{TEXT_MODEL} is not shipped (data/models/)")
    segments = load_list(DEFAULT_ROOT, "en-de", "tst-COMMON", with_audio=False)[:6]
    export_simuleval(DEFAULT_ROOT, "en-de", "tst-COMMON", tmp_path / "data",
                     ids=[seg.id for seg in segments], text=True)
    instances, scores, _ = _run_simuleval(
        ["--agent-class", "simul.decoding.simuleval_agent.SimulTextAgent", "--model", TEXT_MODEL,
         "--policy", "wait_k_text", "--set", f"k={k}",
         "--source", str(tmp_path / "data" / "source.txt"),
         "--target", str(tmp_path / "data" / "target.txt")],
        tmp_path / "out", in_process=True, monkeypatch=monkeypatch, capsys=capsys)
    model = loader.load(TEXT_MODEL)
    records = [simulate_text(model, make("wait_k_text", {"k": str(k)}), seg)
               for seg in segments]
    assert len(instances) == len(records)
    for inst, rec, seg in zip(instances, records, segments, strict=True):
        assert inst["source_length"] == rec.source_length == len(seg.source.split())
        assert inst["prediction"] == rec.prediction
        assert inst["delays"] == rec.delays
    assert any(d < rec.source_length for rec in records for d in rec.delays)  # simultaneous
    ours = score_records(records)
    for name in ("BLEU", "AL", "LAAL", "AP", "DAL"):
        assert scores[name] == round(ours[name], 3), name
    # ATD: with --output, SimulEval 1.1.4 scores the instances it read back from its log
    # (LogInstance), which its ATD scorer takes for speech (300 ms source tokens): what it
    # prints is the speech ATD of the word counts. Its text-to-text ATD (the scorer on
    # TextToTextInstance, as without --output) is simul's.
    as_speech = score_records([dataclasses.replace(r, source_type="speech") for r in records])
    assert scores["ATD"] == round(as_speech["ATD"], 3)
    from simuleval.evaluator.instance import TextToTextInstance
    from simuleval.evaluator.scorers.latency_scorer import ATDScorer

    text_instances = {}
    for i, inst in enumerate(instances):
        ins = TextToTextInstance(i, None, None)
        ins.latency_unit, ins.source = "word", inst["source"].split()
        ins.reference, ins.prediction_list = inst["reference"], inst["prediction"].split()
        ins.delays, ins.elapsed = inst["delays"], inst["elapsed"]
        text_instances[i] = ins
    assert ours["ATD"] == pytest.approx(ATDScorer()(text_instances), abs=1e-12)


# ------------------------------------------------------------------ the protocol, fake policies


@dataclasses.dataclass
class _FakeModel:
    """What a session asks of a model when the policy asks nothing (characters a–e)."""

    token_list: tuple = ("<blank>", "<unk>", "a", "b", "c", "d", "e", "<space>", "<sos/eos>")
    unit_type: str = "char"

    def encode(self, audio):
        return None


class _EarlyStop(Policy):
    """Writes "a b" at 200 ms and "c d" at 350 ms, and finishes there, whatever comes
    after (characters a–e)."""

    def first_read_ms(self) -> float:
        return 100.0

    def decide(self, model, view):
        a, b, c, d, space = 2, 3, 4, 5, 7
        if view.read_ms < 200.0:
            return Read(200.0)
        if not view.units:
            return Write((a, space, b, space))
        if view.read_ms < 350.0:
            return Read(350.0)
        return Write((c, space, d), finished=True)


class _EarlyAgent(SimulAgent):
    """SimulAgent with _EarlyStop on _FakeModel (no --model)."""

    def __init__(self, args=None):
        super().__init__(Namespace(policy="offline", set=[], device="cpu"),
                         model=_FakeModel())

    @staticmethod
    def add_args(parser):
        pass

    def new_policy(self):
        return _EarlyStop()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_a_translation_that_ends_before_its_source(tmp_path, monkeypatch, capsys):
    # two 1 s sentences in 100 ms segments: the output of each ends at 350 ms (SimulEval
    # charges 400 ms); the rest of its source is taken without decoding, and the second
    # sentence starts afresh. Without that, SimulEval's reset of the agent at the end of
    # the output would start a session on the rest of sentence 1, and SimulEval would log
    # the words that session writes after "c d".
    for name in ("one", "two"):
        sf.write(tmp_path / f"{name}.wav", np.zeros(SR, np.float32), SR, subtype="FLOAT")
    (tmp_path / "source.txt").write_text(f"{tmp_path}/one.wav\n{tmp_path}/two.wav\n")
    (tmp_path / "target.txt").write_text("a b c d\na b c\n")
    instances, scores, _ = _run_simuleval(
        ["--agent-class", f"{__name__}._EarlyAgent", "--source", str(tmp_path / "source.txt"),
         "--target", str(tmp_path / "target.txt"), "--source-segment-size", "100"],
        tmp_path / "out", in_process=True, monkeypatch=monkeypatch, capsys=capsys)
    for inst in instances:
        assert inst["prediction"] == "a b c d"
        assert inst["delays"] == [200.0, 200.0, 400.0, 400.0]
    assert scores["BLEU"] > 0


def test_refuses_other_sample_rates():
    agent = _EarlyAgent()
    with pytest.raises(StreamError, match="8000 Hz"):
        agent.pushpop(SpeechSegment(content=[0.0] * 800, sample_rate=8000, finished=False))


def test_bad_settings_are_refused_before_any_audio():
    with pytest.raises(ValueError, match="KEY=VALUE"):
        SimulAgent(Namespace(policy="wait_k_words", set=["k"]), model=_FakeModel())
    with pytest.raises(ValueError, match="no setting 'kk'"):
        SimulAgent(Namespace(policy="wait_k_words", set=["kk=3"]), model=_FakeModel())


def _imported(path: Path) -> set[str]:
    """Modules (and ``module.name``) that the Python file at ``path`` imports."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return names


def test_simul_does_not_import_simuleval():
    # simuleval is a test-only dependency: only simul/decoding/simuleval_agent.py imports it, and no
    # module of simul imports that one (nor imports it lazily: no import anywhere)
    for path in (ROOT / "simul").rglob("*.py"):
        if path.name != "simuleval_agent.py":
            names = _imported(path)
            assert not {n for n in names if n.split(".")[0] == "simuleval"}, path
            assert "simul.decoding.simuleval_agent" not in names, path
    code = ("import simul, simul.commands.cli, sys; "
            "assert not [m for m in sys.modules if m.startswith('simuleval')]")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
