"""A TAD question's keyframes as one video, for a model that takes video natively (`video=native`).

The TAD paper gives Gemini-2.5-Flash and Cosmos-Reason the frames "stored as video at FPS=2" (Appendix
B) instead of numbered frames, so they "lack the explicit frame-index awareness" (Sec. 5): the prompt is
upstream's without its `FrameN:` lines. The keyframes a question uses (its keysegment's, or the whole
scene's) become an mp4 at their real rate, from their capture times (about 2 Hz for nuScenes keyframes),
and the model is asked to sample it at 2 fps. Upstream has no video code: this is the paper's setting
as it describes it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kinegraph.agents.protocol import VideoPart
from kinegraph.errors import DataError
from kinegraph.media import read_image, video_bytes
from kinegraph.types import Media, Sample

#: The rate the paper's video models sample the keyframe video at (Appendix B: "FPS=2").
VIDEO_FPS = 2.0


def capture_rate_hz(media: Media) -> float:
    """The frames' mean rate over their capture times ((n - 1) / span), else the media's rate, else 2 Hz."""
    times = media.timestamps_s
    if not times or len(times) < 2 or times[-1] <= times[0]:
        return media.fps or VIDEO_FPS
    return (len(times) - 1) / (times[-1] - times[0])


def video_key(frame_paths: Sequence[str]) -> str:
    """The key a question's video is kept under: its frames, in order (questions of a keysegment share it)."""
    return "\n".join(frame_paths)


def _read(path: str, max_side: int | None) -> np.ndarray:
    import cv2

    rgb = read_image(path)
    height, width = rgb.shape[:2]
    if max_side is not None and max(height, width) > max_side:
        scale = max_side / max(height, width)
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        rgb = cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)
    return rgb


def keyframes_video(frames: Sequence[np.ndarray], rate_hz: float, first_path: str) -> bytes:
    """The frames (T of (H, W, 3), all one size) as an mp4 at `rate_hz`."""
    sizes = {f.shape for f in frames}
    if len(sizes) > 1:
        raise DataError(
            f"keyframes differ in size {sorted(sizes)}; one video needs one size", path=first_path
        )
    return video_bytes(np.stack(frames), rate_hz)


def scene_videos(samples: Sequence[Sample], max_side: int | None) -> dict[str, VideoPart]:
    """One video per distinct frame list of the scene's questions, by `video_key` (keyframes read once)."""
    wanted = {video_key(s.media.frame_paths): s.media for s in samples if s.media.frame_paths}
    paths = list(dict.fromkeys(p for media in wanted.values() for p in media.frame_paths))
    frames = {p: _read(p, max_side) for p in paths}
    videos = {}
    for key, media in wanted.items():
        data = keyframes_video(
            [frames[p] for p in media.frame_paths], capture_rate_hz(media), media.frame_paths[0]
        )
        videos[key] = VideoPart(data=data, mime_type="video/mp4", fps=VIDEO_FPS)
    return videos
