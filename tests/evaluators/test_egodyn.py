"""EgoDyn-Bench parser stages, metric arithmetic and consistency, against hand-worked expectations."""

from __future__ import annotations

import pytest

from kinegraph.benchmarks.egodyn.questions import load_question_bank
from kinegraph.evaluators.classification import accuracy, balanced_accuracy, confusion_matrix, macro_f1
from kinegraph.evaluators.egodyn import normalize_text, parse_answer, score
from kinegraph.evaluators.egodyn_consistency import compute_consistency

TURN = ["left", "right", "straight"]
TREND = ["accelerating", "decelerating", "steady"]
PEAK = ["first_half", "second_half", "no_peak"]
YES_NO = ["yes", "no"]


@pytest.mark.parametrize(
    ("text", "choices", "expected"),
    [
        # upstream tests/test_parsers.py examples
        ("The vehicle is turning left.", TURN, "left"),
        ("Maintaining a steady speed.", TREND, "steady"),
        ("There is no peak, the speed is constant.", PEAK, "no_peak"),
        ("I cannot determine this from the video.", YES_NO, None),
        # stage 0: empty / whitespace
        ("", TURN, None),
        ("  \n ", TURN, None),
        # stage 1: exact after normalisation (case, markdown, trailing punctuation, whitespace)
        ("**Straight**.", TURN, "straight"),
        ("`left`!", TURN, "left"),
        # stage 2: underscore/space equivalence on the full text
        ("First half", PEAK, "first_half"),
        # stage 3: the last line wins over a full-text match elsewhere
        ("It is clearly not decelerating.\nsteady", TREND, "steady"),
        ("Reasoning about the clip...\nSecond half.", PEAK, "second_half"),
        ("Some thoughts on accelerating\nFinal: the speed looks steady", TREND, "steady"),
        # stage 4: whole-word substring, longest choice first regardless of position (quirk kept)
        ("No, wait, yes", YES_NO, "yes"),
        ("It was accelerating then decelerating", TREND, "accelerating"),
        ("knowing nothing", YES_NO, None),
    ],
)
def test_parse_answer_stages(text, choices, expected):
    assert parse_answer(text, choices, "multiclass") == expected


def test_parse_answer_numeric_and_missing_choices():
    assert parse_answer("about 42.0 m", None, "numeric") == "42"
    assert parse_answer("-3.50", None, "numeric") == "-3.5"
    assert parse_answer("no number", None, "numeric") is None
    assert parse_answer("left", None, "multiclass") is None
    assert parse_answer(None, TURN, "multiclass") is None


def test_normalize_text():
    assert normalize_text("  **The   Answer**:  Left!!  ") == "the answer: left"


def test_metrics_by_hand():
    oracle, pred = ["a", "a", "b", "b"], ["a", "b", "b", "b"]
    assert accuracy(oracle, pred) == 0.75
    # recalls a = 1/2, b = 2/2
    assert balanced_accuracy(oracle, pred) == 0.75
    # F1 a: p=1, r=.5 -> 2/3 ; F1 b: p=2/3, r=1 -> 0.8
    assert macro_f1(oracle, pred) == pytest.approx((2 / 3 + 0.8) / 2)
    # a fixed label set: zero-support 'c' is skipped by balanced accuracy but scores F1 = 0
    assert balanced_accuracy(oracle, pred, ["a", "b", "c"]) == 0.75
    assert macro_f1(oracle, pred, ["a", "b", "c"]) == pytest.approx((2 / 3 + 0.8) / 3)
    assert confusion_matrix(oracle, pred, ["b", "a"]) == {"labels": ["b", "a"], "matrix": [[2, 0], [1, 1]]}
    assert accuracy([], []) == 0.0 and balanced_accuracy([], []) == 0.0 and macro_f1([], []) == 0.0
    with pytest.raises(ValueError):
        accuracy(["a"], [])


def test_consistency_by_hand():
    clips = {
        # R1 (heading yes -> not straight) and R3 (straight -> heading no) both apply, both violated
        "c1": {"yaw_rate_turn_direction": "straight", "significant_heading_change": "yes"},
        # R1 applies and holds
        "c2": {"yaw_rate_turn_direction": "left", "significant_heading_change": "yes"},
        # no rule applies
        "c3": {"speed_regime": "urban"},
    }
    out = compute_consistency(clips)
    assert (out["n_clips"], out["n_evaluable"], out["n_consistent"]) == (3, 2, 1)
    assert out["rate"] == 0.5 and out["rule_coverage"] == 0.2 and out["wemcr"] == 0.1
    assert out["mean_compliance"] == 0.5  # (0/2 + 1/1) / 2
    assert out["consistency_coverage"] == 0.6667 and out["mean_violations"] == 1.0
    assert out["per_rule"]["heading_change_implies_turning"] == {
        "n_applicable": 2,
        "n_violations": 1,
        "compliance": 0.5,
    }
    assert out["per_rule"]["straight_implies_no_heading_change"]["compliance"] == 0.0
    assert out["per_rule"]["stop_and_go_not_stopped"] == {
        "n_applicable": 0,
        "n_violations": 0,
        "compliance": 1.0,
    }


def _rec(clip, qid, oracle, answer, category="direct_dynamics"):
    return {
        "clip_id": clip,
        "question_id": qid,
        "category": category,
        "oracle_label": oracle,
        "model_answer": answer,
    }


def test_score_excludes_unparsed_and_unknown_as_upstream():
    records = [
        _rec("clip_1", "yaw_rate_turn_direction", "left", "left"),
        _rec("clip_1", "speed_trend", "steady", "I really cannot tell"),  # unparsed: excluded
        _rec("DEU_A-1", "yaw_rate_turn_direction", "right", "straight"),
        _rec("DEU_A-1", "not_a_question", "x", "x"),  # unknown question: counted unparsed
        {"question_id": "speed_trend", "oracle_label": "steady", "model_answer": "steady"},  # no clip_id
    ]
    out = score(records)
    assert (out["n_total"], out["n_parsed"], out["parsable_coverage"]) == (5, 2, 0.4)
    assert out["global"]["n"] == 2 and out["global"]["accuracy"] == 0.5
    assert sorted(out["per_source"]) == ["carla", "nuscenes"]
    assert out["per_source"]["nuscenes"]["accuracy"] == 1.0
    assert out["per_question"]["yaw_rate_turn_direction"]["confusion_matrix"]["matrix"] == [
        [1, 0, 0],
        [0, 0, 1],
        [0, 0, 0],
    ]
    assert out["temporal"]["n"] == 0


def test_penalize_unparsed_is_opt_in():
    records = [
        _rec("clip_1", "speed_trend", "steady", "steady"),
        _rec("clip_2", "speed_trend", "steady", "?"),
    ]
    assert score(records)["global"]["accuracy"] == 1.0
    penalized = score(records, penalize_unparsed=True)
    assert penalized["global"]["accuracy"] == 0.5 and penalized["n_parsed"] == 1


def test_builtin_bank_matches_official_template(golden):
    official = load_question_bank(golden / "egodyn" / "questions_template.yaml")
    assert list(official) == list(load_question_bank())
    for qid, question in load_question_bank().items():
        assert question == official[qid], qid
