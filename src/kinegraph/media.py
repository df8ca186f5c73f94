"""The one frame sampler and decoder, shared by tools, agents and the runner.

Frames are RGB uint8 arrays of shape (H, W, 3). A clip is decoded once (`load_frames`) and the indices
and timestamps actually used are returned with the pixels, so every prediction can record them.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from kinegraph.errors import DataError
from kinegraph.types import FrameRecord, Media

_max_frame_pixels: ContextVar[int | None] = ContextVar("kinegraph_max_frame_pixels", default=None)
_max_frame_count: ContextVar[int | None] = ContextVar("kinegraph_max_frame_count", default=None)
_max_decoded_bytes: ContextVar[int | None] = ContextVar("kinegraph_max_decoded_bytes", default=None)


@contextmanager
def frame_pixel_limit(max_pixels: int) -> Iterator[None]:
    """Within this block, and the tasks and threads it starts, a video frame over `max_pixels` is an error.

    A container header may claim small frames over a stream of huge ones; the server sets this so that
    decoding stops at the first frame over its limit instead of decoding (and keeping) the rest.
    """
    token = _max_frame_pixels.set(max_pixels)
    try:
        yield
    finally:
        _max_frame_pixels.reset(token)


@contextmanager
def frame_count_limit(max_frames: int, max_bytes: int | None = None) -> Iterator[None]:
    """Within this block, decoding more than `max_frames` frames of one clip is an error, refused before
    the first is decoded (a server's `--max-frames` holds whatever sampling a graph asks for), and so is
    keeping more than `max_bytes` of decoded pixels from one clip (a memory bound per call)."""
    tokens = _max_frame_count.set(max_frames), _max_decoded_bytes.set(max_bytes)
    try:
        yield
    finally:
        _max_frame_count.reset(tokens[0])
        _max_decoded_bytes.reset(tokens[1])


def _check_decoded_bytes(n_bytes: int, where: str | None) -> None:
    limit = _max_decoded_bytes.get()
    if limit is not None and n_bytes > limit:
        raise DataError(
            f"decoding would keep over {limit // 2**20} MiB of pixels from one clip (its limit); "
            "sample fewer frames",
            path=where,
        )


def _check_frame_count(n: int, where: str | None) -> None:
    limit = _max_frame_count.get()
    if limit is not None and n > limit:
        raise DataError(
            f"the graph would decode {n} frames, over the limit of {limit} per request "
            "(sample fewer: graph option max_frames, num_frames or fps)",
            path=where,
        )


def even_indices(n_total: int, k: int) -> list[int]:
    """k evenly spaced indices over n_total frames, `round(i * (n - 1) / (k - 1))` as EgoDyn upstream.

    k >= n_total returns every index; k == 1 returns the middle frame.
    """
    if n_total <= 0:
        raise ValueError(f"cannot sample from {n_total} frames")
    if k <= 0:
        raise ValueError(f"need at least one frame, got k={k}")
    if k >= n_total:
        return list(range(n_total))
    if k == 1:  # upstream's `select_frames` quirk, kept: the middle frame, not I_0 (see egodyn.static_first)
        return [n_total // 2]
    return [round(i * (n_total - 1) / (k - 1)) for i in range(k)]


def read_image(path: str | Path) -> np.ndarray:
    """Decode one image file to RGB uint8 (H, W, 3)."""
    bgr = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if bgr is None:
        raise DataError("missing or unreadable image", path=path)
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)


def write_image(path: str | Path, rgb: np.ndarray, quality: int = 92) -> None:
    """Encode an RGB uint8 frame to a JPEG/PNG file (format from the suffix)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    params = [cv2.IMWRITE_JPEG_QUALITY, quality] if path.suffix.lower() in (".jpg", ".jpeg") else []
    if not cv2.imwrite(str(path), cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), params):
        raise OSError(f"{path}: could not write image")


def video_info(path: str | Path) -> tuple[int, float]:
    """(frame count, fps) from the container header."""
    cap = cv2.VideoCapture(str(path))
    try:
        if not cap.isOpened():
            raise DataError("missing or unreadable video", path=path)
        return int(cap.get(cv2.CAP_PROP_FRAME_COUNT)), float(cap.get(cv2.CAP_PROP_FPS))
    finally:
        cap.release()


def read_video(path: str | Path, indices: Sequence[int] | None = None) -> tuple[np.ndarray, float]:
    """Decode the frames at `indices` (all when None) in one sequential pass; returns (T,H,W,3) and fps.

    Under `frame_pixel_limit`, each decoded frame is checked before the next is decoded.
    """
    cap = cv2.VideoCapture(str(path))
    if not cap.isOpened():
        raise DataError("missing or unreadable video", path=path)
    wanted = None if indices is None else set(indices)
    max_pixels = _max_frame_pixels.get()
    frames: dict[int, np.ndarray] = {}
    kept = 0
    try:
        fps = float(cap.get(cv2.CAP_PROP_FPS))
        last = None if wanted is None else max(wanted)
        i = 0
        while last is None or i <= last:
            ok, bgr = cap.read()
            if not ok:
                break
            if max_pixels is not None and bgr.shape[0] * bgr.shape[1] > max_pixels:
                height, width = bgr.shape[:2]
                raise DataError(
                    f"frame {i} is {width}x{height}, over the limit of {max_pixels} pixels", path=path
                )
            if wanted is None or i in wanted:
                _check_frame_count(len(frames) + 1, str(path))
                kept += bgr.nbytes
                _check_decoded_bytes(kept, str(path))
                frames[i] = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
            i += 1
    finally:
        cap.release()
    if not frames:
        raise DataError("video has no decodable frames", path=path)
    order = list(indices) if indices is not None else sorted(frames)
    missing = [j for j in order if j not in frames]
    if missing:
        raise DataError(f"video has {i} decodable frames; index {missing[0]} is past the end", path=path)
    return np.stack([frames[j] for j in order]), fps


def write_video(path: str | Path, frames: np.ndarray | Sequence[np.ndarray], fps: float) -> None:
    """Write RGB frames to an mp4 (mp4v), the container the CARLA-style clips ship in."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    first = frames[0]
    height, width = first.shape[:2]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), fps, (width, height))
    if not writer.isOpened():
        raise OSError(f"{path}: could not open video writer")
    try:
        for rgb in frames:
            writer.write(cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2BGR))
    finally:
        writer.release()


def video_bytes(frames: np.ndarray | Sequence[np.ndarray], fps: float) -> bytes:
    """The mp4 (mp4v) `write_video` writes, as bytes: a video built in memory to send whole to a model."""
    handle, path = tempfile.mkstemp(suffix=".mp4", prefix="kinegraph-video-")
    os.close(handle)
    try:
        write_video(path, frames, fps)
        return Path(path).read_bytes()
    finally:
        os.unlink(path)


def load_frames(media: Media, k: int | None = None) -> tuple[np.ndarray, FrameRecord]:
    """Decode the frames a sample uses: `media.frame_indices` if set, else k evenly spaced, else all.

    Returns (T, H, W, 3) RGB uint8 and the record of indices/timestamps actually used.
    """
    if media.kind == "none":
        return np.zeros((0, 0, 0, 3), np.uint8), FrameRecord()
    if media.kind == "frames":
        n_total = len(media.frame_paths)
        indices = _choose(media, n_total, k)
        _check_frame_count(len(indices), media.frame_paths[0] if media.frame_paths else None)
        images, kept = [], 0
        for i in indices:
            images.append(read_image(media.frame_paths[i]))
            kept += images[-1].nbytes
            _check_decoded_bytes(kept, media.frame_paths[i])
        frames = np.stack(images)
        fps = media.fps
        source = media.frame_paths[0] if media.frame_paths else None
    else:
        if media.video_path is None:
            raise DataError("video media without a path", field="video_path")
        n_total, header_fps = video_info(media.video_path)
        indices = _choose(media, n_total, k)
        _check_frame_count(len(indices), media.video_path)
        frames, header_fps = read_video(media.video_path, indices)
        fps = media.fps or header_fps
        source = media.video_path
    timestamps = _timestamps(media, indices, fps)
    return frames, FrameRecord(indices=list(indices), timestamps_s=timestamps, source=source)


def plan_video_frames(media: Media, k: int | None = None) -> tuple[FrameRecord, int, int]:
    """What `load_frames` would return for a video, from its header alone: (record, width, height).

    Lets a run answered from the response cache record its frames without decoding them.
    """
    if media.video_path is None:
        raise DataError("video media without a path", field="video_path")
    cap = cv2.VideoCapture(str(media.video_path))
    try:
        if not cap.isOpened():
            raise DataError("missing or unreadable video", path=media.video_path)
        n_total, header_fps = int(cap.get(cv2.CAP_PROP_FRAME_COUNT)), float(cap.get(cv2.CAP_PROP_FPS))
        width, height = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
    finally:
        cap.release()
    indices = _choose(media, n_total, k)
    record = FrameRecord(
        indices=list(indices),
        timestamps_s=_timestamps(media, indices, media.fps or header_fps),
        source=media.video_path,
        **count_sampling(media, k),
    )
    return record, width, height


def count_sampling(media: Media, num_frames: int | None) -> dict[str, Any]:
    """How frames not sampled by rate were chosen, as the record says it: given by the data, `num_frames`
    evenly spaced, or all."""
    if media.frame_indices is not None:
        return {"sampling": "given"}
    return {"sampling": "count" if num_frames else "all", "sampling_value": num_frames}


def _choose(media: Media, n_total: int, k: int | None) -> list[int]:
    if media.frame_indices is not None:
        return list(media.frame_indices)
    return even_indices(n_total, k) if k else list(range(n_total))


_CAPTURE_TIME_US = re.compile(r"__(\d{16})\.\w+$")


def capture_times_s(frame_paths: Sequence[str]) -> list[float] | None:
    """Capture times (s) from nuScenes file names (`..._CAM_FRONT__<µs>.jpg`), None if any lacks one."""
    matches = [_CAPTURE_TIME_US.search(str(path)) for path in frame_paths]
    if not matches or any(m is None for m in matches):
        return None
    return [int(m.group(1)) / 1e6 for m in matches if m is not None]


def _timestamps(media: Media, indices: Sequence[int], fps: float | None) -> list[float]:
    """The times of the frames used: the media's own, else (frames named as nuScenes names them) their
    capture times, else index / fps; none when nothing gives a time."""
    if media.timestamps_s is not None and media.frame_indices is not None:
        return list(media.timestamps_s)
    if media.timestamps_s is not None:
        if indices and max(indices) >= len(media.timestamps_s):
            where = media.video_path or (media.frame_paths[0] if media.frame_paths else None)
            raise DataError(
                f"{len(media.timestamps_s)} frame times for a clip with frame {max(indices)}", path=where
            )
        return [media.timestamps_s[i] for i in indices]
    captured = capture_times_s(media.frame_paths) if media.kind == "frames" else None
    if captured is not None:
        return [captured[i] for i in indices]
    if fps:
        return [i / fps for i in indices]
    return []


def fps_indices(times_s: Sequence[float], fps: float) -> list[int]:
    """The frames on screen at t0, t0 + 1/fps, t0 + 2/fps, ... up to the last frame's time.

    `times_s` are the clip's frame times, ascending. The frame on screen at t is the last one whose time
    is <= t (a frame shows until the next begins); a rate above the clip's own repeats no frame. The work
    is one step per frame, not per sample time: a huge rate over a long clip (a header claiming 0.001 fps)
    cannot keep a worker thread spinning after its request timed out.
    """
    if fps <= 0:
        raise ValueError(f"fps must be positive, got {fps}")
    if not times_s:
        raise ValueError("cannot sample from 0 frames")
    start, end = times_s[0], times_s[-1]
    chosen: list[int] = []
    for i, time_s in enumerate(times_s):
        k = _first_sample_at(time_s, start, fps)
        t = start + k / fps
        if t > end + 1e-9:
            break
        if i + 1 == len(times_s) or t + 1e-9 < times_s[i + 1]:
            chosen.append(i)
    return chosen


def _first_sample_at(time_s: float, start: float, fps: float) -> int:
    """The least k >= 0 with time_s <= start + k / fps + 1e-9 (the sample times `fps_indices` walks)."""
    k = max(0, math.ceil((time_s - 1e-9 - start) * fps))
    while k > 0 and time_s <= start + (k - 1) / fps + 1e-9:  # float rounding: at most a step or two
        k -= 1
    while time_s > start + k / fps + 1e-9:
        k += 1
    return k


def clip_times_s(media: Media, n_total: int, video_fps: float | None = None) -> list[float]:
    """The time of every frame of the clip: the media's own, else nuScenes capture times, else i / fps."""
    if media.timestamps_s is not None and media.frame_indices is None:
        return list(media.timestamps_s)
    captured = capture_times_s(media.frame_paths) if media.kind == "frames" else None
    if captured is not None:
        return captured
    fps = media.fps or video_fps
    if not fps:
        where = media.video_path or (media.frame_paths[0] if media.frame_paths else None)
        raise DataError("fps sampling needs the frames' times: no fps and no timestamps", path=where)
    return [i / fps for i in range(n_total)]


def load_frames_sampled(
    media: Media, *, num_frames: int | None = None, fps: float | None = None
) -> tuple[np.ndarray, FrameRecord]:
    """`load_frames` with the sampling chosen per run: `fps` frames a second, else `num_frames` evenly
    spaced, else every frame; the record says which (`sampling`, `sampling_value`), with the indices and
    timestamps used. Frames the data itself names (`media.frame_indices`) are kept as given."""
    if fps is not None and num_frames is not None:
        raise ValueError("sample frames by num_frames or by fps, not both")
    if fps is None or media.kind == "none" or media.frame_indices is not None:
        frames, record = load_frames(media, num_frames)
        return frames, record.model_copy(update=count_sampling(media, num_frames))
    if media.kind == "frames":
        times = clip_times_s(media, len(media.frame_paths))
    else:
        if media.video_path is None:
            raise DataError("video media without a path", field="video_path")
        n_total, header_fps = video_info(media.video_path)
        times = clip_times_s(media, n_total, header_fps)
    chosen = media.model_copy(update={"frame_indices": fps_indices(times, fps), "timestamps_s": None})
    frames, record = load_frames(chosen)
    timestamps = [times[i] for i in record.indices]
    return frames, record.model_copy(
        update={"timestamps_s": timestamps, "sampling": "fps", "sampling_value": fps}
    )
