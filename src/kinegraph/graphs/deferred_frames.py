"""A video clip planned from its header; its frames decoded and encoded only when a request needs them.

Each image's `source` is the video's content digest, the frame index and the encoding settings (OpenCV's
version included), so a cache entry is reused exactly when the same bytes would be sent: a changed video
misses, a moved one hits. Decoded frames live only while they are encoded; the encodings live until the
clip's last question is answered.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import cv2

from kinegraph.agents.deferred_images import DeferredImages
from kinegraph.agents.images import encode_image, encoded_size
from kinegraph.agents.protocol import ImagePart
from kinegraph.media import load_frames, plan_video_frames
from kinegraph.types import FrameRecord, Media

_CHUNK = 1 << 20


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def plan_clip(
    media: Media, num_frames: int | None, max_side: int | None, on_decode: Callable[[], None]
) -> tuple[FrameRecord, list[ImagePart]]:
    """The frames a video clip will show (from its header) and one deferred image per frame.

    `on_decode` is called (on the event loop) when the frames are decoded, at most once.
    """
    record, width, height = plan_video_frames(media, num_frames)
    digest = file_sha256(media.video_path)  # type: ignore[arg-type] - plan_video_frames checked it
    settings = f"jpeg90:max_side={max_side}:opencv{cv2.__version__}"
    sources = [f"video:{digest}:frame{i}:{settings}" for i in record.indices]

    def make() -> list[ImagePart]:
        frames, _ = load_frames(media, num_frames)
        return [
            encode_image(frame, max_side=max_side).model_copy(update={"source": source})
            for frame, source in zip(frames, sources, strict=True)
        ]

    encoded_width, encoded_height = encoded_size(width, height, max_side)
    images = DeferredImages(make, on_make=on_decode)
    return record, images.placeholders(sources, encoded_width, encoded_height)
