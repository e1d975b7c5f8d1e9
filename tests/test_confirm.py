"""The confirmatory run: undecided claims decided again on fresh segments, through sweeps that
skip the first run's segments."""

from __future__ import annotations

import pandas as pd
import pytest

from simul import sweep
from simul.analysis import claims
from simul.commands import confirm
from simul.corpus import load_list
from simul.metrics.score import score_records
from simul.records import read
from simul.sweep import SweepError
from tests.test_mustc import PAIR, SPLIT, make_corpus

SETTINGS = [{"policy": "wait_k_frames", "settings": [{"k": 20, "s": 10, "n": 1},
                                                     {"k": 60, "s": 10, "n": 1}]}]
A, B = {"setting": "k=20_s=10_n=1"}, {"setting": "k=60_s=10_n=1"}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    make_corpus(root / PAIR)  # four segments
    return root


def spec(model, corpus, output, **extra) -> dict:
    return {"models": [str(model)], "pair": PAIR, "splits": [SPLIT], "corpus": str(corpus),
            "output": str(output), "policies": SETTINGS, **extra}


@pytest.mark.parametrize("tiny_model_dir", ["transformer"], indirect=True)
def test_a_sweep_skips_segments_and_refuses_a_bad_skip(tiny_model_dir, corpus, tmp_path):
    ids = [s.id for s in load_list(corpus, PAIR, SPLIT)]
    rows = sweep.run(spec(tiny_model_dir, corpus, tmp_path / "s", skip_utterances=1,
                          max_utterances=2), workers=1, progress=False)
    assert [r.segment_id for r in read(rows.records.iloc[0])] == ids[1:3]
    with pytest.raises(SweepError, match="field 'skip_utterances'"):
        sweep.run(spec(tiny_model_dir, corpus, tmp_path / "t", skip_utterances=-1))


@pytest.mark.parametrize("tiny_model_dir", ["transformer"], indirect=True)
def test_confirm_decides_on_the_fresh_segments_alone(tiny_model_dir, corpus, tmp_path):
    figures, runs = tmp_path / "figures", tmp_path / "runs"
    # the first run: two of the four segments, one claim on them (AL at k=60 − at k=20)
    first = sweep.run(spec(tiny_model_dir, corpus, runs / "full" / "tutorial" / "grid",
                           max_utterances=2), workers=1, progress=False)
    evidence = claims.evaluate(first, claims.difference(A, B, "AL"), claimed="greater")
    assert evidence.replay is not None and evidence.n == 2
    claims.report([claims.Claim.measured("T-k", "AL grows with k", evidence),
                   claims.Claim.measured("T-wide", "AL grows with k", evidence)],
                  figures / "tutorial")
    # as a first run that left both undecided: one needs the two segments left, one needs 5
    path = figures / "tutorial" / "claims.csv"
    table = pd.read_csv(path)
    table["verdict"], table["needs_more"] = "undecided", [2, 5]
    table.to_csv(path, index=False)

    out = confirm.run(["tutorial"], figures_dir=figures, runs_dir=runs, corpus=corpus,
                      workers=1, log=lambda *_: None)
    row, wide = (out[out.claim == c].iloc[0] for c in ("T-k", "T-wide"))
    assert "needs 5 fresh segments" in wide["why not taken again"]
    assert wide["decided by"] == "neither" and wide["confirm verdict"] == ""
    assert row["confirm n"] == 2 and row["first n"] == 2

    # the fresh records: segments 3 and 4 of the split, never the first run's
    fresh = {p.stem: read(p) for p in (runs / "confirm" / "T-k").rglob("records/**/*.jsonl")}
    ids = [s.id for s in load_list(corpus, PAIR, SPLIT)]
    assert sorted(fresh) == sorted([A["setting"], B["setting"]])
    assert all([r.segment_id for r in recs] == ids[2:4] for recs in fresh.values())
    # the effect is the statistic on those records: AL(B) − AL(A) as simul score gives it
    by_hand = (score_records(fresh[B["setting"]])["AL"]
               - score_records(fresh[A["setting"]])["AL"])
    assert row["confirm effect [interval]"].startswith(f"{by_hand:+.1f} [")
    verdict = row["confirm verdict"]
    assert row["decided by"] == ("neither" if verdict == "undecided" else "confirmatory run")
    assert (figures / "confirm" / "claims.csv").is_file()

    # resumed: nothing decoded again, the same table (the bootstrap is seeded)
    again = confirm.run(["tutorial"], figures_dir=figures, runs_dir=runs, corpus=corpus,
                        workers=1, log=lambda *_: None)
    pd.testing.assert_frame_equal(out, again)


def test_power_sizes_the_second_stage():
    replay = claims.Replay(pd.DataFrame(), lambda rows: 0.0, "greater", 1.0, ("AL",))
    first = pd.Series({"effect": -0.5, "low": -1.8, "high": 0.8, "n": 40})
    # 0.5 from the margin's −1, half-width 1.3: 40 · ((1.96 + z)/1.96 · 2.6)², z the power's
    # quantile: 270.4 at ½, 552.5 at 0.8, 739.6 at 0.9
    assert [confirm.needed(first, replay, p) for p in (0.5, 0.8, 0.9)] == [271, 553, 740]
    assert confirm.needed(pd.Series({**first, "effect": float("nan")}), replay, 0.8) is None
    for bad in (0.0, 1.0, 1.5):
        with pytest.raises(confirm.ConfirmError, match="--power"):
            confirm.candidates(power=bad)


def test_confirm_refuses_a_quick_run_and_an_empty_figures_folder(tmp_path):
    with pytest.raises(confirm.ConfirmError, match="run simul reproduce"):
        confirm.run(["tutorial"], figures_dir=tmp_path)
    claims.report([claims.Claim.measured(
        "T-k", "AL grows with k", claims.Evidence(1.0, -1.0, 3.0, 4, "greater"),
        needs_full_run=True)], tmp_path / "tutorial", quick=True)
    with pytest.raises(confirm.ConfirmError, match="quick run"):
        confirm.run(["tutorial"], figures_dir=tmp_path)


@pytest.mark.parametrize("tiny_model_dir", ["transformer"], indirect=True)
def test_a_finished_sweep_gains_its_sources_when_run_again(tiny_model_dir, corpus, tmp_path):
    import json

    out = tmp_path / "s"
    sweep.run(spec(tiny_model_dir, corpus, out, max_utterances=1), workers=1, progress=False)
    path = out / "sweep.json"
    data = json.loads(path.read_text())
    assert data["sources"] == {"models": {tiny_model_dir.name: str(tiny_model_dir.resolve())},
                               "corpus": str(corpus)}
    path.write_text(json.dumps({"fingerprint": data["fingerprint"]}))  # as an older simul
    sweep.run(spec(tiny_model_dir, corpus, out, max_utterances=1), workers=1, progress=False)
    assert json.loads(path.read_text()) == data


@pytest.mark.parametrize("tiny_model_dir", ["transformer"], indirect=True)
def test_an_interrupted_confirmatory_run_leaves_its_table(tiny_model_dir, corpus, tmp_path,
                                                           monkeypatch):
    figures, runs = tmp_path / "figures", tmp_path / "runs"
    first = sweep.run(spec(tiny_model_dir, corpus, runs / "full" / "tutorial" / "grid",
                           max_utterances=2), workers=1, progress=False)
    evidence = claims.evaluate(first, claims.difference(A, B, "AL"), claimed="greater")
    claims.report([claims.Claim.measured(i, "AL grows with k", evidence) for i in ("A", "B")],
                  figures / "tutorial")
    path = figures / "tutorial" / "claims.csv"
    table = pd.read_csv(path)
    table["verdict"], table["needs_more"] = "undecided", [1, 2]
    table.to_csv(path, index=False)
    calls = []

    def decide(c, *args, **kwargs):  # the first claim decided, then an interruption
        calls.append(c.id)
        if len(calls) > 1:
            raise KeyboardInterrupt
        c.evidence = claims.Evidence(5.0, 1.0, 9.0, c.fresh, "greater")
        return c.evidence

    monkeypatch.setattr(confirm, "decide", decide)
    with pytest.raises(KeyboardInterrupt):
        confirm.run(["tutorial"], figures_dir=figures, runs_dir=runs, corpus=corpus,
                    log=lambda *_: None)
    assert calls == ["A", "B"]  # the smallest sample first
    saved = pd.read_csv(figures / "confirm" / "claims.csv", keep_default_na=False)
    assert saved.set_index("claim")["decided by"].to_dict() == {"A": "confirmatory run",
                                                                "B": "pending"}
    assert "1 of 2 claims taken so far" in (figures / "confirm" / "claims.md").read_text()
