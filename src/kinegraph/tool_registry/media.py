"""Media a tool reads, given by reference: a clip or an image, resolved and decoded by the caller.

A tool never opens files itself. The registry hands it a `Clip` or an `Image` from a `MediaSource`:
`DataRootMedia` resolves references under a data root (symlinks followed, the same confinement and
header checks as `kinegraph serve`, and a per-frame pixel limit while decoding), opens each by descriptor
and decodes a private copy of the opened file (`kinegraph.paths.copy_under`), at most `max_frames`
frames; a graph may hand the sample's own frames instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from kinegraph.errors import DataError
from kinegraph.media_limits import InputRefused, MediaLimits, check_image, check_video, decoding_within
from kinegraph.paths import copy_under, private_directory

__all__ = ["Clip", "DataRootMedia", "Image", "MediaLimits", "MediaSource", "ToolError"]


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


class DataRootMedia:
    """References are paths relative to the data root; videos and images are checked before decoding,
    by the same `kinegraph.media_limits` checks `kinegraph serve` applies."""

    def __init__(self, limits: MediaLimits) -> None:
        self.limits = limits

    def clip(self, reference: str, num_frames: int | None) -> Clip:
        """At most `num_frames` (default and cap: max_frames) evenly spaced frames of a video file."""
        from kinegraph.media import load_frames
        from kinegraph.types import Media

        limit = self.limits.max_frames
        if num_frames is not None and not 2 <= num_frames <= limit:
            raise ToolError(
                f"num_frames must be between 2 and the server's limit of {limit}, got {num_frames}"
            )
        try:
            with private_directory() as private:
                path = copy_under(self.limits.data_root, reference, "video_path", private)
                check_video(path, self.limits, "video_path")
                with decoding_within(self.limits):
                    media = Media(kind="video", video_path=str(path))
                    frames, record = load_frames(media, num_frames or limit)
        except InputRefused as exc:
            raise ToolError(exc.message) from None
        except DataError as exc:
            raise ToolError(f"video_path: {exc.message}") from None
        if len(frames) < 2 or len(record.timestamps_s) != len(frames):
            raise ToolError("video_path: needs at least 2 frames with a frame rate in the container")
        return Clip(frames, list(record.timestamps_s), reference)

    def image(self, reference: str) -> Image:
        """One JPEG, PNG or WebP image within max_image_pixels."""
        from kinegraph.media import read_image

        try:
            with private_directory() as private:
                path = copy_under(self.limits.data_root, reference, "image_path", private)
                check_image(path, self.limits.max_image_pixels, "image_path")
                return Image(read_image(path), reference)
        except InputRefused as exc:
            raise ToolError(exc.message) from None
        except DataError as exc:
            raise ToolError(f"image_path: {exc.message}") from None
