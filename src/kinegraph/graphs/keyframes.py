"""A dashcam video as the keyframes and ego poses a keyframe benchmark's graphs read (TAD, STSBench).

Those graphs read frame files at the dataset's keyframe rate (nuScenes CAM_FRONT keyframes, 2 Hz) and
their ego poses. A door given a video instead samples it at the benchmark's `Card.keyframe_rate_hz`
(`video_keyframes`: the frame on screen at t0, t0 + 1/rate, ...) and writes those frames as files; ego
poses the request lacks are measured from every frame of the video with EgoDyn's ego-trajectory
estimator (`measured_poses`, as `egodyn.measured` measures a clip) or read off a given planar trajectory
(`trajectory_poses`), and interpolated at the keyframes' times. Planar poses lie on the ground (z = 0)
and turn about z by the yaw; the door records which inputs it made.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from kinegraph.errors import DataError
from kinegraph.media import clip_times_s, fps_indices, read_video, video_info, write_image
from kinegraph.types import Media, Sample


def video_keyframes(media: Media, rate_hz: float, out_dir: Path, max_frames: int) -> Media:
    """The video of `media` sampled at `rate_hz`, written as JPEG files under `out_dir`: frame media with
    the keyframes' times (seconds from the first). A `DataError` when the video yields more than
    `max_frames` keyframes or fewer than two."""
    if media.kind != "video" or media.video_path is None:
        raise ValueError("video_keyframes samples a video")
    n_total, header_fps = video_info(media.video_path)
    times = clip_times_s(media, n_total, header_fps)
    chosen = fps_indices(times, rate_hz)
    if len(chosen) > max_frames:
        raise DataError(
            f"{len(chosen)} keyframes at {rate_hz:g} Hz exceed the limit of {max_frames} frames per request "
            f"(send a clip of at most {(max_frames - 1) / rate_hz:g} s)",
            field="video",
        )
    if len(chosen) < 2:
        raise DataError(f"too short for keyframes at {rate_hz:g} Hz: {len(chosen)} keyframe", field="video")
    frames, _ = read_video(media.video_path, chosen)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for k, rgb in enumerate(frames):
        path = out_dir / f"keyframe_{k:04d}.jpg"
        write_image(path, rgb)
        paths.append(str(path))
    t0 = times[chosen[0]]
    return Media(kind="frames", frame_paths=paths, timestamps_s=[times[i] - t0 for i in chosen], fps=rate_hz)


def planar_poses(
    timestamps_s: Sequence[float], x_m: Sequence[float], y_m: Sequence[float], yaw_rad: Sequence[float]
) -> dict[str, list]:
    """Ground-plane poses (z = 0, rotation about z by the yaw) in the TAD loader's `ego_poses` form."""
    yaw = np.asarray(yaw_rad, dtype=float)
    return {
        "timestamp_us": [round(float(t) * 1e6) for t in timestamps_s],
        "translation_m": [[float(x), float(y), 0.0] for x, y in zip(x_m, y_m, strict=True)],
        "rotation_wxyz": [[float(np.cos(a / 2)), 0.0, 0.0, float(np.sin(a / 2))] for a in yaw],
    }


def poses_at(
    times_s: Sequence[float],
    track_times_s: Sequence[float],
    x_m: Sequence[float],
    y_m: Sequence[float],
    yaw_rad: Sequence[float],
    where: str,
) -> dict[str, list]:
    """Planar poses of a track interpolated at `times_s` (seconds on the track's clock); a `DataError`
    naming `where` when a time lies outside the track by more than half a keyframe interval."""
    track = np.asarray(track_times_s, dtype=float)
    times = np.asarray(times_s, dtype=float)
    slack = 0.5 * float(np.min(np.diff(times))) if len(times) > 1 else 0.0
    if len(track) < 2 or times[0] < track[0] - slack or times[-1] > track[-1] + slack:
        span = f"{track[0]:g}..{track[-1]:g} s" if len(track) else "no poses"
        raise DataError(f"covers {span}; the keyframes span {times[0]:g}..{times[-1]:g} s", field=where)
    yaw = np.unwrap(np.asarray(yaw_rad, dtype=float))
    return planar_poses(
        times.tolist(),
        np.interp(times, track, np.asarray(x_m, dtype=float)).tolist(),
        np.interp(times, track, np.asarray(y_m, dtype=float)).tolist(),
        np.interp(times, track, yaw).tolist(),
    )


def measured_poses(video: Media, keyframes: Media, sample_id: str) -> dict[str, list]:
    """Ego poses at the keyframes' times, measured from every frame of `video` (EgoDyn's estimator)."""
    from kinegraph.benchmarks.egodyn.measured_clip import measure_clip

    sample = Sample(id=sample_id, benchmark="keyframes", group=sample_id, question="", media=video)
    track = measure_clip(sample, {}, None)["measured"]["signals"]["trajectory"]
    t0 = track["timestamps_s"][0]
    times = [t0 + t for t in keyframes.timestamps_s or []]
    yaw_rad = np.radians(track["yaw_deg"])
    return poses_at(times, track["timestamps_s"], track["x_m"], track["y_m"], yaw_rad, "measured trajectory")
