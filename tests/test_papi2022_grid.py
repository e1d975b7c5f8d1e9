"""P22 Figs. 1–2 with the models trained in simultaneous mode (P22's grid): which are shipped,
the sweep that decodes them, the figure, and §5's claims on them — not measured while a
model is missing; on made-up records, each able to hold, be contradicted and stay
undecided."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd
import pytest

from simul.metrics.score import score_records
from simul.papers import notebook
from simul.papers import papi2022 as p22
from simul.records import Record, read, write

matplotlib.use("Agg")

N = 30
"""Segments per setting."""
SOURCE_MS = 10000.0
KS_TEST = (3, 5, 7)
LAAL = (800.0, 1600.0, 2600.0)
"""The offline model's LAAL at k_test 3, 5, 7: one point in each regime of footnote 6."""


@pytest.fixture(autouse=True)
def fewer_resamples(monkeypatch):
    from simul.analysis.claims import resampling

    monkeypatch.setattr(resampling, "RESAMPLES", 40)  # the worlds' effects are clear-cut
    monkeypatch.setattr(resampling, "WORKERS", 1)


def correct(fraction: float, seed: int) -> np.ndarray:
    """Which of the N segments a setting translates right: the first round(fraction · N) of
    a permutation drawn from ``seed`` (one seed: nested sets, paired settings; two seeds:
    independent ones)."""
    order = np.random.default_rng(seed).permutation(N)
    out = np.zeros(N, dtype=bool)
    out[order[: round(fraction * N)]] = True
    return out


def records(tmp_path, name: str, right: np.ndarray, laal: float, spread: np.ndarray):
    """Four-word records: segment i right (its reference) or wrong (words of no reference),
    every word written at d + spread[i], so LAAL = d − 3/8 · |X| by hand when the spread
    has mean 0; BLEU = 100 · (right share) exactly (the wrong hypotheses match no
    n-gram)."""
    out = []
    for i in range(N):
        reference = f"a{i} b{i} c{i} d{i}"
        d = laal + 3 / 8 * SOURCE_MS + spread[i]
        out.append(Record(index=i, prediction=reference if right[i] else "x y z q",
                          delays=[d] * 4, elapsed=[d] * 4, prediction_length=4,
                          reference=reference, source_length=SOURCE_MS,
                          source=["a.wav", f"s{i}"], segment_id=f"s{i}"))
    return str(write(out, tmp_path / f"{name}.jsonl"))


def setting(tmp_path, model, detection, k, right, laal, spread=None) -> dict:
    """A sweep summary's row (its scores, as a sweep writes them, and its records)."""
    spread = np.zeros(N) if spread is None else spread
    path = records(tmp_path, f"{model}_{detection}_{k}", right, laal, spread)
    scores = score_records(read(path))
    return {"model": model, "split": "tst-COMMON", "policy": "wait_k_words",
            "setting": f"{detection}_k={k}", "param_k": k, "param_detection": detection,
            "param_beam": np.nan, "records": path, "BLEU": scores["BLEU"],
            "LAAL": scores["LAAL"]}


def swapped(base: np.ndarray, pairs: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """``base`` with the ``pairs``-th right and wrong segments swapped (the same BLEU, other
    segments), and a delay spread of ±500 ms on them (the same LAAL): a setting that differs
    from another only by chance."""
    right, wrong = np.flatnonzero(base), np.flatnonzero(~base)
    out, spread = base.copy(), np.zeros(N)
    for p in pairs:
        out[right[p]], out[wrong[p]] = False, True
        spread[right[p]], spread[wrong[p]] = 500.0, -500.0
    return out, spread


FIXED = {k: f"fixed{k}" for k in p22.KS}
ADAPTIVE = {k: f"adaptive{k}" for k in p22.KS}


def world(tmp_path, verdict: str) -> pd.DataFrame:
    """A grid where every claim of grid_claims comes out ``verdict``:

    - holds: the offline model right on 0.9 of the segments; the fixed-trained ones on
      0.3 + 0.05 · (k_train index), each 100 ms earlier than the smaller k_train's; the
      adaptive-trained ones all alike at 0.7; every set nested (one seed): paired;
    - contradicted: the offline model on 0.2; fixed-trained 0.9 − 0.05 · index, each
      100 ms later; adaptive-trained at 0.5 but k_train 11 at 0.8 (curves apart) and
      below the fixed-trained;
    - undecided: every model right on the same half of the segments but for a few swapped
      (:func:`swapped`; the offline model three, each trained model one of its own) and
      at the same LAAL: every effect 0, its interval as wide as the swaps make it.
    """
    rows = []
    base = correct(0.5, 0)
    for index, k in enumerate(p22.KS):
        for detection, name in (("fixed", FIXED[k]), ("adaptive", ADAPTIVE[k])):
            for j, k_test in enumerate(KS_TEST):
                if verdict == "undecided":
                    own = 3 + index + (5 if detection == "adaptive" else 0)
                    rows.append(setting(tmp_path, name, detection, k_test,
                                        *_first(swapped(base, [own]), LAAL[j])))
                    continue
                holds = verdict == "holds"
                if detection == "fixed":
                    fraction = 0.3 + 0.05 * index if holds else 0.9 - 0.05 * index
                    shift = -100.0 * index if holds else 100.0 * index
                else:
                    fraction = 0.7 if holds else (0.8 if k == 11 else 0.5)
                    shift = 0.0
                rows.append(setting(tmp_path, name, detection, k_test,
                                    correct(fraction, 0), LAAL[j] + shift))
    for detection in p22.DETECTIONS:
        for j, k_test in enumerate(KS_TEST):
            if verdict == "undecided":
                rows.append(setting(tmp_path, "off", detection, k_test,
                                    *_first(swapped(base, [0, 1, 2]), LAAL[j])))
            else:
                rows.append(setting(tmp_path, "off", detection, k_test,
                                    correct(0.9 if verdict == "holds" else 0.2, 0), LAAL[j]))
    return pd.DataFrame(rows)


def _first(made: tuple[np.ndarray, np.ndarray], laal: float):
    """(right, LAAL, spread) for :func:`setting` from :func:`swapped`'s pair."""
    return made[0], laal, made[1]


GRID_IDS = {"P22-grid-offline-vs-trained", "P22-ktrain-quality", "P22-ktrain-latency",
            "P22-grid-offline-on-par", "P22-adaptive-ktrain", "P22-grid-adaptive"}


@pytest.mark.slow
@pytest.mark.parametrize("verdict", ["holds", "contradicted", "undecided"])
def test_every_grid_claim_can_hold_be_contradicted_and_stay_undecided(tmp_path, verdict):
    summary = world(tmp_path, verdict)
    found = {c.id.removesuffix("@en-de"): c for c in p22.grid_claims(
        summary, "off", {"fixed": FIXED, "adaptive": ADAPTIVE},
        {"fixed": [], "adaptive": []}, pair="en-de")}
    assert set(found) == GRID_IDS
    for claim in found.values():
        assert claim.evidence.n == N
        assert claim.verdict == verdict, (claim.id, claim.evidence.text())
    # the kinds the paper's words give
    assert {cid: c.kind for cid, c in found.items()} == {
        "P22-grid-offline-vs-trained": "superiority", "P22-ktrain-quality": "superiority",
        "P22-ktrain-latency": "superiority", "P22-grid-offline-on-par": "non-inferiority",
        "P22-adaptive-ktrain": "equivalence", "P22-grid-adaptive": "superiority"}
    effects = {cid: c.evidence.effect for cid, c in found.items()}
    if verdict == "holds":  # worked out from the world's design
        assert effects == pytest.approx({
            "P22-grid-offline-vs-trained": 90 - 50,  # the best trained model, k_train 11
            "P22-ktrain-quality": 5.0,  # each larger k_train 5 BLEU above at matched LAAL
            "P22-ktrain-latency": -100.0,  # and 100 ms earlier at every k_test
            "P22-grid-offline-on-par": 90 - 70,
            "P22-adaptive-ktrain": 0.0,  # the adaptive curves alike
            "P22-grid-adaptive": 70 - 50})  # adaptive 70 against fixed k_train 11's 50
    if verdict == "undecided":  # nothing but chance apart
        assert effects == pytest.approx(dict.fromkeys(GRID_IDS, 0.0))


def test_claims_of_missing_models_are_not_measured_and_name_them():
    missing = {"fixed": [p22.grid_name("en-de", 9, "fixed"), p22.grid_name("en-de", 11,
                                                                            "fixed")],
               "adaptive": [p22.grid_name("en-de", k, "adaptive") for k in p22.KS]}
    summary = pd.DataFrame([{"model": "off", "policy": "wait_k_words", "param_k": 3,
                             "param_detection": "fixed", "LAAL": 800.0, "BLEU": 20.0}])
    found = {c.id: c for c in p22.grid_claims(
        summary, "off", {"fixed": {k: FIXED[k] for k in (3, 5, 7)}, "adaptive": {}},
        missing, pair="en-de")}
    assert set(found) == {f"{cid}@en-de" for cid in GRID_IDS}
    assert all(c.verdict == "not measured" for c in found.values())
    fixed = found["P22-ktrain-quality@en-de"].needs
    assert fixed.startswith("transformer_bpe_en-de_waitk9_fixed, "
                            "transformer_bpe_en-de_waitk11_fixed (tools/train_grid.sh p22-en-de")
    assert "adaptive" not in fixed
    assert "transformer_bpe_en-de_waitk3_adaptive" in found["P22-adaptive-ktrain@en-de"].needs
    both = found["P22-grid-adaptive@en-de"].needs
    assert "waitk11_fixed" in both and "waitk11_adaptive" in both


def test_grid_models_split_the_grid_into_shipped_and_missing(monkeypatch):
    there = {p22.grid_name("en-es", 3, "fixed"), p22.grid_name("en-es", 7, "adaptive")}
    monkeypatch.setattr(notebook, "missing_models",
                        lambda models: [m for m in models if m not in there])
    shipped, missing = p22.grid_models("en-es")
    assert shipped == {"fixed": {3: "transformer_bpe_en-es_waitk3_fixed"},
                       "adaptive": {7: "transformer_bpe_en-es_waitk7_adaptive"}}
    assert missing["fixed"] == [p22.grid_name("en-es", k, "fixed") for k in (5, 7, 9, 11)]
    assert len(missing["adaptive"]) == 4


def test_grid_spec_decodes_as_spec_decodes_the_offline_transformer():
    # the trained models' curves and the offline model's are one policy
    offline = p22.spec("transformer_bpe_en-de", "en-de", "tst-COMMON", "o", word_ms=372.6)
    for detection, policy in zip(p22.DETECTIONS, offline["policies"][:2], strict=True):
        s = p22.grid_spec(["m1", "m2"], "en-de", "tst-COMMON", "o", detection=detection,
                          word_ms=372.6, max_utterances=5)
        assert s["models"] == ["m1", "m2"] and s["max_utterances"] == 5
        assert s["policies"] == [policy, {"policy": "offline", "grid": {"beam": [1]}}]
    # A.1 (the Transformer): avoid_eos_while_reading with adaptive detection only
    assert offline["policies"][0]["fixed"]["avoid_eos_while_reading"] is False
    assert offline["policies"][1]["fixed"]["avoid_eos_while_reading"] is True


def _rows(models: dict[str, float]) -> pd.DataFrame:
    """Wait-k rows of both detections (k_test 3, 5, 7) and offline greedy, by BLEU shift."""
    rows = []
    for model, shift in models.items():
        for detection in p22.DETECTIONS:
            rows += [{"model": model, "policy": "wait_k_words", "param_k": k,
                      "param_detection": detection, "param_beam": np.nan,
                      "LAAL": laal, "BLEU": 10.0 + shift + j}
                     for j, (k, laal) in enumerate(zip(KS_TEST, LAAL, strict=True))]
        rows.append({"model": model, "policy": "offline", "param_k": np.nan,
                     "param_detection": np.nan, "param_beam": 1, "LAAL": 9000.0,
                     "BLEU": 20.0 + shift})
    return pd.DataFrame(rows)


def test_figure_grid_draws_what_is_shipped_and_says_what_is_missing():
    rows = {"en-de": _rows({"off": 0.0, "w3": -2.0, "w7": -1.0}), "en-es": _rows({"off": 5.0})}
    names = {pair: [p22.grid_name(pair, k, "fixed") for k in p22.KS] for pair in rows}
    fig = p22.figure_grid(rows, "fixed", {"en-de": "off", "en-es": "off"},
                          {"en-de": {3: "w3", 7: "w7"}, "en-es": {}},
                          {"en-de": [n for n in names["en-de"] if "waitk3_" not in n
                                     and "waitk7_" not in n], "en-es": names["en-es"]},
                          "Figure 1 analogue")
    de, es = fig.axes
    assert [line.get_label() for line in de.lines] == [
        "k_train = 3", "k_train = 7", "offline-trained", "offline greedy"]
    offline = de.lines[2]
    assert offline.get_color() == "black" and offline.get_linestyle() == "-"
    assert de.lines[3].get_linestyle() == "--" and list(de.lines[3].get_ydata()) == [20.0] * 2
    assert de.get_title() == ("(a) en-de: fixed detection\n"
                              "not trained yet: k_train 5, 9, 11 (tools/train_grid.sh p22-en-de)")
    # nothing trained yet: the offline curve, its greedy line and the note, no crash
    assert [line.get_label() for line in es.lines] == ["offline-trained", "offline greedy"]
    assert es.get_title() == ("(b) en-es: fixed detection\nnot trained yet: k_train 3, 5, 7, "
                              "9, 11 (tools/train_grid.sh p22-en-es)")
