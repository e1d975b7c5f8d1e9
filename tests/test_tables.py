"""simul.analysis.tables.select: the caller gets the column it names, never a look-alike."""

import pandas as pd
import pytest

from simul.analysis import tables

# a sweep summary's shape: the policy's settings as param_*, the segments as `utterances`
SUMMARY = pd.DataFrame({"policy": ["wait_k_frames"] * 3, "param_k": [200, 100, 300],
                        "param_s": [10, 10, 10], "param_n": [2, 2, 2],
                        "AL": [1500.0, 900.0, 2100.0], "BLEU": [30.0, 20.0, 35.0],
                        "utterances": [4, 4, 4]})


def test_select_keeps_utterances_and_the_policy_n_apart():
    got = tables.select(SUMMARY, ["k", "param_n", "utterances", "AL"], sort_by="AL",
                        rename={"param_n": "N"})
    assert list(got.columns) == ["k", "N", "utterances", "AL"]
    assert got.k.tolist() == [100, 200, 300]  # sorted by AL
    assert got.N.tolist() == [2, 2, 2]  # the policy's setting
    assert got.utterances.tolist() == [4, 4, 4]  # the segments


def test_select_refuses_the_ambiguous_n():
    with pytest.raises(KeyError, match="ambiguous.*'utterances'.*'param_n'"):
        tables.select(SUMMARY, ["k", "n"])
    without_utterances = SUMMARY.drop(columns="utterances")  # still no guessing
    with pytest.raises(KeyError, match="ambiguous"):
        tables.select(without_utterances, ["n"])


def test_select_takes_a_column_named_n_as_it_is():
    hand_made = pd.DataFrame({"n": [7], "param_n": [2]})
    assert tables.select(hand_made, ["n"]).n.tolist() == [7]


def test_select_names_what_is_missing():
    with pytest.raises(KeyError, match=r"no column\(s\) \['beam'\]"):
        tables.select(SUMMARY, ["k", "beam"])


def test_save_prints_whole_numbers_without_decimals_and_missing_ones_blank(tmp_path):
    table = pd.DataFrame({"setting": ["offline", "k=3"], "param_k": [float("nan"), 3.0],
                          "n": pd.array([pd.NA, 4], dtype="Int64"), "AL": [float("nan"), 1.5]})
    tables.save(table, tmp_path, "t")
    rows = [line.split("|")[1:-1] for line in (tmp_path / "t.md").read_text().splitlines()[2:]]
    assert [[c.strip() for c in r] for r in rows] == [["offline", "", "", "nan"],
                                                      ["k=3", "3", "4", "1.50"]]
