"""EgoDyn-Bench's deterministic oracle: the labelling rules applied to clip kinematics.

Each question of the bank (passed in; EgoDyn's loader reads it) names a rule and its parameters;
the rules reproduce upstream `labeling_rules.py`, including where each looks a value up first: the
threshold/trend/event rules aggregate the array when one of that name exists, while the
classification rules prefer a stored feature of that name. `label_from_features` answers the
questions a clip's stored summary features alone determine (e.g. the 6 of selected_clips.json).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Protocol

import numpy as np

from kinegraph.tools.kinematics import ClipKinematics, summary_features

Label = str | float


class OracleQuestion(Protocol):
    """What the oracle reads of a bank question: its id, its labelling rule and the rule's parameters."""

    @property
    def question_id(self) -> str: ...
    @property
    def rule(self) -> str: ...
    @property
    def params(self) -> Mapping[str, Any]: ...


Bank = Mapping[str, OracleQuestion]


class RuleOutcome(NamedTuple):
    """A rule's answer and the kinematic evidence it was computed from."""

    label: Label
    evidence: dict[str, Any]


class _Undetermined(Exception):
    """The stored features do not determine this rule's input (features-only labelling)."""


# (array, aggregation) -> the stored feature holding that aggregate. The yaw-rate abs-max prefers
# `signed_max_yaw_rate` (clips_index.jsonl); selected_clips.json stores the same signed value under
# `max_abs_yaw_rate`.
_STORED_AGGREGATES: dict[tuple[str, str], tuple[str, ...]] = {
    ("accel", "min"): ("min_accel",),
    ("accel", "max"): ("max_accel",),
    ("accel", "mean"): ("mean_accel",),
    ("speed", "max"): ("max_speed",),
    ("speed", "mean"): ("mean_speed",),
    ("yaw_rate", "abs_max"): ("signed_max_yaw_rate", "max_abs_yaw_rate"),
    ("jerk", "max_abs"): ("max_abs_jerk",),
}


def aggregate(values: np.ndarray, how: str) -> float:
    """Upstream `aggregate_array`: mean|min|max|rms|abs_max (signed)|max_abs|pNN, NaN-safe."""
    arr = np.asarray(values, dtype=float)
    if len(arr) == 0:
        raise ValueError(f"cannot aggregate an empty array with {how!r}")
    if how == "mean":
        return float(np.nanmean(arr))
    if how == "min":
        return float(np.nanmin(arr))
    if how == "max":
        return float(np.nanmax(arr))
    if how == "rms":
        return float(np.sqrt(np.nanmean(arr**2)))
    if how == "abs_max":
        return float(arr[np.nanargmax(np.abs(arr))])
    if how == "max_abs":
        return float(np.nanmax(np.abs(arr)))
    if how.startswith("p") and how[1:].isdigit():
        return float(np.nanpercentile(arr, int(how[1:])))
    raise ValueError(f"unknown aggregation {how!r}")


class _Clip:
    """Where rules read values: stored features and/or arrays (features-only when `arrays` is None)."""

    def __init__(self, features: Mapping[str, float], arrays: Mapping[str, np.ndarray] | None) -> None:
        self.features = features
        self.arrays = arrays

    def array(self, name: str) -> np.ndarray:
        if self.arrays is None:
            raise _Undetermined(name)
        if name not in self.arrays:
            raise ValueError(f"required array {name!r} not found in clip arrays")
        return np.asarray(self.arrays[name])

    def value(self, name: str, how: str, *, features_first: bool) -> float:
        """A scalar: stored feature `name` or `aggregate(array name, how)`, in upstream's lookup order."""
        if self.arrays is None:
            if name in self.features:
                return float(self.features[name])
            for stored in _STORED_AGGREGATES.get((name, how), ()):
                if stored in self.features:
                    return float(self.features[stored])
            raise _Undetermined(name)
        in_arrays, in_features = name in self.arrays, name in self.features
        if in_features and (features_first or not in_arrays):
            return float(self.features[name])
        if in_arrays:
            return aggregate(self.arrays[name], how)
        raise ValueError(f"feature {name!r} not found in arrays or features")

    def lateral_accel(self, how: str) -> float:
        if self.arrays is None:
            if how == "max" and "max_lateral_accel" in self.features:
                return float(self.features["max_lateral_accel"])
            raise _Undetermined("lateral_accel")
        return aggregate(self.array("speed") * np.abs(self.array("yaw_rate")), how)


def _compare(value: float, operator: str, threshold: float) -> bool:
    if operator == "less_than":
        return value < threshold
    if operator == "greater_than":
        return value > threshold
    raise ValueError(f"unknown operator {operator!r}")


def _yaw_rate_sign_with_deadzone(clip: _Clip, p: Mapping[str, Any]) -> RuleOutcome:
    how = p.get("aggregation", "mean")
    if clip.arrays is not None:
        clip.array("yaw_rate")  # upstream always reads the array, never a stored feature
    value = clip.value("yaw_rate", how, features_first=False)
    if value > p["threshold_positive"]:
        label = p.get("positive_label", "left")
    elif value < p["threshold_negative"]:
        label = p.get("negative_label", "right")
    else:
        label = "straight"
    return RuleOutcome(label, {f"{how}_yaw_rate": value})


def _threshold_event(clip: _Clip, p: Mapping[str, Any]) -> RuleOutcome:
    how = p.get("aggregation", "min")
    value = clip.value(p["feature"], how, features_first=False)
    return RuleOutcome(
        "yes" if _compare(value, p["operator"], p["threshold"]) else "no", {f"{how}_{p['feature']}": value}
    )


def _or_threshold_event(clip: _Clip, p: Mapping[str, Any]) -> RuleOutcome:
    met, evidence = False, []
    for cond in p["conditions"]:
        how = cond.get("aggregation", "max")
        value = clip.value(cond["feature"], how, features_first=False)
        hit = _compare(value, cond["operator"], cond["threshold"])
        met = met or hit
        evidence.append({"feature": cond["feature"], f"{how}_{cond['feature']}": value, "met": hit})
    label = p.get("above_label", "yes") if met else p.get("below_label", "no")
    return RuleOutcome(label, {"conditions": evidence})


def _feature_conversion(clip: _Clip, p: Mapping[str, Any]) -> RuleOutcome:
    if p["feature"] not in clip.features:
        raise ValueError(f"feature {p['feature']!r} not found in clip features")
    value = float(clip.features[p["feature"]]) * p.get("conversion_factor", 1.0)
    if p.get("rounding") is not None:
        value = round(value, p["rounding"])
    return RuleOutcome(value, {"converted_value": value})


def _threshold_classification(clip: _Clip, p: Mapping[str, Any]) -> RuleOutcome:
    value = clip.value(p["feature"], p.get("aggregation", "mean"), features_first=True)
    label = p["below_label"] if value < p["threshold"] else p["above_label"]
    return RuleOutcome(label, {f"value_{p['feature']}": value})


def _trend_classification(clip: _Clip, p: Mapping[str, Any]) -> RuleOutcome:
    how = p.get("aggregation", "mean")
    value = clip.value(p["feature"], how, features_first=False)
    if value > p["threshold_positive"]:
        label = "accelerating"
    elif value < p["threshold_negative"]:
        label = "decelerating"
    else:
        label = "steady"
    return RuleOutcome(label, {f"{how}_{p['feature']}": value})


def _range_check(clip: _Clip, p: Mapping[str, Any]) -> RuleOutcome:
    value = clip.value(p["feature"], p.get("aggregation", "mean"), features_first=True)
    inside = p.get("min_value", -np.inf) <= value <= p.get("max_value", np.inf)
    label = p.get("in_range_label", "yes") if inside else p.get("out_range_label", "no")
    return RuleOutcome(label, {f"value_{p['feature']}": value})


def _dominant_axis_comparison(clip: _Clip, p: Mapping[str, Any]) -> RuleOutcome:
    how = p.get("aggregation", "rms")
    if p.get("lateral_method", "speed_times_yaw") != "speed_times_yaw":
        raise ValueError(f"unknown lateral_method {p['lateral_method']!r}")
    arrays = clip.arrays if clip.arrays is not None else {}
    name = "accel_long" if "accel_long" in arrays else p.get("longitudinal_feature", "accel")
    longitudinal = aggregate(np.abs(clip.array(name)), how)
    lateral = clip.lateral_accel(how)
    if longitudinal < p.get("deadzone_long", 0.2) and lateral < p.get("deadzone_lat", 0.2):
        label = "none"
    elif longitudinal < 1e-9:
        label = "lateral"
    else:
        label = "lateral" if lateral / longitudinal > p.get("ratio_threshold", 1.0) else "longitudinal"
    return RuleOutcome(label, {f"{how}_longitudinal_accel": longitudinal, f"{how}_lateral_accel": lateral})


def _lateral_accel_threshold(clip: _Clip, p: Mapping[str, Any]) -> RuleOutcome:
    how = p.get("aggregation", "max")
    value = clip.lateral_accel(how)
    return RuleOutcome("yes" if value > p["threshold"] else "no", {f"{how}_lateral_accel": value})


def _event_mask(clip: _Clip, cfg: Mapping[str, Any]) -> np.ndarray:
    arr, op, thr = clip.array(cfg["feature"]), cfg["operator"], cfg["threshold"]
    if op == "abs_greater_than":
        return np.abs(arr) > thr
    if op in ("less_than", "greater_than"):
        return arr < thr if op == "less_than" else arr > thr
    raise ValueError(f"unknown operator {op!r}")


def _sequential_event(clip: _Clip, p: Mapping[str, Any]) -> RuleOutcome:
    t = clip.array("timestamps")
    first = np.flatnonzero(_event_mask(clip, p["first_event"]))
    second = np.flatnonzero(_event_mask(clip, p["second_event"]))
    # "then" is strict: upstream floors the minimum gap at 1 µs.
    min_gap, max_gap = max(p.get("min_gap_seconds", 0.0), 1e-6), p.get("max_gap_seconds", np.inf)
    second_t = t[second]
    for i in first:
        k = np.searchsorted(second_t, t[i] + min_gap, side="left")
        if k < len(second_t) and second_t[k] <= t[i] + max_gap:
            return RuleOutcome(
                "yes", {"first_event_time": float(t[i]), "second_event_time": float(second_t[k])}
            )
    return RuleOutcome("no", {"first_event_count": len(first), "second_event_count": len(second)})


def peak_half(values: np.ndarray, p: Mapping[str, Any]) -> tuple[int, float, float, Label]:
    """A `peak_half_detection` question's (parameters `p`) peak index, peak and mean of non-empty
    `values`, and its label."""
    mid, peak = len(values) // 2, int(np.argmax(values))
    peak_value, mean_value = float(values[peak]), float(np.mean(values))
    ratio = p.get("prominence_ratio", 0.05)
    if abs(mean_value) > 1e-6:
        prominent = (peak_value - mean_value) / abs(mean_value) >= ratio
    else:
        prominent = peak_value >= ratio
    floor = p.get("min_peak_value")
    if not prominent or (floor is not None and peak_value < floor):
        return peak, peak_value, mean_value, "no_peak"
    return peak, peak_value, mean_value, "first_half" if peak < mid else "second_half"


def _peak_half_detection(clip: _Clip, p: Mapping[str, Any]) -> RuleOutcome:
    arr = clip.array(p["feature"])
    if len(arr) == 0:
        return RuleOutcome("no_peak", {"error": "empty_array"})
    peak, peak_value, mean_value, label = peak_half(arr, p)
    return RuleOutcome(label, {"peak_index": peak, "peak_value": peak_value, "mean_value": mean_value})


def _stop_and_go_detection(clip: _Clip, p: Mapping[str, Any]) -> RuleOutcome:
    speed = clip.array("speed")
    stop, go = p["stop_speed_threshold"], p["go_speed_threshold"]
    # Only a stop -> go transition counts as a cycle (a clip that merely comes to a stop does not).
    cycles, stopped = 0, bool(speed[0] < stop)
    for s in speed[1:]:
        if not stopped and s < stop:
            stopped = True
        elif stopped and s > go:
            cycles, stopped = cycles + 1, False
    return RuleOutcome("yes" if cycles >= p.get("min_stops", 1) else "no", {"stop_go_cycles": cycles})


def halves(values: np.ndarray, p: Mapping[str, Any]) -> tuple[float, float, Label]:
    """A `half_comparison` question's (parameters `p`) two half aggregates of `values` and its label."""
    how, mid = p.get("aggregation", "rms"), len(values) // 2
    first, second = abs(aggregate(values[:mid], how)), abs(aggregate(values[mid:], how))
    top = max(first, second)
    if top < 1e-9 or abs(first - second) / top < p.get("similarity_threshold", 0.2):
        return first, second, "similar"
    return first, second, "first_half" if first > second else "second_half"


def _half_comparison(clip: _Clip, p: Mapping[str, Any]) -> RuleOutcome:
    first, second, label = halves(clip.array(p["feature"]), p)
    how = p.get("aggregation", "rms")
    return RuleOutcome(label, {f"{how}_first_half": first, f"{how}_second_half": second})


def _multi_threshold_classification(clip: _Clip, p: Mapping[str, Any]) -> RuleOutcome:
    thresholds, labels = p["thresholds"], p["labels"]
    if len(labels) != len(thresholds) + 1:
        raise ValueError(
            f"expected {len(thresholds) + 1} labels for {len(thresholds)} thresholds, got {len(labels)}"
        )
    how = p.get("aggregation", "mean")
    value = clip.value(p["feature"], how, features_first=True)
    label = next((lab for thr, lab in zip(thresholds, labels, strict=False) if value < thr), labels[-1])
    return RuleOutcome(label, {f"{how}_{p['feature']}": value})


RULES: dict[str, Callable[[_Clip, Mapping[str, Any]], RuleOutcome]] = {
    "yaw_rate_sign_with_deadzone": _yaw_rate_sign_with_deadzone,
    "threshold_event": _threshold_event,
    "or_threshold_event": _or_threshold_event,
    "feature_conversion": _feature_conversion,
    "threshold_classification": _threshold_classification,
    "trend_classification": _trend_classification,
    "range_check": _range_check,
    "dominant_axis_comparison": _dominant_axis_comparison,
    "lateral_accel_threshold": _lateral_accel_threshold,
    "sequential_event": _sequential_event,
    "peak_half_detection": _peak_half_detection,
    "stop_and_go_detection": _stop_and_go_detection,
    "half_comparison": _half_comparison,
    "multi_threshold_classification": _multi_threshold_classification,
}


def _rule(question: OracleQuestion) -> Callable[[_Clip, Mapping[str, Any]], RuleOutcome]:
    if question.rule not in RULES:
        raise ValueError(f"question {question.question_id!r}: unknown rule {question.rule!r}")
    return RULES[question.rule]


def explain_clip(
    clip: ClipKinematics | Mapping[str, np.ndarray],
    bank: Bank,
    *,
    features: Mapping[str, float] | None = None,
) -> dict[str, RuleOutcome]:
    """Every question's label with its evidence, from kinematics or an npz-style array mapping.

    Without `features` the stored features are computed from the arrays (as upstream's extractor does).
    """
    if isinstance(clip, ClipKinematics):
        arrays: Mapping[str, np.ndarray] = clip.arrays()
        feats: Mapping[str, float] = clip.features if features is None else features
    else:
        arrays = clip
        missing = [k for k in ("speed", "accel", "yaw_rate", "jerk", "yaw") if k not in arrays]
        if features is None and missing:
            raise ValueError(f"clip arrays lack {missing}; pass `features` or the full npz arrays")
        feats = (
            features
            if features is not None
            else summary_features(
                *(np.asarray(arrays[k]) for k in ("speed", "accel", "yaw_rate", "jerk", "yaw"))
            )
        )
    view = _Clip(feats, arrays)
    return {qid: _rule(q)(view, q.params) for qid, q in bank.items()}


def label_clip(
    clip: ClipKinematics | Mapping[str, np.ndarray],
    bank: Bank,
    *,
    features: Mapping[str, float] | None = None,
) -> dict[str, Label]:
    """The oracle answer of every question of the bank (question_id -> label), in bank order."""
    return {qid: out.label for qid, out in explain_clip(clip, bank, features=features).items()}


def label_from_features(features: Mapping[str, float], bank: Bank) -> dict[str, Label]:
    """Labels of the questions that stored summary features alone determine; the others are left out.

    For selected_clips.json's six features (signed `max_abs_yaw_rate`, min_accel, mean_abs_jerk,
    mean_speed, total_heading_change, max_lateral_accel) that is six questions.
    """
    view = _Clip(features, None)
    labels: dict[str, Label] = {}
    for qid, q in bank.items():
        try:
            labels[qid] = _rule(q)(view, q.params).label
        except _Undetermined:
            continue
    return labels
