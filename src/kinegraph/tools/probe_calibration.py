"""Recalibrating the vision probes' thresholds on a calibration split, the way EgoDyn recalibrated TartanVO.

The paper keeps each baseline's signal -> answer mapping and moves only its thresholds, set from signal
statistics of a held-out calibration set of clips (App. B.2, "calibrated on 387 frame-pair signals
from 43 clips"), and sets oracle thresholds to hit target class frequencies (App. A.2, P25/P50/P75).
Here, per question, all thresholds that decide it are scaled by one factor alpha (as in the paper's
sensitivity protocol, App. C.1), chosen on a log grid over the calibration clips by one of two criteria:

- "frequency" (default): the predicted label frequencies closest (total variation) to the oracle's;
  only class frequencies of the split are used, never which clip has which label.
- "balanced_accuracy": the highest balanced accuracy of that question on the split (a supervised fit).

Ties go to the alpha nearest 1, so the paper's value stays when the split cannot tell. Non-official:
the defaults everywhere stay the paper's thresholds; calibrated ones are only used when passed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields, replace
from typing import Any, Literal, NamedTuple, TypeVar

import numpy as np

from kinegraph.tools.flow import FlowThresholds
from kinegraph.tools.vo import VOThresholds

Criterion = Literal["frequency", "balanced_accuracy"]
T = TypeVar("T", VOThresholds, FlowThresholds)

#: alpha grid: 0.1 .. 100, 20 steps per decade
ALPHA_GRID: tuple[float, ...] = tuple(float(a) for a in np.logspace(-1, 2, 61))

#: Which thresholds decide which question, in calibration order (a threshold shared by two questions
#: belongs to the first; brake-then-turn then reuses the calibrated turn deadzone).
VO_GROUPS: dict[str, tuple[str, ...]] = {
    "yaw_rate_turn_direction": ("yaw_deadzone_deg", "yaw_peak_deg"),
    "speed_trend": ("trend_px_per_pair",),
    "significant_heading_change": ("heading_deg",),
    "high_lateral_accel": ("lateral_deg",),
    "stop_and_go": ("stopped_px", "moving_px"),
    "brake_then_turn": ("brake_drop_fraction",),
}
FLOW_GROUPS: dict[str, tuple[str, ...]] = {
    "yaw_rate_turn_direction": ("turn_px",),
    "speed_trend": ("expansion_px",),
    "significant_heading_change": ("heading_px",),
    "high_lateral_accel": ("lateral_px",),
    "stop_and_go": ("stopped_px", "moving_px"),
}


class Calibration(NamedTuple):
    """Calibrated thresholds and the alpha chosen per question (1.0 = the paper's value)."""

    thresholds: Any
    alphas: dict[str, float]


def balanced_accuracy(truth: Sequence[str], predicted: Sequence[str]) -> float:
    """Mean recall over the labels present in `truth`."""
    recalls = []
    for label in set(truth):
        hits = [p == label for t, p in zip(truth, predicted, strict=True) if t == label]
        recalls.append(sum(hits) / len(hits))
    return float(np.mean(recalls))


def frequency_distance(truth: Sequence[str], predicted: Sequence[str]) -> float:
    """Total-variation distance between the label frequencies of two equally long label lists."""
    a, b = Counter(truth), Counter(predicted)
    return 0.5 * sum(abs(a[k] - b[k]) for k in set(a) | set(b)) / len(truth)


def _score(criterion: Criterion, truth: list[str], predicted: list[str]) -> float:
    if criterion == "frequency":
        return -frequency_distance(truth, predicted)
    return balanced_accuracy(truth, predicted)


def calibrate_thresholds(
    signals: Sequence[Any],
    oracle: Sequence[Mapping[str, str]],
    answer_fn: Callable[[Any, T], dict[str, str]],
    base: T,
    groups: Mapping[str, tuple[str, ...]],
    criterion: Criterion = "frequency",
    grid: Sequence[float] = ALPHA_GRID,
) -> Calibration:
    """Scale each question's thresholds of `base` by the alpha that best fits the calibration clips.

    `signals[i]` are clip i's probe signals, `oracle[i]` its oracle answers {question_id: label};
    `answer_fn(signals, thresholds)` is the probe's mapping (`vo_answers` or `flow_answers`).
    """
    if len(signals) != len(oracle) or not signals:
        raise ValueError(f"need equally many signals and oracle rows (>0), got {len(signals)}, {len(oracle)}")
    if criterion not in ("frequency", "balanced_accuracy"):
        raise ValueError(f"unknown criterion {criterion!r}")
    if not grid or min(grid) <= 0:
        raise ValueError("the alpha grid must hold positive values")
    known = {f.name for f in fields(base)}
    thresholds, alphas = base, {}
    for question, names in groups.items():
        unknown = set(names) - known
        if unknown:
            raise ValueError(f"{question}: no thresholds named {sorted(unknown)} in {type(base).__name__}")
        truth = [row[question] for row in oracle]
        keys = []
        for alpha in grid:
            trial = replace(thresholds, **{n: getattr(base, n) * alpha for n in names})
            predicted = [answer_fn(s, trial)[question] for s in signals]
            keys.append((_score(criterion, truth, predicted), -abs(float(np.log(alpha)))))
        alpha = grid[keys.index(max(keys))]
        alphas[question] = float(alpha)
        thresholds = replace(thresholds, **{n: getattr(base, n) * alpha for n in names})
    return Calibration(thresholds, alphas)
