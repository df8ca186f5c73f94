"""DSI-Bench extraction, scorer and `kinegraph evaluate dsi` on hand-written CSVs (scores worked by hand)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from kinegraph.benchmarks.dsi.loader import RAWQA_PROMPT, build_prompt
from kinegraph.cli import app
from kinegraph.evaluators import dsi

OPTIONS = "A: moving left; B: moving right; C: moving forward; D: moving backward"
# Per row: cate, then the GT of std / reverse / hflip / reverse_hflip.
ROWS = [(0, "A", "B", "A", "B"), (2, "C", "D", "C", "D"), (2, "B", "B", "A", "A")]
# Model answers per variant ("" is an empty CSV cell: pandas reads NaN -> "nan" -> wrong).
ANSWERS = {
    "std": ["A", "C", "E"],  # right, right, wrong
    "reverse": ["B", "C", "b"],  # right, wrong, wrong (case-sensitive)
    "hflip": ["A", "C", "A"],  # right, right, right
    "reverse_hflip": ["", "D", " A "],  # wrong (NaN), right, right (stripped)
}
VARIANT_COLUMN = {"std": 1, "reverse": 2, "hflip": 3, "reverse_hflip": 4}


def write_dataset(root: Path) -> Path:
    for variant, col in VARIANT_COLUMN.items():
        rows = [
            {
                "cate": r[0],
                "relative_path": f"Synthetic/clip_{i}.mp4",
                "video_type": 0,
                "question": "How does the camera move?",
                "options": OPTIONS,
                "GT": r[col],
                "others": "",
            }
            for i, r in enumerate(ROWS)
        ]
        (root / "metadatas").mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows).to_csv(root / "metadatas" / f"{variant}.csv", index=False)
    return root


def write_outputs(root: Path, model: str = "qwen") -> Path:
    for variant, answers in ANSWERS.items():
        (root / variant).mkdir(parents=True, exist_ok=True)
        pd.DataFrame({"result_text": ["..."] * 3, "final_answer": answers}).to_csv(
            root / variant / f"{model}.csv", index=False
        )
    return root


def test_extraction_is_the_official_regex():
    assert dsi.extract_answer("reasoning <answer> c </answer>") == "C"
    assert dsi.extract_answer("<answer>E</answer>") is None  # only A-D
    assert dsi.extract_answer("The answer is B") is None
    assert dsi.final_answer("The answer is B") == "E"
    assert dsi.final_answer("<think>x</think><answer>D</answer>") == "D"


def test_prompt_is_official_text():
    prompt = build_prompt("How does the camera move?", OPTIONS)
    assert prompt.startswith("You are a vision-language expert.\n")
    assert "listed below. \nFor example" in prompt  # the trailing space of the official text
    assert prompt.endswith(
        "<answer>[A, B, C, or D]</answer>\n\nQuestion:\nHow does the camera move? " + OPTIONS
    )
    assert prompt == RAWQA_PROMPT + "\nQuestion:\nHow does the camera move? " + OPTIONS


def test_score_matches_hand_computed_values(tmp_path):
    data = write_dataset(tmp_path / "DSI")
    metrics = dsi.score_files(write_outputs(tmp_path / "outputs"), data, model="qwen")
    # sample-wise: row 0 (cate 0) right in 3 of 4 -> 0.75; rows 1 and 2 (cate 2) 3 + 2 of 8 -> 0.625;
    # overall 8 of 12.
    assert metrics["sample_wise"]["per_category"] == {"Obj:static cam": 0.75, "Cam:static scene": 0.625}
    assert metrics["sample_wise"]["overall"] == pytest.approx(8 / 12)
    assert metrics["sample_wise"]["n"] == 12
    # group-wise (>= 3 of 4): row 0 has 3, row 1 has 3, row 2 has 2 -> cate 0: 1/1, cate 2: 1/2, overall 2/3
    assert metrics["group_wise"]["per_category"] == {"Obj:static cam": 1.0, "Cam:static scene": 0.5}
    assert metrics["group_wise"]["overall"] == pytest.approx(2 / 3)
    # single variant: std right on rows 0, 1 -> cate 0 1.0, cate 2 1/2, overall 2/3; reverse only row 0
    assert metrics["single_variant"]["std"]["per_category"] == {
        "Obj:static cam": 1.0,
        "Cam:static scene": 0.5,
    }
    assert metrics["single_variant"]["reverse"]["overall"] == pytest.approx(1 / 3)
    assert metrics["single_variant"]["reverse_hflip"]["overall"] == pytest.approx(2 / 3)
    # all four right nowhere
    assert dsi.score_files(tmp_path / "outputs", data, "qwen", min_correct=4)["group_wise"]["overall"] == 0.0


def test_cli_evaluate_dsi_and_length_mismatch(tmp_path):
    data = write_dataset(tmp_path / "DSI")
    outputs = write_outputs(tmp_path / "outputs")
    result = CliRunner().invoke(app, ["evaluate", "dsi", str(outputs), "--data", str(data)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["group_wise"]["overall"] == pytest.approx(2 / 3)

    pd.DataFrame({"final_answer": ["A"]}).to_csv(outputs / "hflip" / "qwen.csv", index=False)
    result = CliRunner().invoke(app, ["evaluate", "dsi", str(outputs), "--data", str(data)])
    assert result.exit_code == 2
    assert "hflip/qwen.csv: 1 rows for 3 questions" in result.output
