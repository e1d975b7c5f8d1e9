"""`simul score` on SimulEval's own text-to-text log: SimulEval 1.1.4 runs a tiny wait-2
agent, and simul reads its ``instances.log`` (delays in source words, ``elapsed`` zeros) as
text records: SimulEval's printed BLEU and latencies, in source words, and no
computation-aware metric."""

from __future__ import annotations

import csv
import json
import logging
import shutil
import sys

import pytest

pytest.importorskip("simuleval", reason="simuleval 1.1.4 is not installed")

from simuleval.agents import TextToTextAgent  # noqa: E402
from simuleval.agents.actions import ReadAction, WriteAction  # noqa: E402
from simuleval.utils.agent import EVALUATION_SYSTEM_LIST  # noqa: E402

from simul import records
from simul.commands import cli  # noqa: E402
from simul.metrics.score import score_records  # noqa: E402

SOURCES = ["one two three four", "five six", "seven eight nine ten eleven"]
REFERENCES = ["ONE TWO FOUR THREE", "FIVE SIX SIX", "SEVEN EIGHT NINE TEN ELEVEN TWELVE"]


class WaitTwoCopy(TextToTextAgent):
    """Wait-2 on text: writes the i-th source word, upper-cased, once the (i + 2)-th has come
    (or the source has ended); SimulEval charges it the source words it has sent."""

    def policy(self):
        written = len(self.states.target)
        if written < len(self.states.source) and (
                len(self.states.source) - written >= 2 or self.states.source_finished):
            done = self.states.source_finished and written + 1 == len(self.states.source)
            return WriteAction(self.states.source[written].upper(), finished=done)
        return ReadAction()


@pytest.fixture(scope="module")
def simuleval_run(tmp_path_factory):
    """SimulEval's output folder of WaitTwoCopy (instances.log, config.yaml, scores.tsv)."""
    from simuleval import cli as simuleval_cli

    tmp = tmp_path_factory.mktemp("sev_text")
    (tmp / "source.txt").write_text("\n".join(SOURCES) + "\n")
    (tmp / "target.txt").write_text("\n".join(REFERENCES) + "\n")
    out = tmp / "out"
    argv = ["simuleval", "--agent-class", f"{__name__}.WaitTwoCopy",
            "--source", str(tmp / "source.txt"), "--target", str(tmp / "target.txt"),
            "--output", str(out), "--no-progress-bar"]
    root = logging.getLogger()
    handlers, level, systems, saved_argv = list(root.handlers), root.level, \
        list(EVALUATION_SYSTEM_LIST), sys.argv
    try:
        sys.argv = argv
        simuleval_cli.main()
    finally:
        sys.argv = saved_argv
        root.handlers[:] = handlers
        root.setLevel(level)
        EVALUATION_SYSTEM_LIST[:] = systems
    return out


def _simuleval_scores(out) -> dict[str, float]:
    with open(out / "scores.tsv") as f:
        (row,) = csv.DictReader(f, delimiter="\t")
    return {k: float(v) for k, v in row.items()}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_simuleval_text_log_is_what_simul_expects(simuleval_run):
    # what the log holds (SimulEval's TextInputInstance): delays in source words, elapsed 0
    lines = [json.loads(x) for x in (simuleval_run / "instances.log").read_text().splitlines()]
    assert lines[0]["delays"] == [2, 3, 4, 4] and lines[0]["elapsed"] == [0, 0, 0, 0]
    assert lines[0]["source_length"] == 4 and lines[0]["source"] == SOURCES[0]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_score_reads_simulevals_text_log(simuleval_run, tmp_path, capsys):
    recs = records.read(simuleval_run)
    assert [r.source_type for r in recs] == ["text"] * 3
    assert all(r.elapsed == [] for r in recs)
    ours = score_records(recs)
    assert not any(k.endswith("_CA") for k in ours)
    theirs = _simuleval_scores(simuleval_run)
    for name in ("BLEU", "AL", "LAAL", "AP", "DAL"):
        assert theirs[name] == round(ours[name], 3), name
    # AL of sentence 0 by hand: γ = 4/4, lags 2 − 0, 3 − 1, 4 − 2 (τ = 3, d_3 = |X|): 2
    assert score_records(recs[:1])["AL"] == 2.0
    # the log alone, without SimulEval's config.yaml: the same records
    alone = tmp_path / "instances.log"
    shutil.copy(simuleval_run / "instances.log", alone)
    assert records.read(alone) == recs

    assert cli.main(["score", str(simuleval_run)]) == 0
    out = capsys.readouterr().out
    table = dict(line.split(None, 1) for line in out.splitlines()[1:6])
    assert table["AL"].split() == [f"{ours['AL']:.3f}", "source", "words"]
    assert "no computation-aware (_CA) metrics" in out
    legend = out.split("What the numbers are")[1]
    assert "AL: Average Lagging, source words" in legend and ", ms" not in legend


def test_a_simul_text_folder_reads_back_as_text(tmp_path):
    """write_simuleval_dir's config.yaml says text: its records read back as text records."""
    rec = records.Record(index=0, prediction="A B", delays=[2.0, 3.0], elapsed=[],
                         prediction_length=2, reference="A B", source_length=3.0,
                         source=["a b c"], source_type="text")
    folder = records.write_simuleval_dir([rec], tmp_path / "run")
    (back,) = records.read(folder)
    assert back.source_type == "text" and back.delays == [2.0, 3.0]


def test_a_speech_log_with_zero_elapsed_is_still_refused(tmp_path):
    """Zeros in elapsed are text's only where the source is text (a string of words)."""
    line = dict(index=0, prediction="a b", delays=[100.0, 200.0], elapsed=[0, 0],
                prediction_length=2, reference="a b", source=["samplerate: 16000 Hz"],
                source_length=1000.0)
    (tmp_path / "instances.log").write_text(json.dumps(line) + "\n")
    with pytest.raises(ValueError, match=r"elapsed\[0\] = 0 < delays\[0\] = 100.0"):
        records.read(tmp_path / "instances.log")
