"""The counterfactual alpha family: rebuilt from the starter kit, it reproduces the kit's own x100 rows."""

from __future__ import annotations

import pandas as pd
import pytest

from kinegraph.benchmarks.quantiphy.counterfactual import ALPHAS, write_counterfactual_set
from kinegraph.benchmarks.quantiphy.loader import load
from kinegraph.errors import DataError


def test_the_family_reproduces_the_starter_kits_counterfactual_columns(golden, tmp_path):
    kit = golden / "quantiphy" / "starter_kit_CIB_Ready_test4.csv"
    path = write_counterfactual_set(kit, tmp_path)
    out = pd.read_csv(path)
    source = pd.read_csv(kit)
    assert len(out) == 10 * len(source) and ALPHAS == (0.001, 0.01, 0.1, 0.2, 5, 50, 100, 200, 500, 700)
    at_100 = out[out["counterfactual_factor"] == 100].reset_index(drop=True)
    # the kit has one alpha (100) per row: "speed of the bird =6m/s" -> "=600m/s", 20 -> 2000
    assert list(at_100["alt_prior"]) == list(source["alt_prior"])
    assert list(at_100["alt_posterior"]) == list(source["alt_posterior"].astype(float))
    assert list(at_100["cot_q1"]) == list(source["cot_q1"])
    # the kit has no ids, so its rows are 0..3; id = source id * 100 + the alpha's position
    assert list(at_100.iloc[:, 0]) == [6, 106, 206, 306] and list(at_100["source_id"]) == [0, 1, 2, 3]
    first = out[out["source_id"] == 0]
    assert list(first["alt_prior"])[:4] == [
        "speed of the bird =0.006m/s",
        "speed of the bird =0.06m/s",
        "speed of the bird =0.6m/s",
        "speed of the bird =1.2m/s",
    ]
    assert list(first["alt_posterior"]) == [
        0.02,
        0.2,
        2.0,
        4.0,
        100.0,
        1000.0,
        2000.0,
        4000.0,
        10000.0,
        14000.0,
    ]
    samples = load(path)  # the loader reads it back: integer ids, the counterfactual columns in context
    assert samples[16].question_id == "106" and samples[16].context["alt_posterior"] == 119.0


def test_rows_without_ground_truth_or_prior_value_are_refused(tmp_path):
    columns = ["id", "video_id", "video_type", "inference_type", "question", "ground_truth_prior"]
    base = [7, "v", "S2SX", "SS", "How long is the box in m?", "ruler calibre = 1 cm"]
    pd.DataFrame([base], columns=columns).to_csv(tmp_path / "no_gt.csv", index=False)
    with pytest.raises(
        DataError, match=r"no_gt\.csv: field 'ground_truth_posterior': no ground truth for question 7"
    ):
        write_counterfactual_set(tmp_path / "no_gt.csv", tmp_path / "out")
    bad = [*base[:-1], "ruler calibre is one cm", 3.0]
    pd.DataFrame([bad], columns=[*columns, "ground_truth_posterior"]).to_csv(
        tmp_path / "bad.csv", index=False
    )
    with pytest.raises(DataError, match=r"bad\.csv: field 'ground_truth_prior': no value after"):
        write_counterfactual_set(tmp_path / "bad.csv", tmp_path / "out")
