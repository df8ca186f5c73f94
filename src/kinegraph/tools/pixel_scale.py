"""The QuantiPhy calculator: one world prior fixes the pixel <-> world scale, every target follows from it.

2D path (spec quantiphy.md §4.1-4.2): gamma [m/px] = prior_SI / prior_px, target_SI = gamma * target_px,
with the pixel counterpart measured under the same differencing scheme as the target.
3D path (§4.6): pinhole camera with the principal point given and the focal length unknown. Positions are
back-projected with depths from the depth entries (Euclidean camera-object distances, the Blender
convention, converted to z-depth along each pixel's ray; or z-depths, the lab convention), linearly
inter/extrapolated in time. The focal length is the one at which the prior's object shows the prior's
value; targets are then measured in metres directly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple

import numpy as np
from scipy.optimize import brentq

from kinegraph.tools.finite_diff import (
    Scheme,
    acceleration_at,
    average_speed,
    path_length,
    seen_range,
    speed_at,
)
from kinegraph.tools.quantiphy_text import DepthEntry, Prior, Question
from kinegraph.tools.tracker import ObjectTrack
from kinegraph.tools.units import from_si, time_to_frame

DepthKind = Literal["euclidean", "z"]


class Answer(NamedTuple):
    """The calculator's answer with what it used: the scale (m/px in 2D, focal px in 3D) and fallbacks."""

    value: float
    unit: str
    value_si: float
    path: Literal["2d", "3d"]
    scale: float
    prior_measured: float
    notes: tuple[str, ...]

    def text(self) -> str:
        """The official answer format "[value] [unit]".

        Accelerations are written "m/s²": the official parser reads "9.8 m/s^2" as 2.0 (its unit regex
        treats "^" as an anchor, then strips letters and keeps the last number), but "9.8 m/s²" as 9.8.
        """
        return f"{self.value:.6g} {self.unit.replace('^2', '²')}"


class Quantity(NamedTuple):
    """What to measure: a prior's or a question's quantity, aspect, time, interval and flags."""

    kind: str
    aspect: str
    t_s: float | None
    interval_s: tuple[float, float] | None
    moment: str
    horizontal: bool

    @classmethod
    def of_prior(cls, prior: Prior) -> Quantity:
        return cls(prior.kind, prior.aspect, prior.t_s, None, "", False)

    @classmethod
    def of_question(cls, question: Question) -> Quantity:
        q = question
        return cls(q.kind, q.aspect, q.t_s, q.interval_s, q.moment, q.horizontal)


def _frame(t_s: float, fps: float, n_frames: int) -> int:
    index = time_to_frame(t_s, fps)
    if index >= n_frames:
        raise ValueError(f"t={t_s:g} s is frame {index}, after the last frame {n_frames - 1} at {fps:g} fps")
    return index


def _extent(extents: np.ndarray, aspect: str) -> np.ndarray:
    """The side a size word names, per frame, from (T, 2) (width, height) boxes: width = horizontal,
    height = vertical, thickness = the shorter side, length / diameter / size = the longer side."""
    if aspect == "width":
        return extents[:, 0]
    if aspect == "height":
        return extents[:, 1]
    if aspect == "thickness":
        return np.min(extents, axis=1)
    return np.max(extents, axis=1)  # length, diameter, size: the longest side


def _per_frame_median(values: Callable[[int], float], start: int, stop: int) -> float:
    got = []
    for i in range(start, stop + 1):
        try:
            got.append(values(i))
        except ValueError:
            continue
    if not got:
        raise ValueError(f"too few frames: nothing measurable between frames {start} and {stop}")
    return float(np.median(got))


def measure(
    quantity: Quantity,
    positions: Sequence[np.ndarray],
    extents: Sequence[np.ndarray],
    fps: float,
    scheme: Scheme = "centred",
    window: int = 9,
    average_mode: str = "path",
) -> float:
    """One quantity of one object (two for a distance) in track units: positions (T, D), extents (T, 2)."""
    need = 2 if quantity.kind == "distance" else 1
    if len(positions) != need:
        raise ValueError(f"a {quantity.kind} needs {need} object(s), got {len(positions)}")
    x = positions[0]
    n = len(x)
    if quantity.horizontal:
        positions = [p[:, :1] if p.shape[1] == 2 else p[:, [0, 2]] for p in positions]
        x = positions[0]
    if quantity.kind == "size":
        sizes = _extent(np.asarray(extents[0], dtype=float), quantity.aspect)
        if quantity.t_s is not None:
            value = float(sizes[_frame(quantity.t_s, fps, n)])
        else:
            value = float(np.nanmedian(sizes)) if np.isfinite(sizes).any() else math.nan
        if not math.isfinite(value):
            raise ValueError("the object's extent is never seen")
        return value
    first, last = seen_range(x)
    if quantity.interval_s is not None:
        first, last = (_frame(t, fps, n) for t in quantity.interval_s)
    if quantity.kind == "speed":
        if quantity.t_s is not None and quantity.interval_s is None:
            return speed_at(x, fps, _frame(quantity.t_s, fps, n), scheme, window)
        return average_speed(x, fps, first, last, average_mode)
    if quantity.kind == "acceleration":
        if quantity.t_s is not None and quantity.interval_s is None:
            return acceleration_at(x, fps, _frame(quantity.t_s, fps, n), scheme, window)
        return _per_frame_median(lambda i: acceleration_at(x, fps, i, scheme, window), first, last)
    if quantity.kind == "displacement":
        value = float(np.linalg.norm(x[last] - x[first]))
        if not math.isfinite(value):
            raise ValueError(f"the object is not seen at frame {first} or {last}")
        return value
    if quantity.kind == "path_length":
        return path_length(x, first, last)
    if quantity.kind == "distance":
        both = np.flatnonzero(np.all(np.isfinite(np.hstack(positions)), axis=1))
        if len(both) == 0:
            raise ValueError("the two objects are never seen together")
        index = (
            _frame(quantity.t_s, fps, n)
            if quantity.t_s is not None
            else (both[-1] if quantity.moment == "final" else both[0])
        )
        value = float(np.linalg.norm(positions[0][index] - positions[1][index]))
        if not math.isfinite(value):
            raise ValueError(f"both objects must be seen at frame {index}")
        return value
    raise ValueError(f"unknown quantity kind {quantity.kind!r}")


def _finish(
    question: Question, value_si: float, path: str, scale: float, prior_measured: float, notes: list[str]
) -> Answer:
    if not (math.isfinite(value_si) and value_si >= 0):
        raise ValueError(f"the computed value {value_si} is not a finite non-negative number")
    if question.unit_inferred:
        notes.append(f"the question names no unit: answered in {question.unit.symbol}")
    return Answer(
        from_si(value_si, question.unit),
        question.unit.symbol,
        value_si,
        path,
        scale,
        prior_measured,
        tuple(notes),  # type: ignore[arg-type]
    )


def scale_from_prior(prior: Prior, prior_px: float) -> float:
    """gamma in metres per pixel from the prior's SI value and its pixel counterpart (px, px/s, px/s^2)."""
    if not (math.isfinite(prior_px) and prior_px > 0):
        raise ValueError(f"the prior's pixel counterpart is {prior_px}: it cannot fix the scale")
    return prior.value_si / prior_px


def solve_2d(
    prior: Prior,
    question: Question,
    source: ObjectTrack,
    targets: Sequence[ObjectTrack],
    fps: float,
    *,
    scheme: Scheme = "centred",
    window: int = 9,
    average_mode: str = "path",
) -> Answer:
    """Fronto-parallel scene: one scale gamma for every object (same depth layer)."""
    args = (fps, scheme, window, average_mode)
    prior_px = measure(Quantity.of_prior(prior), [source.centre_px], [source.extent_px], *args)
    gamma = scale_from_prior(prior, prior_px)
    target_px = measure(
        Quantity.of_question(question), [t.centre_px for t in targets], [t.extent_px for t in targets], *args
    )
    notes = [f"prior value had no unit: read as {prior.unit.symbol}"] if prior.unit_inferred else []
    return _finish(question, gamma * target_px, "2d", gamma, prior_px, notes)


def z_from_distance(
    distance_m: float, u_px: float, v_px: float, focal_px: float, principal_point_px: tuple[float, float]
) -> float:
    """z-depth of a point at pixel (u, v) whose Euclidean distance to the camera centre is `distance_m`."""
    rho2 = (u_px - principal_point_px[0]) ** 2 + (v_px - principal_point_px[1]) ** 2
    return distance_m / math.sqrt(1.0 + rho2 / focal_px**2)


def backproject(
    centre_px: np.ndarray, z_m: np.ndarray, focal_px: float, principal_point_px: tuple[float, float]
) -> np.ndarray:
    """Camera-frame points (T, 3) in m (x right, y down, z forward) from pixels (T, 2) and z-depths (T,)."""
    cx, cy = principal_point_px
    x = (centre_px[:, 0] - cx) * z_m / focal_px
    y = (centre_px[:, 1] - cy) * z_m / focal_px
    return np.stack([x, y, z_m], axis=1)


def depth_profile(
    entries: Sequence[DepthEntry],
    track: ObjectTrack,
    fps: float,
    focal_px: float,
    principal_point_px: tuple[float, float],
    depth_kind: DepthKind = "euclidean",
) -> np.ndarray:
    """z-depth (T,) per frame: timed entries inter/extrapolated linearly in time; else constant."""
    n = len(track.centre_px)
    seen = np.flatnonzero(np.all(np.isfinite(track.centre_px), axis=1))
    if len(seen) == 0:
        raise ValueError("the object is never seen")
    times, depths = [], []
    for entry in entries:
        if entry.t_s is None:
            u, v = np.median(track.centre_px[seen], axis=0)
        else:
            k = time_to_frame(entry.t_s, fps)
            u, v = track.centre_px[seen[np.argmin(np.abs(seen - k))]]
        z = (
            entry.distance_m
            if depth_kind == "z"
            else z_from_distance(entry.distance_m, u, v, focal_px, principal_point_px)
        )
        times.append(entry.t_s)
        depths.append(z)
    timed = sorted({t for t in times if t is not None})
    if len(timed) < 2:
        return np.full(n, float(np.mean(depths)))
    z_at = np.array([np.mean([z for t, z in zip(times, depths, strict=True) if t == tt]) for tt in timed])
    t = np.arange(n) / fps
    z = np.interp(t, timed, z_at)
    before, after = t < timed[0], t > timed[-1]
    z[before] = z_at[0] + (t[before] - timed[0]) * (z_at[1] - z_at[0]) / (timed[1] - timed[0])
    z[after] = z_at[-1] + (t[after] - timed[-1]) * (z_at[-1] - z_at[-2]) / (timed[-1] - timed[-2])
    return z


def calibrate_focal(value_at: Callable[[float], float], target: float, reference_px: float) -> float:
    """The focal length f where `value_at(f)` equals `target`; the root nearest `reference_px` if several."""
    grid = reference_px * np.logspace(-2, 2.5, 181)
    values = np.array([value_at(f) - target for f in grid])
    roots = []
    for k in range(len(grid) - 1):
        a, b = values[k], values[k + 1]
        if np.isfinite(a) and np.isfinite(b) and (a == 0 or a * b < 0):
            lo, hi = math.log(grid[k]), math.log(grid[k + 1])
            roots.append(
                grid[k] if a == 0 else math.exp(brentq(lambda s: value_at(math.exp(s)) - target, lo, hi))
            )
    if not roots:
        raise ValueError(
            f"no focal length in {grid[0]:.3g}..{grid[-1]:.3g} px makes the prior's object show its value"
        )
    return min(roots, key=lambda f: abs(math.log(f / reference_px)))


def solve_3d(
    prior: Prior,
    question: Question,
    source: ObjectTrack,
    targets: Sequence[ObjectTrack],
    fps: float,
    *,
    source_depth: Sequence[DepthEntry],
    target_depths: Sequence[Sequence[DepthEntry]],
    principal_point_px: tuple[float, float],
    depth_kind: DepthKind = "euclidean",
    scheme: Scheme = "centred",
    window: int = 9,
    average_mode: str = "path",
) -> Answer:
    """Objects at different depths: calibrate the focal length on the prior's object, measure in metres.

    A target without depth entries is placed at the prior object's depth (documented fallback, noted).
    """
    if not source_depth:
        raise ValueError("field 'depth_info': the 3D path needs depth entries for the prior's object")
    if len(target_depths) != len(targets):
        raise ValueError(f"{len(targets)} targets but {len(target_depths)} depth lists")
    notes = [f"prior value had no unit: read as {prior.unit.symbol}"] if prior.unit_inferred else []
    args = (fps, scheme, window, average_mode)

    def metric(track: ObjectTrack, entries: Sequence[DepthEntry], f: float) -> tuple[np.ndarray, np.ndarray]:
        z = depth_profile(entries, track, fps, f, principal_point_px, depth_kind)
        return backproject(track.centre_px, z, f, principal_point_px), track.extent_px * (z / f)[:, None]

    def prior_value(f: float) -> float:
        pos, ext = metric(source, source_depth, f)
        return measure(Quantity.of_prior(prior), [pos], [ext], *args)

    reference = 2.0 * math.hypot(*principal_point_px)
    focal = calibrate_focal(prior_value, prior.value_si, reference)
    positions, extents = [], []
    for track, entries in zip(targets, target_depths, strict=True):
        if not entries:
            notes.append("a target has no depth entry: placed at the prior object's depth")
            z = depth_profile(source_depth, source, fps, focal, principal_point_px, depth_kind)
            pos, ext = (
                backproject(track.centre_px, z, focal, principal_point_px),
                track.extent_px * (z / focal)[:, None],
            )
        else:
            pos, ext = metric(track, entries, focal)
        positions.append(pos)
        extents.append(ext)
    value_si = measure(Quantity.of_question(question), positions, extents, *args)
    return _finish(question, value_si, "3d", focal, prior_value(focal), notes)
