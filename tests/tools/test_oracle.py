from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from kinegraph.benchmarks.egodyn.questions import load_question_bank
from kinegraph.benchmarks.synthetic.maneuvers import MANEUVERS, expected_labels, script_maneuver
from kinegraph.tools.kinematics import clip_kinematics, summary_features
from kinegraph.tools.oracle import RULES, aggregate, explain_clip, label_clip, label_from_features

BANK = load_question_bank()

T_S = np.round(np.arange(31) * 0.1, 10)


def _arrays(**channels: np.ndarray) -> dict[str, np.ndarray]:
    """31-sample npz-style arrays: zeros unless given."""
    arrays = {k: np.zeros(31) for k in ("speed", "accel", "yaw_rate", "jerk", "yaw")}
    arrays.update(timestamps=T_S.copy(), position=np.zeros((31, 2)))
    arrays.update({k: np.asarray(v, dtype=float) for k, v in channels.items()})
    return arrays


def _selected_clips(golden: Path) -> list[dict]:
    return json.loads((golden / "egodyn" / "selected_clips.json").read_text())


def test_stored_features_reproduce_every_determined_answer(golden: Path) -> None:
    clips = _selected_clips(golden)
    checked, agree, per_question = 0, 0, Counter()
    for clip in clips:
        for qid, label in label_from_features(clip["features"], BANK).items():
            checked += 1
            per_question[qid] += 1
            agree += label == clip["answers"][qid]
    assert (agree, checked) == (6000, 6000)
    assert set(per_question.values()) == {1000} and len(per_question) == 6


def test_official_template_bank_gives_the_same_answers(golden: Path) -> None:
    official = load_question_bank(golden / "egodyn" / "questions_template.yaml")
    for clip in _selected_clips(golden)[:200]:
        assert label_from_features(clip["features"], official) == label_from_features(clip["features"], BANK)


def test_builtin_bank_matches_the_official_template(golden: Path) -> None:
    official = load_question_bank(golden / "egodyn" / "questions_template.yaml")
    builtin = load_question_bank()
    assert list(builtin) == list(official)  # ids and prompt order
    for qid, q in builtin.items():
        o = official[qid]
        assert (q.text, q.choices, q.category, q.temporal, q.answer_type) == (
            o.text,
            o.choices,
            o.category,
            o.temporal,
            o.answer_type,
        ), qid
        assert (q.rule, q.params) == (o.rule, o.params), qid
        assert q.rule in RULES


def test_every_bank_rule_is_implemented() -> None:
    assert len(RULES) == 14
    assert {q.rule for q in load_question_bank().values()} <= set(RULES)


@pytest.mark.parametrize("name", MANEUVERS)
def test_scripted_maneuvers_come_out_as_scripted(name: str) -> None:
    agree = total = 0
    for seed in range(10):
        track = script_maneuver(name, seed)
        labels = label_clip(clip_kinematics(track.timestamps_s, track.xy_m, track.yaw_rad), BANK)
        for qid, want in expected_labels(name).items():
            total += 1
            agree += labels[qid] == want
    assert agree / total >= 0.95, f"{name}: {agree}/{total}"


def test_clips_index_features_use_the_signed_yaw_rate() -> None:
    features = {"max_abs_yaw_rate": 0.3, "signed_max_yaw_rate": -0.3, "min_accel": -0.5, "max_speed": 14.0}
    labels = label_from_features(features, BANK)
    assert labels["yaw_rate_turn_direction"] == "right"
    assert labels["braking_intensity"] == "low"
    assert labels["speed_regime"] == "highway"
    assert "stop_and_go" not in labels and "extreme_maneuver" not in labels  # need arrays / max_abs_jerk


@pytest.mark.parametrize(
    ("qid", "arrays", "features", "want"),
    [
        # strict '<' at every threshold boundary
        ("braking_intensity", {"accel": np.r_[-1.59, np.zeros(30)]}, {}, "moderate"),
        ("driving_smoothness", {}, {"mean_abs_jerk": 1.25}, "moderate"),
        ("significant_heading_change", {}, {"total_heading_change": 0.2618}, "yes"),
        ("yaw_rate_turn_direction", {"yaw_rate": np.r_[0.04, np.zeros(30)]}, {}, "straight"),
        # abs-max keeps the sign of the largest magnitude
        ("yaw_rate_turn_direction", {"yaw_rate": np.r_[0.2, -0.3, np.zeros(29)]}, {}, "right"),
        ("extreme_maneuver", {"accel": np.r_[-4.0, np.zeros(30)]}, {"max_abs_jerk": 1.0}, "yes"),
        ("extreme_maneuver", {}, {"max_abs_jerk": 20.0}, "no"),
        # only a stop -> go transition counts
        ("stop_and_go", {"speed": np.r_[np.full(15, 5.0), np.zeros(16)]}, {}, "no"),
        ("stop_and_go", {"speed": np.r_[np.zeros(15), np.full(16, 2.1)]}, {}, "yes"),
        ("stop_and_go", {"speed": np.r_[np.zeros(15), np.full(16, 2.0)]}, {}, "no"),
        # brake then turn: the turn must come strictly after a braking sample, within 2 s
        (
            "brake_then_turn",
            {
                "accel": np.r_[np.zeros(5), -2.0, np.zeros(25)],
                "yaw_rate": np.r_[np.zeros(5), 0.2, np.zeros(25)],
            },
            {},
            "no",
        ),
        (
            "brake_then_turn",
            {
                "accel": np.r_[np.zeros(5), -2.0, np.zeros(25)],
                "yaw_rate": np.r_[np.zeros(25), 0.2, np.zeros(5)],
            },
            {},
            "yes",
        ),
        (
            "brake_then_turn",
            {
                "accel": np.r_[np.zeros(5), -2.0, np.zeros(25)],
                "yaw_rate": np.r_[np.zeros(26), -0.2, np.zeros(4)],
            },
            {},
            "no",
        ),
        # the peak at index 15 (t = 1.5 s) is in the second half
        ("speed_peak_half", {"speed": np.r_[np.full(15, 5.0), 6.0, np.full(15, 5.0)]}, {}, "second_half"),
        ("speed_peak_half", {"speed": np.full(31, 5.0)}, {}, "no_peak"),
        ("speed_peak_half", {"speed": np.zeros(31)}, {}, "no_peak"),
        ("contrastive_sequence", {"accel": np.r_[np.full(15, 1.0), np.full(16, 0.85)]}, {}, "similar"),
        ("contrastive_sequence", {"accel": np.r_[np.full(15, 1.0), np.full(16, -0.7)]}, {}, "first_half"),
        (
            "dominant_motion_axis",
            {"accel": np.full(31, 0.1), "speed": np.full(31, 1.0), "yaw_rate": np.full(31, 0.1)},
            {},
            "none",
        ),
        (
            "dominant_motion_axis",
            {"accel": np.full(31, 0.5), "speed": np.full(31, 10.0), "yaw_rate": np.full(31, 0.06)},
            {},
            "lateral",
        ),
        ("dominant_motion_axis", {"speed": np.full(31, 10.0), "yaw_rate": np.full(31, 0.05)}, {}, "lateral"),
        (
            "high_lateral_accel",
            {"speed": np.full(31, 10.0), "yaw_rate": np.r_[-0.21, np.zeros(30)]},
            {},
            "yes",
        ),
        # classification rules prefer a stored feature over the array of the same name
        ("mean_speed_low", {"speed": np.full(31, 10.0)}, {"mean_speed": 4.0}, "yes"),
    ],
)
def test_rule_semantics(qid: str, arrays: dict, features: dict, want: str) -> None:
    clip = _arrays(**arrays)
    stored = summary_features(*(clip[k] for k in ("speed", "accel", "yaw_rate", "jerk", "yaw")))
    outcome = explain_clip(clip, BANK, features={**stored, **features})[qid]
    assert outcome.label == want, outcome.evidence


def test_labels_come_with_evidence_and_arrays_alone_suffice() -> None:
    arrays = _arrays(speed=np.full(31, 12.0), accel=np.linspace(0, -2.0, 31))
    outcomes = explain_clip(arrays, BANK)
    assert outcomes["braking_intensity"].label == "emergency"
    assert outcomes["braking_intensity"].evidence["min_accel"] == pytest.approx(-2.0)
    assert outcomes["speed_regime"].label == "urban"  # max_speed computed from the arrays
    assert list(label_clip(arrays, BANK)) == list(load_question_bank())


def test_aggregations_and_bad_input() -> None:
    values = np.array([1.0, -3.0, 2.0, np.nan])
    assert aggregate(values, "abs_max") == -3.0
    assert aggregate(values, "max_abs") == 3.0
    assert aggregate(values, "rms") == pytest.approx(np.sqrt(14 / 3))
    assert aggregate(np.arange(101.0), "p95") == pytest.approx(95.0)
    with pytest.raises(ValueError, match="unknown aggregation 'median'"):
        aggregate(values, "median")
    with pytest.raises(ValueError, match="empty"):
        aggregate(np.array([]), "mean")
    with pytest.raises(ValueError, match=r"lack \['jerk', 'yaw'\]"):
        label_clip({"speed": np.zeros(31), "accel": np.zeros(31), "yaw_rate": np.zeros(31)}, BANK)
    bank = load_question_bank()
    broken = {"speed_regime": bank["speed_regime"].model_copy(update={"rule": "guess"})}
    with pytest.raises(ValueError, match="'speed_regime': unknown rule 'guess'"):
        label_clip(_arrays(), broken)
