"""Media a tool reads, given by reference: a clip or an image, resolved and decoded by the caller.

A tool never opens files itself. The registry hands it a `Clip` or an `Image` from a `MediaSource`:
`DataRootMedia` resolves references under a data root (symlinks followed, the same confinement and
header checks as `kinegraph serve`, and a per-frame pixel limit while decoding) and decodes at most
`max_frames` frames; a graph may hand the sample's own frames instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from kinegraph.errors import DataError


class ToolError(ValueError):
    """A call a tool cannot answer (bad arguments, a refused path, unreadable media): the message says why."""


@dataclass(frozen=True)
class Clip:
    """Decoded frames (T, H, W, 3) RGB uint8, their times in seconds from the first frame, and the source."""

    frames: np.ndarray
    timestamps_s: list[float]
    source: str

    def summary(self) -> dict[str, object]:
        """What was decoded, for the result: frame count, size and span."""
        return {
            "n_frames": len(self.frames),
            "width_px": int(self.frames.shape[2]),
            "height_px": int(self.frames.shape[1]),
            "duration_s": round(self.timestamps_s[-1] - self.timestamps_s[0], 4)
            if self.timestamps_s
            else None,
        }


@dataclass(frozen=True)
class Image:
    """One decoded image (H, W, 3) RGB uint8 and its source."""

    pixels: np.ndarray
    source: str


class MediaSource(Protocol):
    """Resolves a tool call's media references."""

    def clip(self, reference: str, num_frames: int | None) -> Clip: ...

    def image(self, reference: str) -> Image: ...


@dataclass(frozen=True)
class MediaLimits:
    """The data root references are confined to, and the limits `kinegraph serve` applies too."""

    data_root: Path | None
    max_frames: int = 64
    max_image_pixels: int = 4096 * 4096
    max_video_frames: int = 3000

    def __post_init__(self) -> None:
        for name in ("max_frames", "max_image_pixels", "max_video_frames"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.data_root is not None and not Path(self.data_root).is_dir():
            raise ValueError(f"{self.data_root}: the data root is not a directory")


class DataRootMedia:
    """References are paths relative to the data root; videos and images are checked before decoding."""

    def __init__(self, limits: MediaLimits) -> None:
        self.limits = limits

    def _resolve(self, reference: str, where: str) -> Path:
        from kinegraph.serve.errors import ServeError
        from kinegraph.serve.inputs import resolve_under

        try:
            return resolve_under(self.limits.data_root, reference, where)
        except ServeError as exc:
            raise ToolError(exc.message) from None

    def clip(self, reference: str, num_frames: int | None) -> Clip:
        """At most `num_frames` (default and cap: max_frames) evenly spaced frames of a video file."""
        from kinegraph.media import frame_pixel_limit, load_frames
        from kinegraph.types import Media

        limit = self.limits.max_frames
        if num_frames is not None and not 2 <= num_frames <= limit:
            raise ToolError(
                f"num_frames must be between 2 and the server's limit of {limit}, got {num_frames}"
            )
        path = self._resolve(reference, "video_path")
        self._check_video_header(path)
        try:
            with frame_pixel_limit(self.limits.max_image_pixels):
                frames, record = load_frames(Media(kind="video", video_path=str(path)), num_frames or limit)
        except DataError as exc:
            raise ToolError(f"video_path: {exc.message}") from None
        if len(frames) < 2 or len(record.timestamps_s) != len(frames):
            raise ToolError("video_path: needs at least 2 frames with a frame rate in the container")
        return Clip(frames, list(record.timestamps_s), reference)

    def _check_video_header(self, path: Path) -> None:
        """Frame size and count from the container header, before any frame is decoded.

        Decoding then runs under `frame_pixel_limit`, which stops at the first frame over the limit
        whatever the header claimed.
        """
        import cv2

        cap = cv2.VideoCapture(str(path))
        try:
            width, height = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
            n_frames = int(cap.get(cv2.CAP_PROP_FRAME_COUNT)) if cap.isOpened() else 0
        finally:
            cap.release()
        if width <= 0 or height <= 0 or n_frames <= 0:
            raise ToolError("video_path: not a readable video")
        if width * height > self.limits.max_image_pixels:
            raise ToolError(
                f"video_path: {width}x{height} frames exceed the limit of "
                f"{self.limits.max_image_pixels} pixels"
            )
        if n_frames > self.limits.max_video_frames:
            raise ToolError(
                f"video_path: {n_frames} frames exceed the limit of {self.limits.max_video_frames}"
            )

    def image(self, reference: str) -> Image:
        """One JPEG, PNG or WebP image within max_image_pixels."""
        from kinegraph.media import read_image
        from kinegraph.serve.errors import ServeError
        from kinegraph.serve.inputs import check_image

        path = self._resolve(reference, "image_path")
        try:
            check_image(path, self.limits.max_image_pixels, "image_path")
            return Image(read_image(path), reference)
        except ServeError as exc:
            raise ToolError(exc.message) from None
        except DataError as exc:
            raise ToolError(f"image_path: {exc.message}") from None
