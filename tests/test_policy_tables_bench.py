"""benchmarks/policy_tables.py: one command makes the policy tables of en-es and en-de, from
two specs that differ only in the pair and its models."""

import importlib.util
from pathlib import Path

import pandas as pd
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench():
    path = ROOT / "benchmarks" / "policy_tables.py"
    spec = importlib.util.spec_from_file_location("policy_tables_bench", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.filterwarnings("ignore::UserWarning")  # the specs run P22's runaway setting
def test_both_pairs_have_the_same_policies(bench):
    specs = {pair: yaml.safe_load(bench.spec_path(pair).read_text()) for pair in bench.PAIRS}
    assert specs["en-de"]["policies"] == specs["en-es"]["policies"]
    assert specs["en-de"]["models"] == ["conformer_bpe_en-de", "blstm_char_en-de"]
    assert specs["en-de"]["max_utterances"] == specs["en-es"]["max_utterances"] == 100
    assert bench.output_of("en-de").resolve() == (ROOT / "runs" / "policies_en-de").resolve()
    with pytest.raises(SystemExit, match="--pairs en-pt: no spec"):
        bench.spec_path("en-pt")


def test_the_page_table_puts_the_models_side_by_side(bench):
    rows = [("conformer_bpe_en-de", "offline", "beam=1", 58.04, 7678.4, 7790.6),
            ("conformer_bpe_en-de", "wait_k_frames", "k=200_n=1_s=20", 50.26, 2102.5, 2600.1),
            ("blstm_char_en-de", "offline", "beam=1", 31.0, 7678.4, 7700.0),
            ("blstm_char_en-de", "wait_k_frames", "k=200_n=1_s=20", 20.0, 1500.0, 1800.0)]
    summary = pd.DataFrame(rows, columns=["model", "policy", "setting", "BLEU", "LAAL",
                                          "LAAL_CA"])
    table = bench.page_table(summary)
    assert list(table.columns) == ["policy", "setting", "Conformer BLEU", "LAAL (Conformer)",
                                   "LAAL_CA (Conformer)", "BLSTM BLEU", "LAAL (BLSTM)",
                                   "LAAL_CA (BLSTM)"]
    assert table.iloc[1].tolist() == ["wait_k_frames", "k=200 n=1 s=20", 50.3, 2102.0,
                                      2600.0, 20.0, 1500.0, 1800.0]
