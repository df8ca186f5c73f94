"""STSBench scorer and `kinegraph evaluate stsbench` on hand-written predictions (scores worked by hand)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kinegraph.cli import app
from kinegraph.errors import DataError
from kinegraph.evaluators import stsbench

# Group membership comes from which actor blocks a record has; their content does not matter here.
RECORDS = [
    {"scenario": "Ego is accelerating", "ego": {}},
    {"scenario": "Ego is accelerating", "ego": {}},
    {"scenario": "Ego is stopping", "ego": {}},
    {"scenario": "Ego is following agent", "ego": {}, "other_agent": {}},
    {"scenario": "Agent is turning left", "agent": {}},
    {"scenario": "Agent is following agent", "agent": {}, "other_agent": {}},
    {"scenario": "Agent is walking", "agent": {}},
]
ANSWERS = [
    {"man_id": 0, "prediction": "A", "gt_letter": "A"},  # right
    {"man_id": 1, "prediction": "The answer is A", "gt_letter": "A"},  # "t" != "a": wrong
    {"man_id": 2, "prediction": "c) stop", "gt_letter": "C"},  # "c" == "c": right
    {"man_id": 3, "prediction": " B", "gt_letter": "B"},  # leading space: wrong
    {"man_id": 4, "prediction": "d", "gt_letter": "D"},  # right
    {"man_id": 5, "prediction": "E", "gt_letter": "E"},  # right
    {"man_id": 6, "prediction": "B", "gt_letter": "A"},  # wrong
    {"man_id": 6, "prediction": "A", "gt_letter": "A"},  # duplicate id: upstream takes the first
]
# ego: accelerating (1+0)/2 = 0.5, stopping 1 -> (0.5 + 1)/2 = 0.75;  ego_agent: 0;
# agent: turning left 1, walking 0 -> 0.5;  agent_agent: 1;  average (0.75 + 0 + 0.5 + 1)/4 = 0.5625
# (the micro accuracy would be 4/7 = 0.571: the macro layers matter).


def test_score_matches_hand_computed_macro_averages():
    metrics = stsbench.score(ANSWERS, RECORDS)
    assert metrics["ego"] == 0.75
    assert metrics["ego_agent"] == 0.0
    assert metrics["agent"] == 0.5
    assert metrics["agent_agent"] == 1.0
    assert metrics["average"] == 0.5625
    assert metrics["per_scenario"]["ego"] == {"Ego is accelerating": 0.5, "Ego is stopping": 1.0}
    assert metrics["n"] == {"ego": 3, "ego_agent": 1, "agent": 2, "agent_agent": 1}
    assert metrics["table"] == {
        "Ego": "75.00",
        "Ego Agent": "0.00",
        "Agent": "50.00",
        "Agent Agent": "100.00",
        "Average": "56.25",
    }


def test_empty_group_is_null_like_upstream_nan():
    metrics = stsbench.score(ANSWERS[:3], RECORDS[:3])
    assert metrics["ego"] == 0.75
    assert metrics["agent"] is None and metrics["average"] is None
    assert metrics["table"]["Average"] == "nan"


def test_missing_and_empty_predictions_stop_as_upstream_unless_opted_out():
    with pytest.raises(DataError, match="man_id=6 has no prediction"):
        stsbench.score(ANSWERS[:6], RECORDS)
    empty = [*ANSWERS[:6], {"man_id": 6, "prediction": "", "gt_letter": "A"}]
    with pytest.raises(DataError, match="field 'prediction': man_id=6: empty prediction"):
        stsbench.score(empty, RECORDS)
    # non-official: the empty answer counts as wrong, so agent stays (1 + 0)/2 = 0.5
    assert stsbench.score(empty, RECORDS, empty_as_wrong=True)["agent"] == 0.5


def test_cli_evaluate_stsbench(tmp_path):
    data, preds = tmp_path / "STSnu.json", tmp_path / "preds.json"
    data.write_text(json.dumps(RECORDS))
    preds.write_text(json.dumps([{**a, "gt_text": "x"} for a in ANSWERS]))
    result = CliRunner().invoke(app, ["evaluate", "stsbench", str(preds), "--data", str(data)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["average"] == 0.5625

    preds.write_text(json.dumps(ANSWERS[:2]))
    result = CliRunner().invoke(app, ["evaluate", "stsbench", str(preds), "--data", str(data)])
    assert result.exit_code == 2
    assert f"{preds}: field 'man_id': scenario man_id=2 has no prediction" in result.output
