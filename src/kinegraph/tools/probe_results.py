"""What the EgoDyn probes report: the answers and rounded signals of the VO, flow and TCogMap
measurements, as a prediction's trace and a model's tool call both carry them (pure, no I/O)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from kinegraph.tools.flow import FlowSignals, FlowThresholds
    from kinegraph.tools.vo import VOSignals, VOThresholds


def _rounded(values: Any, digits: int = 3) -> list[float]:
    return [round(float(v), digits) for v in values]


def _changed(thresholds: Any) -> dict[str, float]:
    """The thresholds that differ from the paper's (recorded in the trace; empty when none do)."""
    default = type(thresholds)()
    return {
        f.name: getattr(thresholds, f.name)
        for f in dataclasses.fields(thresholds)
        if getattr(thresholds, f.name) != getattr(default, f.name)
    }


def vo_measurement(frames: Any, thresholds: VOThresholds | None = None) -> dict[str, Any]:
    """EgoDyn's KLT + essential-matrix VO on the clip's frames."""
    from kinegraph.tools.vo import vo_signals

    return vo_from_signals(vo_signals(frames), thresholds)


def vo_from_signals(signals: VOSignals, thresholds: VOThresholds | None = None) -> dict[str, Any]:
    """The VO measurement (answers of the six probe questions, rounded signals) of computed VO signals;
    thresholds other than the paper's are named in the signals (`non_official_thresholds`)."""
    from kinegraph.tools.vo import vo_answers

    rounded: dict[str, Any] = {
        "yaw_deg": _rounded(signals.yaw_deg),
        "disp_px": _rounded(signals.disp_px, 2),
        "method": list(signals.method),
    }
    if thresholds is not None and _changed(thresholds):
        rounded["non_official_thresholds"] = _changed(thresholds)
    return {"answers": vo_answers(signals, thresholds), "signals": rounded}


def tcogmap_vo_measurement(frames: Any) -> dict[str, Any]:
    """Non-official: a TCogMap-style ego-motion summary of the clip from its VO signals (pixels, no
    metric scale; the `tcogmap_vo` probe). The `tcogmap` probe reads the measured metric trajectory."""
    from kinegraph.tools.vo import vo_signals

    return tcogmap_from_signals(vo_signals(frames))


def tcogmap_from_signals(signals: VOSignals) -> dict[str, Any]:
    """The summary phrase, its class and the VO figures it read; it answers no EgoDyn question itself."""
    from kinegraph.tools.vo_tcogmap import vo_motion_summary

    summary = vo_motion_summary(signals.yaw_deg, signals.disp_px)
    figures = {
        "net_yaw_deg": round(summary.net_yaw_deg, 2),
        "start_disp_px": round(summary.start_disp_px, 2),
        "end_disp_px": round(summary.end_disp_px, 2),
        "stationary_pairs": summary.stationary_pairs,
        "n_pairs": summary.n_pairs,
    }
    return {
        "answers": {},
        "summary": f"the ego vehicle is {summary.phrase}",
        "motion_class": summary.motion_class,
        "signals": figures,
    }


def flow_measurement(frames: Any, thresholds: FlowThresholds | None = None) -> dict[str, Any]:
    """EgoDyn's Farneback flow heuristic on the clip's frames."""
    from kinegraph.tools.flow import flow_signals

    return flow_result(flow_signals(frames), thresholds)


def flow_result(signals: FlowSignals, thresholds: FlowThresholds | None = None) -> dict[str, Any]:
    """The six answers of the flow mapping and the rounded signals, for a prediction's trace;
    thresholds other than the paper's are named in the signals (`non_official_thresholds`)."""
    from kinegraph.tools.flow import flow_answers

    rounded: dict[str, Any] = {k: _rounded(v) for k, v in signals._asdict().items()}
    if thresholds is not None and _changed(thresholds):
        rounded["non_official_thresholds"] = _changed(thresholds)
    return {"answers": flow_answers(signals, thresholds), "signals": rounded}


def gpu_flow_measurement(frames: Any, thresholds: FlowThresholds | None = None) -> dict[str, Any]:
    """The torch Horn-Schunck probe (CUDA when present) with the flow heuristic's mapping."""
    from kinegraph.tools.gpu_flow import gpu_flow_signals

    return flow_result(gpu_flow_signals([frames])[0], thresholds)


#: clip features (official kinematics of the measured trajectory) the `tcogmap` probe reports
TCOGMAP_FEATURES = (
    "mean_speed",
    "max_speed",
    "min_accel",
    "max_accel",
    "max_abs_yaw_rate",
    "max_lateral_accel",
)


def measured_tcogmap(measured: dict[str, Any], trajectory_summary: dict[str, Any]) -> dict[str, Any]:
    """TCogMap's Algorithm 1 (official rules, metric poses) on a measured trajectory: the `tcogmap`
    probe of `egodyn.tools`, with the metric figures it read."""
    from kinegraph.tools.tcogmap import classify_ego_motion, motion_phrase

    t = np.asarray(trajectory_summary["timestamps_s"])
    yaw = np.radians(trajectory_summary["yaw_deg"])
    translation = np.column_stack([trajectory_summary["x_m"], trajectory_summary["y_m"], np.zeros(len(t))])
    rotation = np.column_stack([np.cos(yaw / 2), np.zeros(len(t)), np.zeros(len(t)), np.sin(yaw / 2)])
    motion_class = classify_ego_motion(np.round(t * 1e6), translation, rotation)
    speed = trajectory_summary["speed_mps"]
    features = measured["signals"]["features"]
    figures = {
        "start_speed_mps": speed[0],
        "end_speed_mps": speed[-1],
        "net_heading_change_deg": round(float(trajectory_summary["yaw_deg"][-1]), 2),
        "distance_m": round(float(np.hypot(translation[-1, 0], translation[-1, 1])), 2),
        "mean_confidence": round(float(np.mean(trajectory_summary["confidence"])), 3),
    }
    figures.update({k: features[k] for k in TCOGMAP_FEATURES})
    return {
        "answers": {},
        "summary": f"the ego vehicle is {motion_phrase(motion_class)}",
        "motion_class": motion_class,
        "signals": figures,
        "camera": trajectory_summary["camera"],
    }
