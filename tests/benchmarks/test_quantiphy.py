"""QuantiPhy loader on the official validation CSV and the other released layouts."""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest

from kinegraph.benchmarks.quantiphy.loader import codes, load, predictions_frame, write_submission
from kinegraph.errors import DataError
from kinegraph.evaluators.quantiphy import aggregate, score_frame
from kinegraph.types import Prediction


def test_validation_csv(golden):
    samples = load(golden / "quantiphy" / "quantiphy_validation.csv")
    assert len(samples) == 159 and len({s.id for s in samples}) == 159
    assert Counter(s.metadata["category"] for s in samples) == {"S2": 32, "D2": 37, "S3": 43, "D3": 47}
    assert Counter(s.metadata["video_source"] for s in samples) == {
        "simulation": 74,
        "lab": 38,
        "internet": 29,
        "segmentaion": 18,
    }
    boat = next(s for s in samples if s.group == "simulation_0009" and "boat" in s.question)
    assert boat.context["depth_info"].count("\n") == 3 and boat.answer == 3.62
    assert sum(1 for s in samples if s.context.get("depth_info")) == 90
    assert samples[0].id == "2161" and samples[0].context["ground_truth_prior"] == "ruler calibre = 1 cm"


def test_codes():
    assert codes("V3MX", "DS") == {
        "category": "D3",
        "prior_kind": "velocity",
        "dim": "3",
        "objects": "multiple",
        "background": "segmented",
        "target_kind": "static",
    }
    with pytest.raises(ValueError):
        codes("V3", "DS")


def test_parquet_aliases_and_template_ids(tmp_path):
    frame = pd.DataFrame(
        {
            "video_id": ["v1", "v2"],
            "video_type": ["S2SC", "A2MS"],
            "inference_type": ["SS", "DD"],
            "question": ["How long?", "How fast?"],
            "prior": ["ruler = 1 cm", "gravity acc = 9.8 m/s^2"],
            "fps": [30, 24],
        }
    )
    frame.to_parquet(tmp_path / "test_dataset.parquet")
    pd.DataFrame({"id": [501, 502], "answer": [None, None]}).to_csv(tmp_path / "template.csv", index=False)
    samples = load(tmp_path / "test_dataset.parquet", submission_template=tmp_path / "template.csv")
    assert [s.id for s in samples] == ["501", "502"] and samples[1].answer is None
    assert samples[1].context["ground_truth_prior"] == "gravity acc = 9.8 m/s^2"
    preds = [Prediction(sample_id="501", benchmark="quantiphy", answer=4.5)]
    out = write_submission(tmp_path / "template.csv", samples, preds, tmp_path / "submission.csv")
    assert pd.read_csv(out)["answer"].tolist()[0] == 4.5
    with pytest.raises(DataError, match="template has 2 rows, data has 1"):
        frame.iloc[:1].to_parquet(tmp_path / "one.parquet")
        load(tmp_path / "one.parquet", submission_template=tmp_path / "template.csv")


def test_exported_predictions_score_like_the_official_files(golden):
    samples = load(golden / "quantiphy" / "quantiphy_validation.csv")
    preds = [Prediction(sample_id=s.id, benchmark="quantiphy", answer=s.answer) for s in samples]
    frame = predictions_frame(samples, preds)
    row = aggregate(*score_frame(frame, {int(s.id): s.answer for s in samples}), "oracle")
    assert row["mra_average"] == 1.0 and row["invalid_percentage"] == 0


def test_missing_column_is_named(tmp_path):
    pd.DataFrame({"video_id": ["v"], "question": ["q"]}).to_csv(tmp_path / "x.csv", index=False)
    with pytest.raises(DataError, match=r"x.csv: field 'video_type'"):
        load(tmp_path / "x.csv")


def test_a_folder_loads_its_table(tmp_path):
    frame = pd.DataFrame(
        {
            "video_id": ["v1"],
            "video_type": ["S2SC"],
            "inference_type": ["SS"],
            "question": ["How long?"],
            "ground_truth_prior": ["ruler = 1 cm"],
            "fps": [30],
            "ground_truth_posterior": [2.0],
        }
    )
    frame.to_csv(tmp_path / "quantiphy_validation.csv")
    samples = load(tmp_path)
    assert len(samples) == 1 and samples[0].answer == 2.0 and samples[0].id == "0"
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match="no QuantiPhy table here"):
        load(empty)
