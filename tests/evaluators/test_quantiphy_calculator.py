"""The calculator over a synthetic world (over 100 rows), scored by the official MRA scorer."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from kinegraph.errors import DataError
from kinegraph.evaluators.quantiphy import score_file
from kinegraph.evaluators.quantiphy_calculator import PREDICTION_COLUMNS, predict

CATEGORIES = ("mra_S2", "mra_D2", "mra_S3", "mra_D3")


@pytest.fixture(scope="module")
def scores(quantiphy_world, tmp_path_factory):
    out = tmp_path_factory.mktemp("predictions")
    gt = quantiphy_world / "quantiphy_validation.csv"
    return {
        source: (
            score_file(predict(quantiphy_world, source, out / f"{source}.csv"), gt),
            out / f"{source}.csv",
        )
        for source in ("exact", "tracker")
    }


def test_prediction_file_is_in_the_official_format(scores):
    _, path = scores["exact"]
    table = pd.read_csv(path)
    assert list(table.columns) == list(PREDICTION_COLUMNS)
    assert len(table) >= 100
    assert table["Unnamed: 0"].is_unique and table["error"].isna().all()


def test_exact_pixel_tracks_reach_the_oracle_ceiling(scores):
    result, _ = scores["exact"]
    assert result["invalid_percentage"] == 0
    assert all(result[c] >= 0.95 for c in CATEGORIES), result
    assert result["mra_average"] >= 0.95


def test_tracked_pixels_from_the_videos(scores):
    result, _ = scores["tracker"]
    assert all(result[c] >= 0.80 for c in CATEGORIES), result
    assert result["mra_average"] >= 0.80


@pytest.mark.slow
def test_an_unparseable_prior_fails_that_row_only(quantiphy_world, tmp_path):
    world = tmp_path / "world"
    shutil.copytree(quantiphy_world, world, ignore=shutil.ignore_patterns("*.mp4"))
    table = pd.read_csv(world / "quantiphy_validation.csv", keep_default_na=False)
    table.loc[0, "ground_truth_prior"] = "the ball is rather big"
    table.columns = ["" if c.startswith("Unnamed: 1") else c for c in table.columns]
    table.rename(columns={"Unnamed: 0": ""}).to_csv(world / "quantiphy_validation.csv", index=False)
    predictions = pd.read_csv(predict(world, "exact"))
    assert "ground_truth_prior" in predictions.loc[0, "error"]
    assert pd.isna(predictions.loc[0, "parsed_value"]) and pd.isna(predictions.loc[0, "raw_response"])
    assert predictions["error"].iloc[1:].isna().all()
    result = score_file(world / "calculator_exact.csv", world / "quantiphy_validation.csv")
    assert result["invalid_percentage"] == pytest.approx(100 / len(predictions))


def test_without_the_truth_sidecar(tmp_path):
    with pytest.raises(DataError, match="truth sidecar missing"):
        predict(tmp_path, "exact")
    with pytest.raises(ValueError, match="source must be"):
        predict(tmp_path, "oracle")  # type: ignore[arg-type]
