"""Velocity and acceleration from sampled positions, under the differencing conventions QuantiPhy mixes.

A track is a float array (T, D) of positions (pixels or metres), one row per frame at `fps`; rows of NaN
mark frames where the object was not seen. Schemes (spec quantiphy.md §4):
- `forward`   v_i = (x_{i+1} - x_i) fps,        a_i = (x_{i+2} - 2 x_{i+1} + x_i) fps^2   (paper Sec 3.1)
- `backward`  v_i = (x_i - x_{i-1}) fps,        a_i = (x_i - 2 x_{i-1} + x_{i-2}) fps^2
- `centred`   v_i = (x_{i+1} - x_{i-1}) fps / 2, a_i = (x_{i+1} - 2 x_i + x_{i-1}) fps^2  (App D.2/D.3);
              at the first/last seen frame it uses the 3-point one-sided stencils, which are exact for
              constant acceleration like the centred ones.
- `speed_diff` Blender ground truth (App D.1.3): s_i = |x_i - x_{i-1}| fps, a_i = (s_i - s_{i-1}) fps.
- `quadratic_fit` (non-official) least-squares quadratic over `window` seen frames around i, for noisy
              tracks from a tracker; exact for constant acceleration.
Accelerations are magnitudes: the norm of the vector (lab convention) or |a_i| for `speed_diff`.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

Scheme = Literal["forward", "backward", "centred", "speed_diff", "quadratic_fit"]
SCHEMES: tuple[str, ...] = ("forward", "backward", "centred", "speed_diff", "quadratic_fit")


def _prepare(track: np.ndarray, fps: float, index: int) -> tuple[np.ndarray, np.ndarray]:
    if not (math.isfinite(fps) and fps > 0):
        raise ValueError(f"field 'fps': must be a positive finite number, got {fps!r}")
    x = np.asarray(track, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or len(x) == 0:
        raise ValueError(f"track must have shape (T, D) with T >= 1, got {np.shape(track)}")
    if not 0 <= index < len(x):
        raise ValueError(f"frame {index} is outside the track (frames 0..{len(x) - 1})")
    seen = np.all(np.isfinite(x), axis=1)
    if not seen[index]:
        raise ValueError(f"the object is not seen at frame {index}")
    return x, seen


def _have(seen: np.ndarray, *frames: int) -> bool:
    return all(0 <= f < len(seen) and seen[f] for f in frames)


def _need(seen: np.ndarray, scheme: str, index: int, *frames: int) -> None:
    if not _have(seen, *frames):
        raise ValueError(
            f"too few frames: the {scheme} difference at frame {index} needs frames {list(frames)}, "
            f"seen frames are {np.flatnonzero(seen).tolist()[:3]}... of {len(seen)}"
        )


def _fit_window(seen: np.ndarray, index: int, window: int) -> np.ndarray:
    """The `window` seen frames nearest to `index` (ties to the earlier), sorted."""
    frames = np.flatnonzero(seen)
    if len(frames) < 3:
        raise ValueError(f"too few frames: a quadratic fit needs 3 seen frames, have {len(frames)}")
    order = np.argsort(np.abs(frames - index), kind="stable")
    return np.sort(frames[order[: max(3, window)]])


def _quadratic(x: np.ndarray, frames: np.ndarray, fps: float, index: int) -> tuple[np.ndarray, np.ndarray]:
    tau = (frames - index) / fps
    design = np.stack([np.ones_like(tau), tau, tau**2], axis=1)
    coef, *_ = np.linalg.lstsq(design, x[frames], rcond=None)
    return coef[1], 2 * coef[2]


def velocity_at(
    track: np.ndarray, fps: float, index: int, scheme: Scheme = "centred", window: int = 9
) -> np.ndarray:
    """Velocity vector (D,) at frame `index`, in track units per second."""
    x, seen = _prepare(track, fps, index)
    i = index
    if scheme in ("backward", "speed_diff"):
        _need(seen, scheme, i, i - 1)
        return (x[i] - x[i - 1]) * fps
    if scheme == "forward":
        _need(seen, scheme, i, i + 1)
        return (x[i + 1] - x[i]) * fps
    if scheme == "centred":
        if _have(seen, i - 1, i + 1):
            return (x[i + 1] - x[i - 1]) * fps / 2
        if _have(seen, i + 1, i + 2):
            return (-3 * x[i] + 4 * x[i + 1] - x[i + 2]) * fps / 2
        _need(seen, scheme, i, i - 2, i - 1)
        return (3 * x[i] - 4 * x[i - 1] + x[i - 2]) * fps / 2
    if scheme == "quadratic_fit":
        return _quadratic(x, _fit_window(seen, i, window), fps, i)[0]
    raise ValueError(f"unknown scheme {scheme!r}; known: {', '.join(SCHEMES)}")


def speed_at(track: np.ndarray, fps: float, index: int, scheme: Scheme = "centred", window: int = 9) -> float:
    """Speed (norm of the velocity) at frame `index`."""
    return float(np.linalg.norm(velocity_at(track, fps, index, scheme, window)))


def acceleration_at(
    track: np.ndarray, fps: float, index: int, scheme: Scheme = "centred", window: int = 9
) -> float:
    """Acceleration magnitude at frame `index`, in track units per second squared."""
    x, seen = _prepare(track, fps, index)
    i = index
    if scheme == "speed_diff":
        _need(seen, scheme, i, i - 2, i - 1)
        s_i = np.linalg.norm(x[i] - x[i - 1]) * fps
        s_prev = np.linalg.norm(x[i - 1] - x[i - 2]) * fps
        return float(abs(s_i - s_prev) * fps)
    if scheme == "quadratic_fit":
        return float(np.linalg.norm(_quadratic(x, _fit_window(seen, i, window), fps, i)[1]))
    if scheme == "forward" or (scheme == "centred" and not _have(seen, i - 1, i + 1) and _have(seen, i + 2)):
        _need(seen, scheme, i, i + 1, i + 2)
        a = x[i + 2] - 2 * x[i + 1] + x[i]
    elif scheme == "backward" or (scheme == "centred" and not _have(seen, i - 1, i + 1)):
        _need(seen, scheme, i, i - 2, i - 1)
        a = x[i] - 2 * x[i - 1] + x[i - 2]
    elif scheme == "centred":
        a = x[i + 1] - 2 * x[i] + x[i - 1]
    else:
        raise ValueError(f"unknown scheme {scheme!r}; known: {', '.join(SCHEMES)}")
    return float(np.linalg.norm(a) * fps**2)


def seen_range(track: np.ndarray) -> tuple[int, int]:
    """First and last frame where the track has a position; ValueError if it has none."""
    frames = np.flatnonzero(
        np.all(np.isfinite(np.asarray(track, dtype=float).reshape(len(track), -1)), axis=1)
    )
    if len(frames) == 0:
        raise ValueError("the object is never seen")
    return int(frames[0]), int(frames[-1])


def path_length(track: np.ndarray, start: int, stop: int) -> float:
    """Sum of the straight steps between consecutive seen frames in [start, stop] (track units)."""
    x = np.asarray(track, dtype=float).reshape(len(track), -1)[start : stop + 1]
    x = x[np.all(np.isfinite(x), axis=1)]
    if len(x) < 2:
        raise ValueError(f"too few frames: a path between frames {start} and {stop} needs 2 seen frames")
    return float(np.linalg.norm(np.diff(x, axis=0), axis=1).sum())


def average_speed(track: np.ndarray, fps: float, start: int, stop: int, mode: str = "path") -> float:
    """Average speed over frames [start, stop]: path length (or |displacement|) over the elapsed time."""
    if not (math.isfinite(fps) and fps > 0):
        raise ValueError(f"field 'fps': must be a positive finite number, got {fps!r}")
    if stop <= start:
        raise ValueError(f"too few frames: an average over frames {start}..{stop} needs stop > start")
    if mode == "path":
        distance = path_length(track, start, stop)
    elif mode == "displacement":
        x = np.asarray(track, dtype=float).reshape(len(track), -1)
        distance = float(np.linalg.norm(x[stop] - x[start]))
        if not math.isfinite(distance):
            raise ValueError(f"the object is not seen at frame {start} or {stop}")
    else:
        raise ValueError(f"unknown average mode {mode!r}; known: path, displacement")
    return distance * fps / (stop - start)
