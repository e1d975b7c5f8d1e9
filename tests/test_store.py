"""The record store: sweeps reuse what another sweep decoded, misses, torn files, races, CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from simul import sweep
from simul.commands.cli import main
from simul.sweep import executors, store
from tests.test_mustc import PAIR, SPLIT, make_corpus

WAIT_K = {"policy": "wait_k_frames", "settings": [{"k": 20, "s": 10, "n": 1}],
          "fixed": {"maxlenratio": 1.0}}
OFFLINE = {"policy": "offline"}
OFFLINE_EXPLICIT = {"policy": "offline", "settings": [{"beam": 1}]}  # the default: same key
NEW = {"policy": "wait_k_frames", "settings": [{"k": 40, "s": 20, "n": 2}],
       "fixed": {"maxlenratio": 1.0}}


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    from tests.conftest import make_tiny_model

    return make_tiny_model(tmp_path_factory.mktemp("tiny_rnn"), "rnn")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    make_corpus(root / PAIR)
    return root


@pytest.fixture
def root(tmp_path, monkeypatch) -> Path:
    """This test's own store."""
    path = tmp_path / "store"
    monkeypatch.setenv("SIMUL_STORE", str(path))
    return path


@pytest.fixture
def decodes(monkeypatch) -> list[tuple[str, list[str]]]:
    """(segment id, setting slugs) of every decode_utterance call of a sweep."""
    calls = []
    real = executors.decode_utterance

    def counting(ref, settings, segment, **kwargs):
        calls.append((segment.id, [s.slug for s in settings]))
        return real(ref, settings, segment, **kwargs)

    monkeypatch.setattr(executors, "decode_utterance", counting)
    return calls


def spec(model_dir, corpus, output, policies, **extra) -> dict:
    return {"models": [str(model_dir)], "pair": PAIR, "splits": [SPLIT], "corpus": str(corpus),
            "output": str(output), "policies": policies, **extra}


def run(*args, **kwargs):
    return sweep.run(spec(*args, **kwargs), workers=1, progress=False)


def lines(output: Path, table, row: int) -> list[dict]:
    return [json.loads(x) for x in (output / table.records[row]).read_text().splitlines()]


def without(record: dict, *names: str) -> dict:
    return {k: v for k, v in record.items() if k not in names}


RECORD = {"index": 0, "prediction": "a b", "delays": [100.0, 200.0], "elapsed": [150.0, 260.0],
          "prediction_length": 2, "reference": "x y", "source_length": 1000.0,
          "source": ["talk.wav", "seg_1"], "units": ["a", " b"], "unit_type": "char",
          "trace": [[100.0, 1], [200.0, 2]], "model": "m", "policy": "offline",
          "settings": {"beam": 1}, "segment_id": "seg_1", "source_text": "u v"}


def fields(**change) -> dict:
    base = {"model": "m" * 64, "corpus": "c" * 64, "pair": "en-de", "split": "dev",
            "segment": "seg_1", "policy": "offline", "settings": {"beam": 1}, "code": "v1"}
    return store.key_fields(**{**base, **change})


# --------------------------------------------------------------------------- sweeps
def test_second_sweep_decodes_only_new_settings_and_equals_a_fresh_decode(
        model_dir, corpus, root, decodes, tmp_path):
    first = run(model_dir, corpus, tmp_path / "first", [WAIT_K, OFFLINE])
    n = int(first.utterances[0])
    assert len(decodes) == n and first.from_store.tolist() == [0, 0]
    assert first.decoded.tolist() == [n, n]
    assert len(list(store.Store(root).files())) == 2 * n

    # another sweep, on a copy of the corpus elsewhere: the records name its wavs
    moved = tmp_path / "moved"
    shutil.copytree(corpus, moved)
    decodes.clear()
    second = run(model_dir, moved, tmp_path / "second", [OFFLINE_EXPLICIT, NEW, WAIT_K])
    assert sorted(slugs for _, slugs in decodes) == [["maxlenratio=1.0_k=40_s=20_n=2"]] * n
    assert second.from_store.tolist() == [n, 0, n]
    assert second.decoded.tolist() == [0, n, 0]
    assert len(list(store.Store(root).files())) == 3 * n

    decodes.clear()
    fresh = run(model_dir, moved, tmp_path / "fresh", [OFFLINE_EXPLICIT, NEW, WAIT_K],
                store=False)
    assert len(decodes) == n and fresh.from_store.tolist() == [0, 0, 0]
    for row, (before, row_first) in enumerate([(True, 1), (False, None), (True, 0)]):
        got = lines(tmp_path / "second", second, row)
        assert [without(r, "elapsed") for r in got] == [
            without(r, "elapsed") for r in lines(tmp_path / "fresh", fresh, row)]
        assert all(r["source"][0].startswith(str(moved)) for r in got)
        if before:  # the record as the first sweep decoded it, measured times included
            old = lines(tmp_path / "first", first, row_first)
            assert [without(r, "source") for r in got] == [without(r, "source") for r in old]
            assert [r["elapsed"] for r in got] == [r["elapsed"] for r in old]
    # the scores that do not depend on measured times agree with the fresh decode
    for metric in ("BLEU", "AL", "LAAL", "utterances"):
        assert second[metric].tolist() == fresh[metric].tolist(), metric
    assert second.LAAL_CA[[0, 2]].tolist() == first.LAAL_CA[[1, 0]].tolist()

    decodes.clear()  # everything stored: nothing decoded
    third = run(model_dir, corpus, tmp_path / "third", [NEW, OFFLINE])
    assert decodes == [] and third.from_store.tolist() == [n, n]


def test_resumed_sweep_keeps_provenance(model_dir, corpus, root, decodes, tmp_path):
    run(model_dir, corpus, tmp_path / "first", [OFFLINE])
    n = len(decodes)

    class Stop(Exception):
        pass

    def stop():
        raise Stop

    s = spec(model_dir, corpus, tmp_path / "second", [OFFLINE, NEW])
    with pytest.raises(Stop):
        sweep.run(s, workers=1, progress=False, on_result=stop)
    table = sweep.run(s, workers=1, progress=False)
    assert table.from_store.tolist() == [n, 0] and table.decoded.tolist() == [0, n]


def test_journal_times_what_was_decoded_here(model_dir, corpus, root, tmp_path):
    """Each journal line has the wall seconds of the records decoded here, None for those
    taken from the store: what ``benchmarks/reproduce_profile.py`` adds up."""
    run(model_dir, corpus, tmp_path / "first", [OFFLINE])
    run(model_dir, corpus, tmp_path / "second", [OFFLINE, NEW])
    lines = [json.loads(line) for line in
             (tmp_path / "second" / "journal" / model_dir.name / f"{SPLIT}.jsonl")
             .read_text().splitlines()]
    assert lines
    for line in lines:
        offline, new = line["seconds"]
        assert line["from_store"] == [True, False]
        assert offline is None and isinstance(new, float) and new > 0


def test_changed_model_or_code_version_is_a_miss(model_dir, corpus, root, decodes, tmp_path,
                                                  monkeypatch):
    from tests.conftest import make_tiny_model

    run(model_dir, corpus, tmp_path / "first", [OFFLINE])
    n = len(decodes)
    other = make_tiny_model(tmp_path / model_dir.name, "rnn", seed=3)  # same name, new weights
    decodes.clear()
    table = run(other, corpus, tmp_path / "other_model", [OFFLINE])
    assert len(decodes) == n and table.from_store.tolist() == [0]

    monkeypatch.setattr(store, "code_version", lambda: "edited")
    decodes.clear()
    table = run(model_dir, corpus, tmp_path / "other_code", [OFFLINE])
    assert len(decodes) == n and table.from_store.tolist() == [0]
    decodes.clear()
    table = run(model_dir, corpus, tmp_path / "same_code", [OFFLINE])
    assert decodes == [] and table.from_store.tolist() == [n]


def test_records_are_stored_under_the_workers_code_version(model_dir, corpus, root, tmp_path,
                                                           monkeypatch):
    real = executors._decode_task
    monkeypatch.setattr(executors, "_decode_task",
                        lambda *a, **k: ("worker's code", *real(*a, **k)[1:]))
    table = run(model_dir, corpus, tmp_path / "out", [OFFLINE])
    files = list(store.Store(root).files())
    assert len(files) == table.utterances[0]
    assert {json.loads(f.read_text())["key"]["code"] for f in files} == {"worker's code"}
    monkeypatch.setattr(executors, "_decode_task", real)
    assert run(model_dir, corpus, tmp_path / "again", [OFFLINE]).from_store.tolist() == [0]
    # a worker whose files changed since it imported them says None: nothing stored
    monkeypatch.setattr(executors, "_decode_task", lambda *a, **k: (None, *real(*a, **k)[1:]))
    run(model_dir, corpus, tmp_path / "changed", [NEW])
    assert len(list(store.Store(root).files())) == 2 * len(files)


def test_torn_or_edited_files_are_misses_and_are_rewritten(model_dir, corpus, root, decodes,
                                                           tmp_path):
    run(model_dir, corpus, tmp_path / "first", [OFFLINE])
    n = len(decodes)
    files = sorted(store.Store(root).files())
    torn, edited = files[0], files[1]
    torn.write_bytes(torn.read_bytes()[:50])  # as if the file were cut short
    data = json.loads(edited.read_text())
    data["record"]["settings"] = {"beam": 5}  # a hand edit: no longer its key's record
    edited.write_text(json.dumps(data))
    decodes.clear()
    table = run(model_dir, corpus, tmp_path / "second", [OFFLINE])
    assert len(decodes) == 2 and table.from_store.tolist() == [n - 2]
    for path in (torn, edited):
        data = json.loads(path.read_text())
        assert store.Store(root).get(data["key"]) == data["record"]
    assert run(model_dir, corpus, tmp_path / "third", [OFFLINE]).from_store.tolist() == [n]


def test_store_false_and_store_off_neither_read_nor_write(model_dir, corpus, root, decodes,
                                                          tmp_path, monkeypatch):
    run(model_dir, corpus, tmp_path / "off", [OFFLINE], store=False)
    assert not root.exists()
    run(model_dir, corpus, tmp_path / "on", [OFFLINE])
    n = len(decodes) // 2
    decodes.clear()
    monkeypatch.setenv("SIMUL_STORE", "off")
    assert store.Store.default() is None
    table = run(model_dir, corpus, tmp_path / "env_off", [OFFLINE])
    assert len(decodes) == n and table.from_store.tolist() == [0]


# --------------------------------------------------------------------------- the store
def test_key_covers_every_field_and_defaults_are_one_key(root):
    s = store.Store(root)
    s.put(fields(), RECORD)
    assert s.get(fields()) == RECORD
    for change in ({"model": "n" * 64}, {"corpus": "d" * 64}, {"pair": "en-es"},
                   {"split": "tst"}, {"segment": "seg_2"}, {"policy": "wait_k_frames"},
                   {"settings": {"beam": 2}}, {"code": "v2"}):
        assert s.get(fields(**change)) is None, change
    # settings are a policy's full settings: {} and explicit defaults give the same key
    from simul.policies import make

    assert make("offline", {}).settings() == make("offline", {"beam": 1}).settings()
    assert store.key(fields(settings={"a": 1, "b": 2})) == store.key(
        fields(settings={"b": 2, "a": 1}))


def test_stored_key_fields_are_checked(root):
    s = store.Store(root)
    path = s.put(fields(), RECORD)
    other = s.path(fields(segment="seg_2"))  # as if two keys collided
    other.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(path, other)
    assert s.get(fields(segment="seg_2")) is None
    bad = dict(RECORD, delays=[300.0, 200.0])  # a record the metrics would refuse
    s.put(fields(), bad)
    assert s.get(fields()) is None


def test_code_version_hashes_the_decoding_modules(tmp_path, monkeypatch):
    files = {p.relative_to(store.PACKAGE).as_posix()
             for pattern in store.CODE_FILES for p in store.PACKAGE.glob(pattern)}
    assert {"decoding/session.py", "decoding/simulate.py", "policies/wait_k_frames.py",
            "models/adapter.py", "models/adapters/espnet_st.py", "sweep/calls.py",
            "sweep/lockstep.py", "metrics/units.py"} <= files
    assert not store.code_changed()
    version = store.source_digest()
    package = tmp_path / "simul"
    for name in files:
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(store.PACKAGE / name, package / name)
    assert store.source_digest(package) == version  # the text, not where it lies
    with open(package / "policies" / "offline.py", "a") as f:
        f.write("# a comment\n")  # even a comment: the safe side
    assert store.source_digest(package) != version
    monkeypatch.setattr(store, "PACKAGE", package)  # as if edited after the import
    assert store.code_changed()


def test_code_changed_since_import_turns_the_store_off(model_dir, corpus, root, decodes,
                                                       tmp_path, monkeypatch):
    run(model_dir, corpus, tmp_path / "first", [OFFLINE])
    n = len(decodes)
    decodes.clear()
    monkeypatch.setattr(store, "_LOADED", "what this process imported")
    with pytest.warns(UserWarning, match="decoding code changed"):
        table = run(model_dir, corpus, tmp_path / "second", [OFFLINE, NEW])
    assert len(decodes) == n and table.from_store.tolist() == [0, 0]
    assert len(list(store.Store(root).files())) == n  # the first sweep's only


WRITER = """
import sys
from simul.sweep.store import Store
store, fields, record = Store(sys.argv[1]), {fields!r}, {record!r}
for i in range(200):
    record["elapsed"] = [150.0 + i, 260.0 + i]
    store.put(fields, record)
"""


def test_concurrent_writers_leave_a_valid_record(root):
    s = store.Store(root)
    code = WRITER.format(fields=fields(), record=RECORD)
    procs = [subprocess.Popen([sys.executable, "-c", code, str(root)]) for _ in range(2)]
    errors = []

    def write(thread: int):
        try:
            for i in range(200):
                s.put(fields(), dict(RECORD, elapsed=[1000.0 + i, 2000.0 + thread]))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=write, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    reads = []
    while any(p.poll() is None for p in procs) or any(t.is_alive() for t in threads):
        reads.append(s.get(fields()))  # a record, or nothing yet: never a torn file
    for t in threads:
        t.join()
    assert [p.wait() for p in procs] == [0, 0] and errors == []
    first = next(k for k, r in enumerate(reads) if r is not None)
    assert all(r is not None and without(r, "elapsed") == without(RECORD, "elapsed")
               for r in reads[first:])  # once written, always a whole record
    assert s.get(fields()) is not None
    assert [p.name for p in s.root.rglob("*") if p.is_file()] == [s.path(fields()).name]


def test_cli_info_and_clear(root, capsys):
    s = store.Store(root)
    for i in range(3):
        s.put(fields(segment=f"seg_{i}"), dict(RECORD, segment_id=f"seg_{i}"))
    s.put(fields(model="n" * 64), dict(RECORD, model="other"))
    old = s.path(fields(segment="seg_0"))
    os.utime(old, (time.time() - 10 * 86400,) * 2)
    assert main(["store", "info"]) == 0
    out = capsys.readouterr().out
    assert str(root) in out and "records:  4" in out
    assert "3  m (mmmmmmmmmmmm)" in out and "1  other (nnnnnnnnnnnn)" in out
    assert "4  offline" in out

    assert main(["store", "clear"]) == 1  # without --yes: nothing goes
    assert len(list(s.files())) == 4
    assert main(["store", "clear", "--older-than", "5", "--yes"]) == 0
    assert not old.exists() and len(list(s.files())) == 3
    assert main(["store", "clear", "--model", "other", "--yes"]) == 0
    assert len(list(s.files())) == 2 and s.get(fields(segment="seg_1")) is not None
    (s.path(fields()).parent / ".stray.tmp").write_text("{")  # a killed writer's file
    assert main(["store", "clear", "--yes"]) == 0
    assert list(root.iterdir()) == []
    capsys.readouterr()
    assert main(["store"]) == 0 and "records:  0" in capsys.readouterr().out


def test_cli_sweep_no_store(model_dir, corpus, root, tmp_path):
    import yaml

    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec(model_dir, corpus, tmp_path / "out", [OFFLINE],
                                        workers=1)))
    assert main(["sweep", str(path), "--quiet", "--no-store"]) == 0
    assert not root.exists()
    with pytest.raises(sweep.SweepError, match="field 'store'"):
        sweep.Spec.load({**spec(model_dir, corpus, tmp_path / "o", [OFFLINE]), "store": 1})


def test_reproduce_no_store_turns_it_off_for_the_kernels(monkeypatch, tmp_path):
    from simul.commands import reproduce

    seen = []
    monkeypatch.setattr(reproduce, "_execute",
                        lambda *a: seen.append(os.environ.get("SIMUL_STORE")) or 0.0)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SIMUL_STORE", "relative/store")
    kwargs = {"figures_dir": tmp_path / "f", "executed_dir": tmp_path / "e",
              "runs_dir": tmp_path / "r", "jobs": 1, "log": lambda *a: None}
    reproduce.run(["tutorial"], store=False, **kwargs)
    reproduce.run(["tutorial"], **kwargs)
    # the kernels run in notebooks/: a relative store is made absolute for them
    assert seen == ["off", str(tmp_path / "relative" / "store")]
    assert os.environ["SIMUL_STORE"] == "relative/store"
