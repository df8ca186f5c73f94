"""The clip sent whole to a model that takes video natively (a backend with `video=native`).

The model samples the video itself, at the rate the run chose: `fps` as given, `num_frames` as the rate
that yields about that many frames over the clip, every frame's choice left to the provider's default.
The frame record keeps the frames the run sampled and names the model that got the video, at which rate.
"""

from __future__ import annotations

from typing import Any

from kinegraph.agents.protocol import VideoPart
from kinegraph.errors import DataError
from kinegraph.media import video_info
from kinegraph.types import FrameRecord, Media, NativeVideo


def takes_whole_video(backend: Any) -> bool:
    """Whether `backend` wants a video whole (its `video` option is "native")."""
    return getattr(backend, "video", "frames") == "native"


def whole_video(media: Media, record: FrameRecord, model: str) -> tuple[VideoPart, FrameRecord]:
    """The clip's video file as a VideoPart asking the rate the run's sampling chose, and the record."""
    if media.kind != "video" or media.video_path is None:
        raise DataError("video=native sends a video file; this sample has frame files", field="media")
    rate = record.sampling_value if record.sampling == "fps" else None
    if record.sampling == "count" and record.sampling_value:
        n_total, header_fps = video_info(media.video_path)
        clip_fps = media.fps or header_fps
        if n_total > 0 and clip_fps > 0:
            rate = record.sampling_value * clip_fps / n_total
    part = VideoPart(path=media.video_path, mime_type=_mime_type(media.video_path), fps=rate)
    return part, record.model_copy(update={"native_video": NativeVideo(model=model, fps=rate)})


def _mime_type(path: str) -> str:
    """The video MIME type of a file name (mp4 unless the suffix names another)."""
    import mimetypes

    guessed, _ = mimetypes.guess_type(path)
    return guessed if guessed and guessed.startswith("video/") else "video/mp4"
