"""simul train's statistics pass lands whole or not at all (train.collect_whole): ESPnet
writes its shape files as it goes, and a run resumed after a pass stopped halfway took them
for a finished one (then ESPnet refused: "keys are mismatched between …text_shape !=
…speech_shape")."""

import pytest

from simul.models.training.train import collect_whole


def _write(out, lines):
    (out / "train").mkdir(parents=True, exist_ok=True)
    (out / "train" / "speech_shape").write_text("".join(f"u{i} 16000\n" for i in range(lines)))


def test_a_pass_stopped_halfway_leaves_no_shape_file(tmp_path):
    stats = tmp_path / "run" / "stats"
    stats.parent.mkdir()

    def stopped(out):
        _write(out, 3)
        raise RuntimeError("espnet2.bin.st_train failed")

    with pytest.raises(RuntimeError):
        collect_whole(stats, stopped)
    assert not (stats / "train" / "speech_shape").exists()
    collect_whole(stats, lambda out: _write(out, 5))
    assert (stats / "train" / "speech_shape").read_text().count("\n") == 5
    assert sorted(p.name for p in stats.parent.iterdir()) == ["stats"]  # nothing beside


def test_remains_of_an_earlier_pass_are_replaced_and_a_shared_link_kept(tmp_path):
    shared = tmp_path / "shared" / "lane" / "stats"
    shared.mkdir(parents=True)
    _write(shared, 2)  # what a pass stopped before whole passes left
    (shared / "train" / "text_shape").write_text("u0 7\n")
    stats = tmp_path / "run" / "stats"
    stats.parent.mkdir()
    stats.symlink_to(shared)
    collect_whole(stats, lambda out: _write(out, 4))
    assert stats.is_symlink() and stats.resolve() == shared.resolve()
    assert sorted(p.name for p in (shared / "train").iterdir()) == ["speech_shape"]
    assert (stats / "train" / "speech_shape").read_text().count("\n") == 4
