"""Pieces shared by the EgoDyn vision probes (`flow`, `gpu_flow`, `vo`): clip validation and the
event logic their signal -> answer mappings have in common (upstream EgoDyn `baselines/`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: The six questions a vision-only probe can answer (EgoDyn's "functional subset").
PROBE_QUESTIONS: tuple[str, ...] = (
    "yaw_rate_turn_direction",
    "speed_trend",
    "significant_heading_change",
    "high_lateral_accel",
    "brake_then_turn",
    "stop_and_go",
)

#: Upstream answers "no" to stop_and_go and brake_then_turn when a clip gives fewer frame pairs than this.
MIN_PAIRS_FOR_EVENTS = 3


def as_clip(frames: np.ndarray | Sequence[np.ndarray]) -> np.ndarray:
    """Check and stack a clip of RGB uint8 frames into one (T, H, W, 3) array.

    Raises ValueError for fewer than 2 frames, frames of different shapes, a non-RGB layout or a
    non-uint8 dtype: upstream skips such clips, it never scores them.
    """
    if isinstance(frames, np.ndarray):
        clip = frames
    else:
        frames = list(frames)
        shapes = {np.shape(f) for f in frames}
        if len(shapes) > 1:
            raise ValueError(f"frames must all have one shape, got {sorted(shapes)}")
        clip = np.stack(frames) if frames else np.zeros((0, 0, 0, 3), np.uint8)
    if clip.ndim != 4 or clip.shape[-1] != 3:
        raise ValueError(f"frames must be RGB with shape (T, H, W, 3), got {clip.shape}")
    if clip.dtype != np.uint8:
        raise ValueError(f"frames must be uint8, got {clip.dtype}")
    if clip.shape[0] < 2:
        raise ValueError(f"need at least 2 frames for one frame pair, got {clip.shape[0]}")
    if clip.shape[1] < 8 or clip.shape[2] < 8:
        raise ValueError(f"frames of {clip.shape[2]}x{clip.shape[1]} px are too small to measure motion")
    return clip


def stop_go_cycles(signal: np.ndarray, stopped_below: float, moving_above: float) -> int:
    """Stop -> go cycles of a per-pair motion signal (P,): the oracle's state machine on a pixel proxy.

    A pair below `stopped_below` marks "stopped"; a later pair above `moving_above` closes one cycle.
    """
    was_stopped = bool(signal[0] < stopped_below)
    cycles = 0
    for value in signal[1:]:
        if not was_stopped and value < stopped_below:
            was_stopped = True
        elif was_stopped and value > moving_above:
            cycles += 1
            was_stopped = False
    return cycles


def event_then_event(first: np.ndarray, second: np.ndarray) -> bool:
    """True when some pair flagged in `first` (P,) bool is followed by a later pair flagged in `second`."""
    first_idx = np.flatnonzero(first)
    second_idx = np.flatnonzero(second)
    return bool(first_idx.size and second_idx.size and first_idx[0] < second_idx[-1])


def yes_no(flag: bool) -> str:
    """EgoDyn's binary answer strings."""
    return "yes" if flag else "no"


def three_way(value: float, deadzone: float, above: str, below: str, inside: str) -> str:
    """`above` if value > deadzone, `below` if value < -deadzone, else `inside` (upstream's strict tests)."""
    if value > deadzone:
        return above
    if value < -deadzone:
        return below
    return inside
