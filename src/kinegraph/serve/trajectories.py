"""The ego motion of a request's clip in the form each family's graphs read, given or measured.

EgoDyn graphs read the clip kinematics (an npz of arrays plus the clip features); TAD and STSBench graphs
read ego poses (nuScenes' timestamps, translations and quaternions). A request gives a planar
`trajectory`, `ego_poses`, or a nuScenes scene under the data root; where a graph needs one and the
request has none, the trajectory is measured from the frames (`benchmarks.egodyn.measured_clip`, the
estimator of `egodyn.measured`) and the response says so.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from kinegraph.errors import DataError
from kinegraph.graphs.keyframes import measured_poses, planar_poses, poses_at, video_keyframes
from kinegraph.jsonfiles import read_descriptor_text
from kinegraph.media import clip_times_s
from kinegraph.paths import copy_under, file_identity, open_under
from kinegraph.serve.errors import ServeError
from kinegraph.serve.inputs import invalid
from kinegraph.serve.schemas import EgoPoses, QARequest, Trajectory
from kinegraph.types import Media, Sample


def kinematics_context(timestamps_s: Any, xy_m: Any, yaw_rad: Any, workdir: Path, where: str) -> dict:
    """EgoDyn's clip kinematics from planar poses: the npz arrays file and the clip features."""
    from kinegraph.tools.kinematics import clip_kinematics

    try:
        kinematics = clip_kinematics(np.asarray(timestamps_s), np.asarray(xy_m), np.asarray(yaw_rad))
    except ValueError as exc:
        raise invalid(f"{where}: {exc}") from None
    path = workdir / "trajectory.npz"
    np.savez(path, **kinematics.arrays())
    return {"arrays_path": str(path), "features": kinematics.features}


def trajectory_context(trajectory: Trajectory, workdir: Path) -> dict[str, Any]:
    """EgoDyn's clip kinematics from a request's planar trajectory."""
    xy_m = np.column_stack([trajectory.x_m, trajectory.y_m])
    return kinematics_context(trajectory.timestamps_s, xy_m, trajectory.yaw_rad, workdir, "trajectory")


def pose_context(poses: EgoPoses) -> dict[str, list]:
    """The poses as the TAD loader writes `context["ego_poses"]` (microseconds, metres, w-x-y-z)."""
    return {
        "timestamp_us": [round(t * 1e6) for t in poses.timestamps_s],
        "translation_m": [list(p) for p in poses.translation_m],
        "rotation_wxyz": [list(q) for q in poses.rotation_wxyz],
    }


def keyframes_of(video: Media, rate_hz: float, workdir: Path, max_frames: int) -> Media:
    """The keyframes of a request's video at `rate_hz` (files in the request's workdir); a 422 naming
    the video when it yields too many or too few."""
    try:
        return video_keyframes(video, rate_hz, workdir / "keyframes", max_frames)
    except DataError as exc:
        raise invalid(f"video: {exc.message}") from None


def keyframe_poses(
    request: QARequest, video: Media | None, keyframes: Media, request_id: str
) -> tuple[dict, str]:
    """Ego poses at the frames' times, and how they were made: read off the request's planar `trajectory`
    (its clock is the clip's), else measured from every frame of the `video` the frames were sampled from."""
    if request.trajectory is not None:
        try:
            times = clip_times_s(keyframes, len(keyframes.frame_paths))
        except DataError:
            raise invalid("trajectory: the frames have no times to read poses at (send fps)") from None
        t = request.trajectory
        try:
            poses = poses_at(times, t.timestamps_s, t.x_m, t.y_m, t.yaw_rad, "trajectory")
        except DataError as exc:
            raise invalid(f"trajectory: {exc.message}") from None
        return poses, "from trajectory"
    if video is None:
        raise ValueError("keyframe_poses measures poses from a video")
    try:
        return measured_poses(video, keyframes, request_id), "measured"
    except (DataError, OSError, ValueError) as exc:
        raise invalid(f"cannot measure the ego poses from this video: {exc}") from None


def measured_motion(media: Media, workdir: Path, request_id: str) -> tuple[dict, dict]:
    """(EgoDyn kinematics context, TAD ego poses) of the trajectory measured from every frame; a 422 in
    one line when the frames cannot be measured (too few, no timestamps, too little tracked road)."""
    from kinegraph.benchmarks.egodyn.measured_clip import measure_clip

    sample = Sample(id=request_id, benchmark="serve", group=request_id, question="", media=media)
    try:
        measured = measure_clip(sample, {}, None)
    except (DataError, OSError, ValueError) as exc:
        raise invalid(f"cannot measure the ego trajectory from these frames: {exc}") from None
    path = workdir / "trajectory.npz"
    np.savez(path, **measured["kinematics"].arrays())
    summary = measured["measured"]["signals"]["trajectory"]
    yaw_rad = np.radians(summary["yaw_deg"])
    poses = planar_poses(summary["timestamps_s"], summary["x_m"], summary["y_m"], yaw_rad)
    return {"arrays_path": str(path), "features": measured["kinematics"].features}, poses


#: nuScenes table sets a server keeps parsed, by the identity of the files they were read from
TABLES_CACHE_SIZE = 4
_tables_cache: OrderedDict[tuple, Any] = OrderedDict()
_tables_lock = threading.Lock()


def _tables(base: Path, folder: Path, version: str) -> Any:
    """The nuScenes tables of `version` in `folder` (relative to the data root `base`): every table file
    opened by descriptor under the root (a swapped directory is refused, never followed) and parsed from
    that descriptor. Parsed tables are kept by the identity of the files opened (device, inode, mtime,
    size), so a table changed or swapped since is read again, never answered from the cache."""
    from kinegraph.benchmarks.nuscenes.loader import REQUIRED_FIELDS, NuScenesTables

    opened: dict[str, int] = {}
    try:
        for name in REQUIRED_FIELDS:
            reference = str(folder / version / f"{name}.json")
            try:
                opened[name] = open_under(base, reference, "nuscenes_scene")
            except ServeError as exc:
                if exc.status == 404:
                    exc.message = f"nuscenes_scene: nuScenes table {reference} not found"
                raise
        key = (str(folder), version, tuple(file_identity(fd) for fd in opened.values()))
        with _tables_lock:
            if key in _tables_cache:
                _tables_cache.move_to_end(key)
                return _tables_cache[key]
        texts = {
            name: read_descriptor_text(fd, base / folder / version / f"{name}.json")
            for name, fd in opened.items()
        }
        tables = NuScenesTables(base / folder, version, texts)
    finally:
        for fd in opened.values():
            os.close(fd)
    with _tables_lock:
        _tables_cache[key] = tables
        while len(_tables_cache) > TABLES_CACHE_SIZE:
            _tables_cache.popitem(last=False)
    return tables


def nuscenes_scene(
    data_root: Path | None, version: str, scene: str, private: Path
) -> tuple[Media, dict[str, list]]:
    """The CAM_FRONT keyframes of a nuScenes scene under the data root (tables in `nuscenes/` or the root
    itself) and their ego poses, as the TAD loader reads them; the tables and keyframes opened by
    descriptor, the keyframes copied under `private`."""
    if data_root is None:
        raise ServeError(400, "nuscenes_scene: file references are disabled (the server has no --data-root)")
    base = data_root.resolve()
    folder = Path("nuscenes") if (base / "nuscenes" / version).is_dir() else Path()
    try:
        tables = _tables(base, folder, version)
        frames = [tables.camera_frame(tables.keyframe_token(s["token"])) for s in tables.samples(scene)]
    except DataError as exc:
        message = str(exc).replace(f"{base}/", "")
        if "no scene record" in message or "not found" in message:
            raise ServeError(404, f"nuscenes_scene: {message}", "not_found") from None
        raise invalid(f"nuscenes_scene: {message}") from None
    if not frames:
        raise invalid(f"nuscenes_scene: scene {scene} has no CAM_FRONT keyframes")
    paths = [str(copy_under(base, str(folder / f.filename), "nuscenes_scene", private)) for f in frames]
    t0 = frames[0].timestamp_us
    media = Media(
        kind="frames", frame_paths=paths, timestamps_s=[(f.timestamp_us - t0) / 1e6 for f in frames]
    )
    poses = {
        "timestamp_us": [f.ego_pose.timestamp_us for f in frames],
        "translation_m": [list(f.ego_pose.translation_m) for f in frames],
        "rotation_wxyz": [list(f.ego_pose.rotation_wxyz) for f in frames],
    }
    return media, poses
