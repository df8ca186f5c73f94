"""Threshold recalibration of the vision probes on a calibration split (per-question alpha scaling)."""

from __future__ import annotations

import numpy as np
import pytest

from kinegraph.tools.flow import FlowSignals, FlowThresholds, flow_answers
from kinegraph.tools.probe_calibration import (
    ALPHA_GRID,
    FLOW_GROUPS,
    VO_GROUPS,
    balanced_accuracy,
    calibrate_thresholds,
    frequency_distance,
)
from kinegraph.tools.vo import VOSignals, VOThresholds, vo_answers

STEADY = {"speed_trend": "steady", "significant_heading_change": "no", "high_lateral_accel": "no"}
QUIET = STEADY | {"stop_and_go": "no", "brake_then_turn": "no"}


def _vo(yaw_deg: float, n_pairs: int = 9) -> VOSignals:
    return VOSignals(np.full(n_pairs, yaw_deg), np.full(n_pairs, 10.0), ("essential",) * n_pairs)


@pytest.fixture
def turn_split() -> tuple[list[VOSignals], list[dict[str, str]]]:
    """Turns at +-1 deg per pair, 'straight' clips drifting at +-0.2 deg per pair (above the paper's 0.03)."""
    yaws = [1.0, -1.0, 1.0, 0.2, -0.2, 0.2, -0.2]
    labels = ["left", "right", "left", "straight", "straight", "straight", "straight"]
    oracle = [{"yaw_rate_turn_direction": label} | QUIET for label in labels]
    return [_vo(y) for y in yaws], oracle


def test_metrics() -> None:
    assert balanced_accuracy(["a", "a", "b", "b"], ["a", "b", "b", "b"]) == pytest.approx(0.75)
    assert frequency_distance(["a", "a", "b", "b"], ["b", "b", "a", "a"]) == 0.0
    assert frequency_distance(["a", "a", "b", "b"], ["a", "a", "a", "c"]) == pytest.approx(0.5)


@pytest.mark.parametrize("criterion", ["frequency", "balanced_accuracy"])
def test_turn_deadzone_moves_between_drift_and_turns(turn_split, criterion) -> None:
    signals, oracle = turn_split
    assert [vo_answers(s)["yaw_rate_turn_direction"] for s in signals][3:] != ["straight"] * 4
    calibration = calibrate_thresholds(signals, oracle, vo_answers, VOThresholds(), VO_GROUPS, criterion)
    # straight needs 0.15 * alpha > 0.2 (peak gate), turns need 0.15 * alpha < 1.0: the grid point
    # nearest 1 inside (1.33, 6.67) is 10 ** 0.15
    assert calibration.alphas["yaw_rate_turn_direction"] == pytest.approx(10**0.15)
    assert calibration.thresholds.yaw_peak_deg == pytest.approx(0.15 * 10**0.15)
    answers = [vo_answers(s, calibration.thresholds)["yaw_rate_turn_direction"] for s in signals]
    assert answers == [row["yaw_rate_turn_direction"] for row in oracle]


def test_uninformative_questions_keep_the_papers_thresholds(turn_split) -> None:
    signals, oracle = turn_split
    calibration = calibrate_thresholds(signals, oracle, vo_answers, VOThresholds(), VO_GROUPS)
    assert calibration.alphas["stop_and_go"] == 1.0  # constant 10 px: never stopped, whatever alpha
    assert calibration.thresholds.stopped_px == VOThresholds().stopped_px


def test_frequency_criterion_ignores_which_clip_has_which_label(turn_split) -> None:
    signals, oracle = turn_split
    shuffled = [oracle[i] for i in (3, 4, 5, 0, 1, 2, 6)]
    a = calibrate_thresholds(signals, oracle, vo_answers, VOThresholds(), VO_GROUPS, "frequency")
    b = calibrate_thresholds(signals, shuffled, vo_answers, VOThresholds(), VO_GROUPS, "frequency")
    assert a.alphas == b.alphas


def test_flow_thresholds_calibrate_the_same_way() -> None:
    turn = [0.5, -0.5, 0.1, -0.1]
    signals = [FlowSignals(np.full(5, t), np.zeros(5), np.full(5, 2.0)) for t in turn]
    oracle = [{"yaw_rate_turn_direction": lab} | QUIET for lab in ("left", "right", "straight", "straight")]
    calibration = calibrate_thresholds(signals, oracle, flow_answers, FlowThresholds(), FLOW_GROUPS)
    assert 0.1 < calibration.thresholds.turn_px < 0.5
    assert min(ALPHA_GRID) <= calibration.alphas["yaw_rate_turn_direction"] <= max(ALPHA_GRID)


def test_bad_calls_raise(turn_split) -> None:
    signals, oracle = turn_split
    with pytest.raises(ValueError, match="equally many"):
        calibrate_thresholds(signals, oracle[:-1], vo_answers, VOThresholds(), VO_GROUPS)
    with pytest.raises(ValueError, match="no thresholds named"):
        calibrate_thresholds(signals, oracle, vo_answers, VOThresholds(), {"speed_trend": ("turn_px",)})
    with pytest.raises(ValueError, match="criterion"):
        calibrate_thresholds(signals, oracle, vo_answers, VOThresholds(), VO_GROUPS, "accuracy")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="grid"):
        calibrate_thresholds(signals, oracle, vo_answers, VOThresholds(), VO_GROUPS, grid=[])
