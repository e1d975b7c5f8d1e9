"""What an MMA model serves (docs/reference/policies.md, "MMA models"): the ``mma`` policy on
triggers of the kind it was trained on, and ``offline`` greedy; the other policies, a beam,
oracle triggers for a model trained over fixed blocks (and the converse) are refused in one
line; a Δt or an oracle unit it was not trained on is decoded with a note."""

from __future__ import annotations

import pytest

from simul.commands import cli
from simul.decoding.session import check_fit
from simul.decoding.simulate import simulate
from simul.models.loader import load_dir
from simul.policies import make
from tests.conftest import make_tiny_model
from tests.test_mma_policy import mma_copy
from tests.test_mustc import PAIR, SPLIT, make_corpus
from tests.test_policy_word_detection import segment


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    """Tiny MMA models: ``fixed`` (trained over 200 ms blocks) and ``word`` (oracle word
    ends), the same weights."""
    offline = make_tiny_model(tmp_path_factory.mktemp("fit_offline"), "transformer")
    root = tmp_path_factory.mktemp("fit")
    return {kind: mma_copy(offline, root / f"mma_{kind}", pre_decision=kind)
            for kind in ("fixed", "word")}


@pytest.fixture(scope="module")
def models(dirs):
    return {kind: load_dir(d) for kind, d in dirs.items()}


SERVES = ("a model with transformer_mma decoder: mma (its heads decide when to write) or "
          "offline (greedy monotonic decoding of the whole source, beam 1)")


@pytest.mark.parametrize("kind, policy, settings, message", [
    ("fixed", "wait_k_frames", {}, f"policy wait_k_frames does not decode mma_fixed, {SERVES}"),
    ("word", "onlinization", {}, f"policy onlinization does not decode mma_word, {SERVES}"),
    ("fixed", "alignatt", {}, f"policy alignatt does not decode mma_fixed, {SERVES}"),
    ("fixed", "offline", {"beam": "5"},
     "offline: beam=5: this model decodes greedily only (an MMA model: its heads decide when "
     "each step is taken); use beam 1"),
    ("fixed", "mma", {"trigger": "word"},
     "mma: trigger=word on mma_fixed, trained over fixed blocks of 200 ms: its heads learned "
     "to stop at those; decode it with trigger=fixed (any step_ms) (or the model's own: "
     "leave trigger out)"),
    ("word", "mma", {"trigger": "fixed"},
     "mma: trigger=fixed on mma_word, trained over oracle word ends: its heads learned to "
     "stop at those; decode it with trigger=word or trigger=phoneme (or the model's own: "
     "leave trigger out)"),
    ("word", "mma", {"step_ms": "100"},
     "mma: step_ms=100 applies to fixed triggers; mma_word is decoded on oracle word ends: "
     "leave step_ms out"),
])
def test_what_an_mma_model_does_not_serve_is_refused(models, speech, kind, policy, settings,
                                                     message):
    the_policy = make(policy, settings)
    with pytest.raises(ValueError) as e:
        check_fit(models[kind], the_policy)
    assert str(e.value) == message
    with pytest.raises(ValueError, match="^" + message.split(":")[0]):  # a session checks too
        simulate(models[kind], the_policy, segment(speech))


def test_a_policy_written_for_the_mma_decoder_is_served(models):
    from dataclasses import dataclass

    from simul.policies.mma import MonotonicAttention

    @dataclass
    class MyMMA(MonotonicAttention):  # a policy of one's own for MMA models
        name = "my_mma"

    assert check_fit(models["fixed"], MyMMA()) == []


@pytest.mark.parametrize("kind, policy, settings, notes", [
    ("fixed", "mma", {}, []),  # its own triggers
    ("fixed", "mma", {"trigger": "fixed", "step_ms": "200"}, []),  # the same, said
    ("word", "mma", {"trigger": "word"}, []),
    ("fixed", "offline", {}, []),
    ("fixed", "mma", {"step_ms": "120"},
     ["mma: mma_fixed was trained over fixed blocks of 200 ms, decoded here over blocks of "
      "120 ms (a Δt it was not trained on)"]),
    ("word", "mma", {"trigger": "phoneme"},
     ["mma: mma_word was trained over oracle word ends, decoded here on oracle phoneme ends "
      "(a pre-decision it was not trained on)"]),
])
def test_what_an_mma_model_serves_is_decoded_with_a_note_when_untrained(models, kind, policy,
                                                                        settings, notes):
    assert check_fit(models[kind], make(policy, settings)) == notes


def test_decode_refuses_it_in_one_line_and_writes_nothing(dirs, tmp_path, capsys):
    make_corpus(tmp_path / PAIR)
    out = tmp_path / "r.jsonl"
    assert cli.main(["decode", "--model", str(dirs["fixed"]), "--pair", PAIR, "--corpus",
                     str(tmp_path), "--split", SPLIT, "--policy", "wait_k_frames",
                     "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == f"simul: error: policy wait_k_frames does not decode mma_fixed, {SERVES}\n"
    assert not out.exists()
    assert cli.main(["decode", "--model", str(dirs["fixed"]), "--pair", PAIR, "--corpus",
                     str(tmp_path), "--split", SPLIT, "--policy", "mma", "--set",
                     "step_ms=120", "--out", str(out)]) == 0
    assert "note: mma: mma_fixed was trained over fixed blocks of 200 ms, decoded here over " \
           "blocks of 120 ms" in capsys.readouterr().err
