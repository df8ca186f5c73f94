"""The cameras measured on a clip's scene-mates: the other windows of its recording (the index rows'
`scene`, or nuScenes' `scene_token`), which share its camera.

A clip's own measurement is made once per process and shared by its questions and its scene-mates (a
bounded cache; clips of one scene measured concurrently wait for one another instead of measuring
twice). A scene-mate that cannot be measured lends nothing; its own questions report why.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from kinegraph.errors import DataError
from kinegraph.media import load_frames
from kinegraph.tools.camera_model import CameraModel, camera_from_options
from kinegraph.tools.scene_camera import SHARED_VALUES, own_measurements, scene_pool, with_scene_values
from kinegraph.types import FrameRecord, Media, Sample

if TYPE_CHECKING:
    from kinegraph.tools.ego_trajectory import EgoTrajectory

CACHED_CLIPS = 512  # clips' own measurements kept per process
MAX_SCENE_MATES = 8  # a clip consults at most this many of its scene's other clips

Measured = tuple["EgoTrajectory", int]  # a clip's own measurement and its frames' width
_measured: OrderedDict[tuple[Any, ...], Measured | Exception] = OrderedDict()
_pending: dict[tuple[Any, ...], threading.Lock] = {}
_guard = threading.Lock()


def _once(
    media: Media,
    camera_options: Mapping[str, float | None],
    num_frames: int | None,
    measure: Callable[[], Measured],
) -> Measured | Exception:
    """`measure()` of the clip at `media` through the camera its options give, once per process: the
    clip's own questions and its scene-mates share it (what it raised, when it failed)."""
    key = (media.model_dump_json(), tuple(sorted(camera_options.items())), num_frames)
    with _guard:
        if key in _measured:
            return _measured[key]
        lock = _pending.setdefault(key, threading.Lock())
    with lock:
        with _guard:
            if key in _measured:
                return _measured[key]
        try:
            found: Measured | Exception = measure()
        except (DataError, OSError, ValueError) as exc:
            found = exc
        with _guard:
            _measured[key] = found
            _pending.pop(key, None)
            while len(_measured) > CACHED_CLIPS:
                _measured.popitem(last=False)
    return found


def own_trajectory(
    sample: Sample,
    camera_options: Mapping[str, float | None],
    num_frames: int | None,
    measure: Callable[[], EgoTrajectory],
    width_px: int,
) -> EgoTrajectory:
    """The clip's own measurement (`measure()`, through the camera its options give), shared with its
    scene-mates when it has some; raises what the measurement raised."""
    if not sample.context.get("scene_media"):
        return measure()
    found = _once(sample.media, camera_options, num_frames, lambda: (measure(), width_px))
    if isinstance(found, Exception):
        raise found
    return found[0]


def decode_media(media: Media, num_frames: int | None) -> tuple[np.ndarray, FrameRecord]:
    """A clip's frames (all when `num_frames` is None) and their record, which must carry times."""
    frames, record = load_frames(media, num_frames)
    if len(record.timestamps_s) != len(frames):
        raise DataError("frames have no timestamps (no fps or per-frame times)", path=record.source)
    return frames, record


def _mate(media: Media, camera_options: Mapping[str, float | None], num_frames: int | None) -> Measured:
    """A scene-mate measured as its own questions measure it: decoded alike, through the same options."""
    from kinegraph.tools.ego_trajectory import estimate_trajectory

    frames, record = decode_media(media, num_frames)
    camera = camera_from_options(frames.shape[2], frames.shape[1], **camera_options)
    return estimate_trajectory(frames, record.timestamps_s, camera), frames.shape[2]


def measured_camera(
    media: Media, camera_options: Mapping[str, float | None], num_frames: int | None
) -> tuple[CameraModel, int] | None:
    """The camera a scene-mate's own measurement ends with and its frames' width; None when it failed
    (its own questions report why)."""
    found = _once(media, camera_options, num_frames, lambda: _mate(media, camera_options, num_frames))
    return None if isinstance(found, Exception) else (found[0].camera, found[1])


def nearest(mates: list[dict[str, Any]], sample: Sample) -> list[dict[str, Any]]:
    """The `MAX_SCENE_MATES` scene-mates nearest the clip in the index's order (a long recording's
    windows need not all be measured for one clip), the clip itself left out."""
    own = sample.media.model_dump()
    at = next((k for k, mate in enumerate(mates) if mate == own), 0)
    order = sorted((k for k, mate in enumerate(mates) if mate != own), key=lambda k: (abs(k - at), k))
    return [mates[k] for k in order[:MAX_SCENE_MATES]]


def scene_camera(
    sample: Sample,
    camera: CameraModel,
    measured_by_clip: CameraModel,
    camera_options: Mapping[str, float | None],
    num_frames: int | None,
    width_px: int,
) -> CameraModel | None:
    """The clip's starting `camera` with what its own measurement (ending with `measured_by_clip`) read
    and the values it left assumed measured on its scene-mates (`context["scene_media"]`, set by the
    loader), or None when they measured none of those."""
    wanted = measured_by_clip.assumed & SHARED_VALUES
    mates = sample.context.get("scene_media") or []
    if not wanted or not mates:
        return None
    measured = [measured_camera(Media(**mate), camera_options, num_frames) for mate in nearest(mates, sample)]
    found = [m for m in measured if m is not None]
    return with_scene_values(own_measurements(camera, measured_by_clip), scene_pool(found), width_px, wanted)
