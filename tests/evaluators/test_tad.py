"""TAD scorer and `kinegraph evaluate tad` on hand-written predictions; expected scores worked by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kinegraph.cli import app
from kinegraph.errors import DataError
from kinegraph.evaluators import tad

EGO = "What is the motion of the ego vehicle in this video segment?"
BUS = "What is the motion of the bus in this video segment?"

GROUND_TRUTH = {
    "exact_answer_action": [
        {"idx": 0, "question": EGO, "answer": "Turn left"},
        {"idx": 1, "question": BUS, "answer": "Straight, constant speed"},
        {"idx": 2, "question": EGO, "answer": "Stopped"},
    ],
    "mc_action": [
        {"idx": 10, "question": EGO, "answer": "D"},
        {"idx": 11, "question": BUS, "answer": "A"},
        {"idx": 12, "question": BUS, "answer": "B"},
        {"idx": 13, "question": EGO, "answer": "C"},
    ],
    "action_duration": [
        {"idx": 20, "question": "Which action did the ego vehicle spend the most time doing?", "answer": "A"},
        {
            "idx": 21,
            "question": "Which action did the ego vehicle spend the least time doing?",
            "answer": "B",
        },
    ],
    "temp_ordering": [
        {"idx": 30, "question": "Order of motions for the ego vehicle?", "answer": "C"},
        {"idx": 31, "question": "Order of motions for the truck?", "answer": "A"},
    ],
    "temp_action_localize": [
        {"idx": 40, "question": "In which frames is the ego vehicle stopped?", "answer": [0, 1, 2, 3]},
        {"idx": 41, "question": "In which frames is the car turning left?", "answer": [5]},
    ],
    "relative_action_localize": [
        {"idx": 50, "question": "Which ego vehicle event happened earlier?", "answer": "B"},
        {"idx": 51, "question": "Which ego vehicle event happened later?", "answer": "A"},
    ],
    "temp_object_localize": [
        {"idx": 60, "question": "In which frames are there any trucks visible?", "answer": [1, 2]},
        {"idx": 61, "question": "In which frames are there any buses visible?", "answer": [3]},
    ],
}

PREDICTIONS = {
    # 0: "turn left." cleans to "turn left" (right); 1: the comma is stripped on both sides (right);
    # 2: missing (counts 0). all = 2/3; ego rows {0, 2} = 1/2; non-ego row {1} = 1/1.
    "exact_answer_action": [{"idx": 0, "pred": "turn left."}, {"idx": 1, "pred": "Straight constant speed"}],
    # 10 "d" == "D" lower-cased (right); 11 "N/A" wrong; 12 right and listed twice, so counted twice;
    # 13 "ERROR" wrong. all = 3/4; ego {10, 13} = 1/2; non-ego {11, 12} = 2/2.
    "mc_action": [
        {"idx": 10, "pred": "d"},
        {"idx": 11, "pred": "N/A"},
        {"idx": 12, "pred": "B"},
        {"idx": 12, "pred": "B"},
        {"idx": 13, "pred": "ERROR"},
    ],
    # 1 of 2 right = 1/2 (ego-only task: ego = 1/2, non-ego unscored).
    "action_duration": [{"idx": 20, "pred": "A"}, {"idx": 21, "pred": "C"}],
    # both right: all 1, ego {30} = 1, non-ego {31} = 1.
    "temp_ordering": [{"idx": 30, "pred": "C"}, {"idx": 31, "pred": "A"}],
    # 40: {2,3,4} vs {0,1,2,3}: |{2,3}| / |{0,1,2,3,4}| = 2/5 = 0.4; 41: scalar 5 vs [5] = 1.
    # all = (0.4 + 1) / 2 = 0.7; ego {40} = 0.4; non-ego {41} = 1.
    "temp_action_localize": [{"idx": 40, "pred": [2, 3, 4]}, {"idx": 41, "pred": 5}],
    # 50 "b" == "B" (right), 51 missing: 1/2.
    "relative_action_localize": [{"idx": 50, "pred": "b"}],
    # 60: strings "1","2" never equal ints 1,2: IoU 0 / 4 = 0; 61: {3,4} vs {3} = 1/2.
    # all = (0 + 0.5) / 2 = 0.25 (non-ego-only task).
    "temp_object_localize": [{"idx": 60, "pred": ["1", "2"]}, {"idx": 61, "pred": [3, 4]}],
}

# all:     (2/3 + 3/4 + 1/2 + 1 + 0.7 + 1/2 + 0.25) / 7 = 4.3666.../7 = 0.623809...
# ego:     (1/2 + 1/2 + 1/2 + 1 + 0.4 + 1/2) / 6 = 3.4/6 = 0.56666...
# non-ego: (1 + 1 + 1 + 1 + 0.25) / 5 = 4.25/5 = 0.85
EXPECTED = {
    "all": {
        "exact_answer_action": 2 / 3,
        "mc_action": 0.75,
        "action_duration": 0.5,
        "temp_ordering": 1.0,
        "temp_action_localize": 0.7,
        "relative_action_localize": 0.5,
        "temp_object_localize": 0.25,
        "average": 4.3666666666666667 / 7,
    },
    "ego": {
        "exact_answer_action": 0.5,
        "mc_action": 0.5,
        "action_duration": 0.5,
        "temp_ordering": 1.0,
        "temp_action_localize": 0.4,
        "relative_action_localize": 0.5,
        "average": 3.4 / 6,
    },
    "non-ego": {
        "exact_answer_action": 1.0,
        "mc_action": 1.0,
        "temp_ordering": 1.0,
        "temp_action_localize": 1.0,
        "temp_object_localize": 0.25,
        "average": 0.85,
    },
}


def assert_metrics_close(got, expected):
    assert set(got) == set(expected)
    for mode, scores in expected.items():
        assert set(got[mode]) == set(scores), mode
        for key, value in scores.items():
            assert got[mode][key] == pytest.approx(value, abs=1e-12), (mode, key)


def test_score_matches_hand_computed_values():
    assert_metrics_close(tad.score(PREDICTIONS, GROUND_TRUTH), EXPECTED)


def test_average_is_withheld_when_a_task_is_unscored():
    partial = {k: v for k, v in PREDICTIONS.items() if k != "temp_ordering"}
    metrics = tad.score(partial, GROUND_TRUTH, modes=["all"])
    assert "temp_ordering" not in metrics["all"]
    assert metrics["all"]["average"] is None


def test_empty_prediction_file_leaves_task_unscored_as_upstream():
    metrics = tad.score({"mc_action": []}, GROUND_TRUTH, modes=["all"])
    assert metrics["all"] == {"average": None}


def test_unhashable_localization_prediction_is_a_clear_error():
    with pytest.raises(DataError, match="temp_action_localize"):
        tad.score_task(
            "temp_action_localize", [{"idx": 40, "pred": [[1, 2]]}], GROUND_TRUTH["temp_action_localize"]
        )


def write_jsonl(path: Path, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def write_tad_dir(root: Path) -> Path:
    for task, rows in GROUND_TRUTH.items():
        write_jsonl(root / task / "train.jsonl", [{**r, "scene_token": "s1", "options": []} for r in rows])
    write_jsonl(root / "keysegments.jsonl", [{"scene_token": "s1", "keysegments": []}])
    return root


def test_cli_evaluate_tad_per_model_folders(tmp_path):
    data = write_tad_dir(tmp_path / "TAD")
    for task, rows in PREDICTIONS.items():
        write_jsonl(tmp_path / "preds" / "modelA" / f"{task}.jsonl", [{**r, "prompt": "p"} for r in rows])
    write_jsonl(tmp_path / "preds" / "modelB" / "mc_action.jsonl", [{"idx": 10, "pred": "D"}])
    result = CliRunner().invoke(app, ["evaluate", "tad", str(tmp_path / "preds"), "--data", str(data)])
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout)
    assert_metrics_close(metrics["modelA"], EXPECTED)
    # modelB answered one of the four MC questions, rightly: 1/4; non-ego has no prediction left.
    assert metrics["modelB"]["all"] == {"mc_action": 0.25, "average": None}
    assert metrics["modelB"]["non-ego"] == {"mc_action": 0.0, "average": None}


def test_cli_evaluate_tad_bad_line_is_one_line_error(tmp_path):
    data = write_tad_dir(tmp_path / "TAD")
    write_jsonl(tmp_path / "preds" / "mc_action.jsonl", [{"idx": 10, "pred": "D"}, {"pred": "A"}])
    result = CliRunner().invoke(app, ["evaluate", "tad", str(tmp_path / "preds"), "--data", str(data)])
    assert result.exit_code == 2
    assert "mc_action.jsonl:2: field 'idx': missing" in result.output
