"""Scripted ego maneuvers: seeded, physically plausible trajectories whose labels are known by design.

Each maneuver is a longitudinal-acceleration profile and a yaw-rate profile built from smooth
(raised-cosine) ramps, integrated on a 1 ms grid and sampled at the nuScenes CAM_FRONT sweep rate
(~12 Hz) with a few milliseconds of timestamp jitter. Magnitudes are drawn from each maneuver's
envelope, which is chosen so that EgoDyn's oracle (paper thresholds) and TCogMap (its own thresholds)
recover the labels in `expected_labels` / `expected_tcogmap` with margin.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

MANEUVERS: tuple[str, ...] = (
    "cruise",
    "accelerate",
    "brake",
    "emergency_stop",
    "stop_and_go",
    "left_turn",
    "right_turn",
    "lane_change_left",
    "lane_change_right",
    "standing",
)

# Maneuvers that begin / end at a standstill; a scene must chain them compatibly.
_STARTS_STOPPED = frozenset({"standing", "stop_and_go"})
_ENDS_STOPPED = frozenset({"standing", "emergency_stop"})

_FINE_DT_S = 0.001
_MAX_DECEL_MPS2 = 9.5  # about the tyre limit on dry asphalt
_SCENE_SPEED_CAP_MPS = 20.0  # accelerate only gently above this (it only matters in long scenes)
_JITTER_S = 0.004  # nuScenes sweeps drift a few ms around the nominal 12 Hz period


@dataclass(frozen=True, eq=False)
class EgoTrack:
    """A sampled ego trajectory in a world frame (x east, y north, yaw 0 along +x, +CCW).

    Arrays: `timestamps_s (T,)` strictly increasing, `xy_m (T, 2)`, `yaw_rad (T,)` unwrapped,
    `speed_mps (T,)`. `segments` lists `(maneuver, start_s, end_s)` for each scripted part.
    """

    timestamps_s: np.ndarray
    xy_m: np.ndarray
    yaw_rad: np.ndarray
    speed_mps: np.ndarray
    maneuver: str
    seed: int
    segments: tuple[tuple[str, float, float], ...] = field(default=())

    def __post_init__(self) -> None:
        n = len(self.timestamps_s)
        if self.xy_m.shape != (n, 2) or self.yaw_rad.shape != (n,) or self.speed_mps.shape != (n,):
            raise ValueError(
                f"EgoTrack arrays disagree: timestamps {self.timestamps_s.shape}, xy {self.xy_m.shape}, "
                f"yaw {self.yaw_rad.shape}, speed {self.speed_mps.shape}"
            )

    def rotation_wxyz(self) -> np.ndarray:
        """Ego rotations as nuScenes `ego_pose.rotation` quaternions [w, x, y, z], shape (T, 4)."""
        half = self.yaw_rad / 2.0
        zeros = np.zeros_like(half)
        return np.stack([np.cos(half), zeros, zeros, np.sin(half)], axis=1)


def _ramp(t: np.ndarray, start_s: float, duration_s: float) -> np.ndarray:
    """Raised-cosine step from 0 (before `start_s`) to 1 (after `start_s + duration_s`)."""
    u = np.clip((t - start_s) / duration_s, 0.0, 1.0)
    return 0.5 - 0.5 * np.cos(np.pi * u)


def _pulse(t: np.ndarray, on_s: float, ramp_on_s: float, off_s: float, ramp_off_s: float) -> np.ndarray:
    """Smooth trapezoid: rises over [on, on+ramp_on], holds, falls to 0 over [off-ramp_off, off]."""
    return _ramp(t, on_s, ramp_on_s) * (1.0 - _ramp(t, off_s - ramp_off_s, ramp_off_s))


@dataclass(frozen=True)
class _Profile:
    """Fine-grid inputs of one segment: start speed, longitudinal accel and yaw rate, each (F,)."""

    start_speed_mps: float
    accel_mps2: np.ndarray
    yaw_rate_radps: np.ndarray


def _profile(name: str, rng: np.random.Generator, t: np.ndarray, v0: float | None) -> _Profile:
    """Draw one maneuver's magnitudes from its envelope and build its profiles on the grid `t`."""
    dur = float(t[-1])
    zeros = np.zeros_like(t)

    def start(lo: float, hi: float) -> float:
        return float(rng.uniform(lo, hi)) if v0 is None else v0

    if name == "standing":
        return _Profile(0.0, zeros, zeros.copy())
    if name == "cruise":
        # Lane-keeping and throttle wander well inside every EgoDyn deadzone.
        accel = rng.uniform(0.02, 0.06) * np.sin(2 * np.pi * t / rng.uniform(2.5, 5.0) + rng.uniform(0, 6.3))
        yaw = rng.uniform(0.003, 0.012) * np.sin(2 * np.pi * t / rng.uniform(2.5, 5.0) + rng.uniform(0, 6.3))
        return _Profile(start(6.0, 12.0), accel, yaw)
    if name == "accelerate":
        # Mean accel >= ~0.7 (deadzone 0.25); peak speed 6-13.1 m/s stays "urban" (< 13.9).
        a = rng.uniform(1.0, 2.0)
        speed = start(5.0, 8.0)
        a = min(a, max(0.3, (_SCENE_SPEED_CAP_MPS - speed) / dur))  # chained accelerations level off
        return _Profile(speed, a * _pulse(t, rng.uniform(0.1, 0.4), rng.uniform(0.4, 0.7), dur, 0.3), zeros)
    if name == "brake":
        # Plateau decel 1.0-1.4 sits inside "moderate" (-1.59..-0.89) and above brake_then_turn's -1.5;
        # the speed never reaches 5 m/s.
        d = rng.uniform(1.0, 1.4)
        return _Profile(
            start(9.0, 13.0), -d * _pulse(t, rng.uniform(0.1, 0.4), rng.uniform(0.3, 0.5), dur, 0.3), zeros
        )
    if name == "emergency_stop":
        speed = start(7.0, 11.0)
        d, ramp_on, ramp_off = rng.uniform(6.0, 8.0), rng.uniform(0.15, 0.25), rng.uniform(0.1, 0.2)
        # The decel pulse removes slightly more than the start speed, so the car comes to rest late in
        # its gentle ramp-off; the stop lands at 2.2-2.5 s (scaled to the window), late enough that
        # TCogMap sees "Stopping", not "Stopped".
        braking_s = (speed + 0.05) / d + (ramp_on + ramp_off) / 2
        if braking_s > 0.85 * dur:  # a fast start (in a scene): brake harder, up to the tyre limit
            d = (speed + 0.05) / (0.85 * dur - (ramp_on + ramp_off) / 2)
            if d > _MAX_DECEL_MPS2:
                raise ValueError(f"emergency_stop cannot stop from {speed:.1f} m/s within {dur:.1f} s")
            braking_s = 0.85 * dur
        stop_s = max(dur * rng.uniform(0.733, 0.833), braking_s + 0.05)
        return _Profile(speed, -d * _pulse(t, stop_s - braking_s, ramp_on, stop_s, ramp_off), zeros)
    if name == "stop_and_go":
        # Waits 0.5-0.9 s at rest, then pulls away past go (2 m/s) while staying "slow" (< 5 m/s).
        a = rng.uniform(1.5, 2.0)
        return _Profile(0.0, a * _pulse(t, rng.uniform(0.5, 0.9), rng.uniform(0.3, 0.5), dur, 0.3), zeros)
    if name in ("left_turn", "right_turn"):
        # 0.4-0.55 rad/s at 6-9 m/s: lateral accel >= 2.4 (> 2.0), heading change ~0.8-1.2 rad.
        sign = 1.0 if name == "left_turn" else -1.0
        w = sign * rng.uniform(0.4, 0.55)
        ramp_on, ramp_off = rng.uniform(0.4, 0.6), rng.uniform(0.4, 0.6)
        off_s = dur - rng.uniform(0.1, 0.3)
        return _Profile(
            start(6.0, 9.0), zeros, w * _pulse(t, rng.uniform(0.1, 0.3), ramp_on, off_s, ramp_off)
        )
    if name in ("lane_change_left", "lane_change_right"):
        # One lane (3.0-3.7 m) in 2.4-2.8 s: peak v*omega = 2*pi*offset/T^2 >= 2.4, sum|dyaw| >= 0.33.
        sign = 1.0 if name == "lane_change_left" else -1.0
        speed, offset_m, lc_s = start(8.0, 13.0), rng.uniform(3.0, 3.7), dur * rng.uniform(0.8, 0.933)
        t0 = (dur - lc_s) / 2 + rng.uniform(-0.05, 0.05)
        # A sine doublet in yaw rate: heading rises and returns to zero, shifting the car by ~offset_m.
        phase = np.clip((t - t0) / lc_s, 0.0, 1.0)
        amp = 2 * np.pi * offset_m / (max(speed, 0.1) * lc_s**2)
        return _Profile(speed, zeros, sign * amp * np.sin(2 * np.pi * phase))
    raise ValueError(f"unknown maneuver {name!r}; expected one of {', '.join(MANEUVERS)}")


def _rng(name: str, seed: int, index: int = 0) -> np.random.Generator:
    if name not in MANEUVERS:
        raise ValueError(f"unknown maneuver {name!r}; expected one of {', '.join(MANEUVERS)}")
    return np.random.default_rng([seed, MANEUVERS.index(name), index])


def _sample_times(duration_s: float, rate_hz: float, rng: np.random.Generator) -> np.ndarray:
    """Sweep timestamps over [0, duration]: nominal period plus jitter, first at 0, last at most duration."""
    n = int(np.floor(duration_s * rate_hz + 1e-9)) + 1
    times = np.arange(n) / rate_hz + rng.uniform(-_JITTER_S, _JITTER_S, n)
    times[0] = 0.0
    return np.clip(times, 0.0, duration_s)


def _integrate(
    fine_t: np.ndarray, start_speed: float, accel: np.ndarray, yaw_rate: np.ndarray, yaw0: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Speed (clamped at 0: a stopped car stays stopped), yaw and position on the fine grid."""
    speed = np.empty_like(fine_t)
    speed[0] = start_speed
    for i in range(1, len(fine_t)):
        speed[i] = max(0.0, speed[i - 1] + 0.5 * (accel[i - 1] + accel[i]) * _FINE_DT_S)
    yaw = yaw0 + np.concatenate([[0.0], np.cumsum(0.5 * (yaw_rate[1:] + yaw_rate[:-1]) * _FINE_DT_S)])
    vel = np.stack([speed * np.cos(yaw), speed * np.sin(yaw)], axis=1)
    xy = np.concatenate([np.zeros((1, 2)), np.cumsum(0.5 * (vel[1:] + vel[:-1]) * _FINE_DT_S, axis=0)])
    return speed, yaw, xy


def _validate_window(duration_s: float, rate_hz: float) -> None:
    if not duration_s > 0.5:
        raise ValueError(f"duration_s must be > 0.5 s, got {duration_s}")
    if not rate_hz > 0:
        raise ValueError(f"rate_hz must be positive, got {rate_hz}")


def _script(
    names: Sequence[str],
    seed: int,
    segment_s: float,
    rate_hz: float,
    start_speed_mps: float | None,
    start_xy_m: tuple[float, float],
    start_yaw_rad: float,
) -> EgoTrack:
    _validate_window(segment_s, rate_hz)
    if not names:
        raise ValueError("a scripted track needs at least one maneuver")
    if start_speed_mps is not None and not start_speed_mps >= 0:
        raise ValueError(f"start_speed_mps must be >= 0, got {start_speed_mps}")
    seg_t = np.arange(int(round(segment_s / _FINE_DT_S)) + 1) * _FINE_DT_S
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    v_end, yaw_end, xy_end = start_speed_mps, float(start_yaw_rad), np.asarray(start_xy_m, dtype=float)
    for k, name in enumerate(names):
        rng = _rng(name, seed, k)
        if k > 0 and (name in _STARTS_STOPPED) != (names[k - 1] in _ENDS_STOPPED):
            need = "a stop (standing, emergency_stop)" if name in _STARTS_STOPPED else "a moving maneuver"
            raise ValueError(
                f"maneuver {k} {name!r} cannot follow {names[k - 1]!r}: it needs {need} before it"
            )
        prof = _profile(name, rng, seg_t, None if name in _STARTS_STOPPED else v_end)
        speed, yaw, xy = _integrate(
            seg_t, prof.start_speed_mps, prof.accel_mps2, prof.yaw_rate_radps, yaw_end
        )
        xy = xy + xy_end
        keep = slice(1, None) if k > 0 else slice(None)  # the join sample belongs to the previous part
        parts.append((speed[keep], yaw[keep], xy[keep]))
        v_end, yaw_end, xy_end = float(speed[-1]), float(yaw[-1]), xy[-1]
    fine_speed, fine_yaw, fine_xy = (np.concatenate(p) for p in zip(*parts, strict=True))
    fine_t = np.arange(len(fine_speed)) * _FINE_DT_S
    times = _sample_times(segment_s * len(names), rate_hz, np.random.default_rng([seed, len(MANEUVERS)]))
    return EgoTrack(
        timestamps_s=times,
        xy_m=np.stack([np.interp(times, fine_t, fine_xy[:, 0]), np.interp(times, fine_t, fine_xy[:, 1])], 1),
        yaw_rad=np.interp(times, fine_t, fine_yaw),
        speed_mps=np.interp(times, fine_t, fine_speed),
        maneuver="+".join(names),
        seed=seed,
        segments=tuple((name, k * segment_s, (k + 1) * segment_s) for k, name in enumerate(names)),
    )


def script_maneuver(
    name: str,
    seed: int,
    *,
    duration_s: float = 3.0,
    rate_hz: float = 12.0,
    start_speed_mps: float | None = None,
    start_xy_m: tuple[float, float] = (0.0, 0.0),
    start_yaw_rad: float = 0.0,
) -> EgoTrack:
    """One maneuver over a clip window of `duration_s`, sampled at `rate_hz` with sweep-like jitter.

    `start_speed_mps` overrides the drawn start speed of moving maneuvers (standing and stop_and_go
    always start at rest); the labels of `expected_labels` are guaranteed for the default envelope.
    """
    return _script([name], seed, duration_s, rate_hz, start_speed_mps, start_xy_m, start_yaw_rad)


def script_scene(
    maneuvers: Sequence[str],
    seed: int,
    *,
    segment_s: float = 3.0,
    rate_hz: float = 12.0,
    start_xy_m: tuple[float, float] = (0.0, 0.0),
    start_yaw_rad: float = 0.0,
) -> EgoTrack:
    """Consecutive maneuvers of `segment_s` each, joined with continuous position, heading and speed.

    A maneuver that starts at rest (standing, stop_and_go) must follow one that ends at rest
    (standing, emergency_stop), and a moving one must follow a moving one; otherwise ValueError.
    Each later maneuver starts at the speed the previous one ended with.
    """
    return _script(list(maneuvers), seed, segment_s, rate_hz, None, start_xy_m, start_yaw_rad)


# Labels each maneuver's envelope determines with margin (see the envelope comments in `_profile`);
# questions a maneuver leaves open (e.g. the sign of a lane change's peak yaw rate) are absent.
_STRAIGHT_MOVING = {
    "yaw_rate_turn_direction": "straight",
    "significant_heading_change": "no",
    "high_lateral_accel": "no",
    "brake_then_turn": "no",
    "stop_and_go": "no",
}
_EXPECTED: dict[str, dict[str, str]] = {
    "standing": {
        "yaw_rate_turn_direction": "straight",
        "braking_intensity": "none",
        "speed_regime": "stopped",
        "driving_smoothness": "smooth",
        "speed_trend": "steady",
        "mean_speed_low": "yes",
        "significant_heading_change": "no",
        "extreme_maneuver": "no",
        "dominant_motion_axis": "none",
        "high_lateral_accel": "no",
        "brake_then_turn": "no",
        "speed_peak_half": "no_peak",
        "stop_and_go": "no",
        "contrastive_sequence": "similar",
    },
    "cruise": {
        **_STRAIGHT_MOVING,
        "braking_intensity": "none",
        "speed_regime": "urban",
        "driving_smoothness": "smooth",
        "speed_trend": "steady",
        "mean_speed_low": "no",
        "extreme_maneuver": "no",
        "dominant_motion_axis": "none",
        "speed_peak_half": "no_peak",
    },
    "accelerate": {
        **_STRAIGHT_MOVING,
        "braking_intensity": "none",
        "speed_regime": "urban",
        "speed_trend": "accelerating",
        "mean_speed_low": "no",
        "extreme_maneuver": "no",
        "dominant_motion_axis": "longitudinal",
        "speed_peak_half": "second_half",
    },
    "brake": {
        **_STRAIGHT_MOVING,
        "braking_intensity": "moderate",
        "speed_regime": "urban",
        "driving_smoothness": "smooth",
        "speed_trend": "decelerating",
        "mean_speed_low": "no",
        "extreme_maneuver": "no",
        "dominant_motion_axis": "longitudinal",
        "speed_peak_half": "first_half",
    },
    "emergency_stop": {
        **_STRAIGHT_MOVING,
        "braking_intensity": "emergency",
        "speed_regime": "urban",
        "driving_smoothness": "aggressive",
        "speed_trend": "decelerating",
        "extreme_maneuver": "yes",
        "dominant_motion_axis": "longitudinal",
        "speed_peak_half": "first_half",
    },
    "stop_and_go": {
        "yaw_rate_turn_direction": "straight",
        "braking_intensity": "none",
        "speed_regime": "slow",
        "speed_trend": "accelerating",
        "mean_speed_low": "yes",
        "significant_heading_change": "no",
        "extreme_maneuver": "no",
        "dominant_motion_axis": "longitudinal",
        "high_lateral_accel": "no",
        "brake_then_turn": "no",
        "speed_peak_half": "second_half",
        "stop_and_go": "yes",
    },
}
for _side in ("left", "right"):
    _EXPECTED[f"{_side}_turn"] = {
        "yaw_rate_turn_direction": _side,
        "braking_intensity": "none",
        "speed_regime": "urban",
        "driving_smoothness": "smooth",
        "speed_trend": "steady",
        "mean_speed_low": "no",
        "significant_heading_change": "yes",
        "extreme_maneuver": "no",
        "dominant_motion_axis": "lateral",
        "high_lateral_accel": "yes",
        "brake_then_turn": "no",
        "speed_peak_half": "no_peak",
        "stop_and_go": "no",
    }
    _EXPECTED[f"lane_change_{_side}"] = {
        "braking_intensity": "none",
        "speed_regime": "urban",
        "driving_smoothness": "smooth",
        "speed_trend": "steady",
        "mean_speed_low": "no",
        "significant_heading_change": "yes",
        "extreme_maneuver": "no",
        "dominant_motion_axis": "lateral",
        "high_lateral_accel": "yes",
        "brake_then_turn": "no",
        "speed_peak_half": "no_peak",
        "stop_and_go": "no",
    }

# TCogMap's phrase for each maneuver. Lane changes read as straight driving: TCogMap rotates each
# finite-difference velocity into the ego frame of its end pose, and for a car whose heading follows
# its path the lateral parts of a lane change cancel (sum of -v*dyaw/2 telescopes to ~0), so its
# lane-change rule cannot fire; accelerating or braking without a stop has no TCogMap class either.
_TCOGMAP: dict[str, str] = {
    "standing": "stopped.",
    "cruise": "moving forward at a relatively constant speed.",
    "accelerate": "moving forward at a relatively constant speed.",
    "brake": "moving forward at a relatively constant speed.",
    "emergency_stop": "stopping.",
    "stop_and_go": "starting from a stop.",
    "left_turn": "turning to the left.",
    "right_turn": "turning to the right.",
    "lane_change_left": "moving forward at a relatively constant speed.",
    "lane_change_right": "moving forward at a relatively constant speed.",
}


def expected_labels(name: str) -> dict[str, str]:
    """EgoDyn oracle labels (question_id -> label) that the maneuver's envelope determines."""
    if name not in _EXPECTED:
        raise ValueError(f"unknown maneuver {name!r}; expected one of {', '.join(MANEUVERS)}")
    return dict(_EXPECTED[name])


def expected_tcogmap(name: str) -> str:
    """The TCogMap phrase (`The ego-vehicle is {phrase}`) the maneuver's envelope determines."""
    if name not in _TCOGMAP:
        raise ValueError(f"unknown maneuver {name!r}; expected one of {', '.join(MANEUVERS)}")
    return _TCOGMAP[name]
