"""EgoDyn-Bench's 14 questions: text, choices, category, temporal flag, labelling rule and thresholds.

Written from the paper (Table 6, App. A.2) and the upstream rule definitions; the official
`questions_template.yaml` can be passed to `load_question_bank` to override it (tests check they agree).
Choice order is the prompt order.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from kinegraph.errors import DataError

AnswerType = Literal["binary", "multiclass", "numeric"]


class EgoDynQuestion(BaseModel):
    """One question of the bank and the rule that labels it from clip kinematics."""

    question_id: str
    category: str
    text: str
    answer_type: AnswerType
    choices: list[str] | None
    temporal: bool = False
    rule: str
    params: dict[str, Any] = Field(default_factory=dict)


def _q(
    qid: str,
    category: str,
    text: str,
    answer_type: AnswerType,
    choices: list[str],
    rule: str,
    params: dict[str, Any],
    temporal: bool = False,
) -> EgoDynQuestion:
    return EgoDynQuestion(
        question_id=qid,
        category=category,
        text=text,
        answer_type=answer_type,
        choices=choices,
        temporal=temporal,
        rule=rule,
        params=params,
    )


DIRECT, COMPARATIVE = "direct_dynamics", "comparative"
YES_NO = ["yes", "no"]

QUESTION_BANK: tuple[EgoDynQuestion, ...] = (
    _q(
        "yaw_rate_turn_direction",
        DIRECT,
        "Is the vehicle turning left, right, or going straight?",
        "multiclass",
        ["left", "right", "straight"],
        "yaw_rate_sign_with_deadzone",
        {"threshold_positive": 0.04, "threshold_negative": -0.04, "aggregation": "abs_max"},
    ),
    _q(
        "braking_intensity",
        DIRECT,
        "What is the intensity level of the vehicle's braking?",
        "multiclass",
        ["emergency", "moderate", "low", "none"],
        "multi_threshold_classification",
        {
            "feature": "accel",
            "aggregation": "min",
            "thresholds": [-1.59, -0.89, -0.18],
            "labels": ["emergency", "moderate", "low", "none"],
        },
    ),
    _q(
        "speed_regime",
        DIRECT,
        "What is the vehicle's speed regime?",
        "multiclass",
        ["stopped", "slow", "urban", "highway"],
        "multi_threshold_classification",
        {
            "feature": "max_speed",
            "aggregation": "max",
            "thresholds": [0.5, 5.0, 13.9],
            "labels": ["stopped", "slow", "urban", "highway"],
        },
    ),
    _q(
        "driving_smoothness",
        DIRECT,
        "How smooth is the driving based on jerk?",
        "multiclass",
        ["smooth", "moderate", "aggressive"],
        "multi_threshold_classification",
        {
            "feature": "mean_abs_jerk",
            "aggregation": "mean",
            "thresholds": [1.25, 2.15],
            "labels": ["smooth", "moderate", "aggressive"],
        },
    ),
    _q(
        "speed_trend",
        DIRECT,
        "Is the vehicle accelerating, decelerating, or maintaining steady speed?",
        "multiclass",
        ["accelerating", "decelerating", "steady"],
        "trend_classification",
        {"feature": "accel", "threshold_positive": 0.25, "threshold_negative": -0.25, "aggregation": "mean"},
        temporal=True,
    ),
    _q(
        "mean_speed_low",
        DIRECT,
        "Is the mean speed below 5 m/s (18 km/h)?",
        "binary",
        YES_NO,
        "threshold_classification",
        {"feature": "mean_speed", "threshold": 5.0, "below_label": "yes", "above_label": "no"},
    ),
    _q(
        "significant_heading_change",
        DIRECT,
        "Does the vehicle change heading by more than 15 degrees?",
        "binary",
        YES_NO,
        "threshold_classification",
        {"feature": "total_heading_change", "threshold": 0.2618, "below_label": "no", "above_label": "yes"},
    ),
    _q(
        "extreme_maneuver",
        DIRECT,
        "Does the vehicle perform an extreme maneuver (high jerk or hard braking)?",
        "binary",
        YES_NO,
        "or_threshold_event",
        {
            "conditions": [
                {
                    "feature": "max_abs_jerk",
                    "threshold": 20.0,
                    "operator": "greater_than",
                    "aggregation": "max",
                },
                {"feature": "accel", "threshold": -3.924, "operator": "less_than", "aggregation": "min"},
            ]
        },
    ),
    _q(
        "dominant_motion_axis",
        DIRECT,
        "Is the vehicle's motion primarily longitudinal (speeding up/slowing down) or lateral (turning)?",
        "multiclass",
        ["longitudinal", "lateral", "none"],
        "dominant_axis_comparison",
        {
            "longitudinal_feature": "accel",
            "lateral_method": "speed_times_yaw",
            "aggregation": "rms",
            "ratio_threshold": 1.0,
        },
    ),
    _q(
        "high_lateral_accel",
        DIRECT,
        "Does the vehicle experience high lateral acceleration?",
        "binary",
        YES_NO,
        "lateral_accel_threshold",
        {"threshold": 2.0, "aggregation": "max"},
    ),
    _q(
        "brake_then_turn",
        DIRECT,
        "Does the vehicle brake and then turn (sequential maneuver)?",
        "binary",
        YES_NO,
        "sequential_event",
        {
            "first_event": {"feature": "accel", "operator": "less_than", "threshold": -1.5},
            "second_event": {"feature": "yaw_rate", "operator": "abs_greater_than", "threshold": 0.1},
            "min_gap_seconds": 0.0,
            "max_gap_seconds": 2.0,
        },
        temporal=True,
    ),
    _q(
        "speed_peak_half",
        COMPARATIVE,
        "Does the maximum speed occur in the first or second half of the sequence?",
        "multiclass",
        ["first_half", "second_half", "no_peak"],
        "peak_half_detection",
        {"feature": "speed"},
        temporal=True,
    ),
    _q(
        "stop_and_go",
        DIRECT,
        "Does the vehicle exhibit stop-and-go behavior?",
        "binary",
        YES_NO,
        "stop_and_go_detection",
        {"stop_speed_threshold": 0.5, "go_speed_threshold": 2.0, "min_stops": 1},
    ),
    _q(
        "contrastive_sequence",
        COMPARATIVE,
        "Comparing the first and second halves of the sequence, which half has more dynamic driving?",
        "multiclass",
        ["first_half", "second_half", "similar"],
        "half_comparison",
        {"feature": "accel", "aggregation": "rms", "similarity_threshold": 0.2},
        temporal=True,
    ),
)

# The six questions the geometric baselines (flow, VO) answer; the rest need metric scale.
VISION_BASELINE_QUESTIONS: tuple[str, ...] = (
    "yaw_rate_turn_direction",
    "speed_trend",
    "significant_heading_change",
    "high_lateral_accel",
    "brake_then_turn",
    "stop_and_go",
)


def default_question_bank() -> dict[str, EgoDynQuestion]:
    """The built-in bank keyed by question_id, in prompt order."""
    return {q.question_id: q for q in QUESTION_BANK}


def load_question_bank(yaml_path: str | Path | None = None) -> dict[str, EgoDynQuestion]:
    """The built-in bank, or one read from an upstream-format `questions_template.yaml`.

    As upstream, choices are lower-cased and `metadata.temporal` defaults to False.
    """
    if yaml_path is None:
        return default_question_bank()
    from kinegraph.yaml_files import read_yaml  # only for a template file: the bank needs no YAML parser

    path = Path(yaml_path)
    cfg = read_yaml(path)
    if not isinstance(cfg, dict) or not isinstance(cfg.get("questions"), list):
        raise DataError("expected a top-level 'questions' list", path=path, field="questions")
    bank: dict[str, EgoDynQuestion] = {}
    for i, q in enumerate(cfg["questions"]):
        for key in ("question_id", "answer_type"):
            if key not in q:
                raise DataError(f"question #{i + 1} has no {key!r}", path=path, field=key)
        rule = q.get("rule") or {}
        meta = q.get("metadata") or {}
        choices = [str(c).lower() for c in q["choices"]] if q.get("choices") else None
        bank[q["question_id"]] = EgoDynQuestion(
            question_id=q["question_id"],
            category=q.get("category", "unknown"),
            text=q.get("question_text", ""),
            answer_type=q["answer_type"],
            choices=choices,
            temporal=bool(meta.get("temporal", False)),
            rule=rule.get("name", ""),
            params=rule.get("params") or {},
        )
    return bank
