"""QuantiPhy parse_number steps and quirks, MRA boundaries and aggregation, worked out by hand."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from kinegraph.errors import DataError
from kinegraph.evaluators.quantiphy import VSI_THRESHOLDS, mra, parse_number, results_csv, score_file


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # step 1: the whole answer is "value [unit]"
        ("2.5 cm", 2.5),
        ("9.8m/s²", 9.8),
        ("-3 m/s", 3.0),  # absolute value
        ("1e-3", 0.001),
        # step 2: the latest delimiter wins; ':' ends every word delimiter, so it is the one split on
        ("The length is about 12 meters. Final Answer: 7.5 m", 7.5),
        ("speed => 4.2", 4.2),
        ("Distance: 12 m (approx. 1e1 m)", 10.0),  # last number, exponent form survives unit removal
        # step 3: no unit conversion ("250 cm" for a question in metres is scored as 250)
        ("≈ 250 cm", 250.0),
        ("≈ 4 feet", 4.0),
        # quirk: '^' in the unit alternation is a regex anchor, so "m/s^2" never matches step 1; letters
        # are then stripped and the last number left is the exponent
        ("9.8 m/s^2", 2.0),
        # quirk: a thousands separator splits the number and the last piece is taken
        ("1,234 m", 234.0),
        # step 4 fallback: nothing after the delimiter, so the last number of the original text
        ("12.5 m is my estimate. Answer: unknown", 12.5),
    ],
)
def test_parse_number(text, expected):
    assert parse_number(text) == expected


@pytest.mark.parametrize("text", [None, "", "n/a", "Cannot be determined", float("nan")])
def test_parse_number_failures_are_nan(text):
    assert math.isnan(parse_number(text))


def test_mra_steps_and_float_boundaries():
    assert mra(10.0, 10.0) == 1.0
    assert mra(10.4, 10.0) == 1.0  # rel 0.04 < 0.05
    # rel = 0.1 exactly: 0.1 < 1 - 0.9 (= 0.09999999999999998) is False, 0.1 < 1 - 0.8 is True -> 8/10
    assert mra(11.0, 10.0) == 0.8
    # rel = 3/10 (0.29999999999999999) < 1 - 0.7 (0.30000000000000004): counts -> 7/10, not 6/10
    assert mra(13.0, 10.0) == 0.7
    assert mra(0.0, 10.0) == 0.0  # rel 1.0
    assert mra(25.0, 10.0) == 0.0  # over twice the truth
    assert mra(float("nan"), 10.0) == 0.0  # failure counts as a miss
    assert math.isnan(mra(5.0, 0.0)) and math.isnan(mra(5.0, float("nan")))
    # non-official VSI-Bench thresholds (0.5..0.95): rel 0.3 passes θ in {0.5, 0.55, 0.6, 0.65} and,
    # by the same float boundary as above, θ = 0.7 -> 5/10
    assert mra(13.0, 10.0, VSI_THRESHOLDS) == 0.5


def _write(path, rows, columns):
    pd.DataFrame(rows, columns=columns).to_csv(path, index=False)
    return path


COLUMNS = [
    "Unnamed: 0",
    "video_id",
    "video_source",
    "video_type",
    "inference_type",
    "question",
    "parsed_value",
]


@pytest.fixture
def small_set(tmp_path):
    gt = _write(
        tmp_path / "gt.csv",
        [[1, 10.0], [2, 10.0], [3, 10.0], [4, 10.0], [5, 10.0], [6, 10.0], [7, 10.0], [8, 10.0]],
        ["", "ground_truth_posterior"],
    )
    preds = _write(
        tmp_path / "merged_model-x.csv",
        [
            [1, "v1", "lab", "S2MC", "SS", "q1", 10.0],  # S2: 1.0
            [2, "v1", "lab", "S2MC", "SS", "q2", None],  # S2: blank -> invalid, 0.0
            [3, "v2", "lab", "V2MC", "DS", "q3", 11.0],  # D2: rel 0.1 -> 0.8
            [4, "v3", "lab", "S3MC", "SS", "q4", 0.0],  # S3: zero -> invalid, 0.0
            [5, "v3", "lab", "S3MC", "SS", "q5", 10.0],  # S3: 1.0
            [6, "v4", "lab", "A3MC", "DD", "q6", -10.0],  # D3: abs -> 1.0
            [7, "v4", "lab", "A3MC", "DD", "q7", "abc"],  # D3: non-numeric -> invalid, 0.0
            [8, "v5", "lab", "A3SS", "DD", "q8", 10.0],  # D3, simple background, single object: 1.0
        ],
        COLUMNS,
    )
    return preds, gt


def test_score_file_by_hand(small_set):
    preds, gt = small_set
    row = score_file(preds, gt)
    assert row["model"] == "model-x"  # 'merged_' and '.csv' dropped
    assert row["invalid_percentage"] == 37.5  # 3 of 8
    assert row["mra_S2"] == 0.5 and row["mra_D2"] == 0.8 and row["mra_S3"] == 0.5
    assert row["mra_D3"] == pytest.approx(2 / 3)
    assert row["mra_average"] == pytest.approx((0.5 + 0.8 + 0.5 + 2 / 3) / 4)
    # background C has all four categories: D3 there is (1 + 0) / 2
    assert row["mra_bg_C"] == pytest.approx((0.5 + 0.8 + 0.5 + 0.5) / 4)
    assert row["mra_bg_S"] is None and row["mra_obj_single"] is None  # only D3 present
    text = results_csv([row])
    assert text.splitlines()[0] == (
        "model,invalid_percentage,mra_S2,mra_D2,mra_S3,mra_D3,mra_average,"
        "mra_bg_C,mra_bg_S,mra_obj_multiple,mra_obj_single"
    )
    assert text.splitlines()[1].startswith("model-x,37.5,0.5,0.8,0.5,")


def test_ground_truth_comes_from_gt_file_by_id(small_set, tmp_path):
    preds, _ = small_set
    truth = [[1, 20.0]] + [[i, 10.0] for i in range(2, 9)]
    gt = _write(tmp_path / "gt2.csv", truth, ["", "ground_truth_posterior"])
    row = score_file(preds, gt)
    # id 1 now has truth 20 (pred 10 -> rel .5 -> 0.4), id 2 is blank (0): S2 = 0.2; the rest unchanged
    assert row["mra_S2"] == pytest.approx(0.2)
    assert row["mra_D2"] == 0.8


def test_prediction_ids_missing_from_the_ground_truth_are_refused(small_set, tmp_path):
    """Upstream would leave ids 3..8 out of every mean as NaN; a partial truth file is refused instead."""
    preds, _ = small_set
    gt = _write(tmp_path / "gt2.csv", [[1, 20.0], [2, 10.0]], ["", "ground_truth_posterior"])
    with pytest.raises(DataError, match=r"merged_model-x\.csv: field 'Unnamed: 0': question id 3 is not in"):
        score_file(preds, gt)


def test_bad_inputs_name_file_and_field(small_set, tmp_path):
    preds, gt = small_set
    missing = _write(tmp_path / "p.csv", [[1, "v", "lab", "S2MC", "SS", "q"]], COLUMNS[:-1])
    with pytest.raises(DataError, match=r"p\.csv.*'parsed_value'"):
        score_file(missing, gt)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(DataError, match="empty.csv: empty file"):
        score_file(empty, gt)
    bad_gt = _write(tmp_path / "badgt.csv", [[1, "ten"]], ["", "ground_truth_posterior"])
    with pytest.raises(DataError, match=r"badgt\.csv.*'ground_truth_posterior'.*'ten'"):
        score_file(preds, bad_gt)
    bad_code = _write(tmp_path / "code.csv", [[1, "v", "lab", "S", "SS", "q", 1.0]], COLUMNS)
    with pytest.raises(DataError, match=r"code\.csv.*'video_type'.*data row 1"):
        score_file(bad_code, gt)


@pytest.fixture
def counterfactual_set(tmp_path):
    """Two S2 answers of 100: one asked with the true prior, one with the prior x100 (upstream's v2)."""
    gt = _write(
        tmp_path / "cf_gt.csv",
        [[1, 1.0, 1.0, 1.0], [2, 1.0, 100, 100.0]],
        ["", "ground_truth_posterior", "counterfactual_factor", "alt_posterior"],
    )
    rows = [
        [1, "v1", "lab", "S2MC", "SS", "q1", 100.0, None],
        [2, "v1", "lab", "S2MC", "SS", "q2", 100.0, "alt_prior"],
    ]
    preds = _write(tmp_path / "cf_preds.csv", rows, [*COLUMNS, "prior_used"])
    return preds, gt


def test_counterfactual_rows_are_scored_on_alt_posterior(counterfactual_set, tmp_path):
    preds, gt = counterfactual_set
    # row 1 (true prior): 100 against 1 -> 0; row 2 (alt_prior): 100 against alpha*y = 100 -> 1
    assert score_file(preds, gt)["mra_S2"] == 0.5
    # without a ground-truth file the rows' own alt_posterior column is used
    own = pd.read_csv(preds).assign(ground_truth_posterior=1.0, alt_posterior=[None, 100.0])
    own.to_csv(tmp_path / "own.csv", index=False)
    assert score_file(tmp_path / "own.csv")["mra_S2"] == 0.5


def test_counterfactual_rows_without_alt_posterior_are_refused(counterfactual_set, tmp_path):
    preds, _ = counterfactual_set
    plain_gt = _write(tmp_path / "plain_gt.csv", [[1, 1.0], [2, 1.0]], ["", "ground_truth_posterior"])
    with pytest.raises(DataError, match=r"plain_gt\.csv: field 'alt_posterior': column missing"):
        score_file(preds, plain_gt)
    pd.read_csv(preds).assign(ground_truth_posterior=1.0).to_csv(tmp_path / "no_alt.csv", index=False)
    with pytest.raises(DataError, match=r"no_alt\.csv: field 'alt_posterior': column missing"):
        score_file(tmp_path / "no_alt.csv")
