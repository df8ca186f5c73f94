"""Turn a request's frames or video into a Sample's media, checking every limit.

The checks themselves are `kinegraph.media_limits` and `kinegraph.paths`, shared with MCP and Studio;
this module picks the request's one source of frames. Uploads are written to a per-request directory that
the caller deletes afterwards; a referenced file is opened by descriptor under the data root and copied
into that directory (`REFERENCED`), so the graph decodes the file that was checked, never a path
someone can swap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kinegraph.media_limits import (
    IMAGE_SUFFIX,
    MediaLimits,
    check_image,
    check_packet_frames,
    decode_base64_image,
    invalid,
    unsupported,
)
from kinegraph.media_limits import check_video as _check_video
from kinegraph.paths import copy_under
from kinegraph.serve.schemas import QARequest
from kinegraph.serve.settings import ServeSettings
from kinegraph.types import Media

__all__ = [
    "REFERENCED",
    "Uploads",
    "build_media",
    "check_image",
    "check_packet_frames",
    "check_video",
    "decode_base64_image",
    "invalid",
    "media_limits",
    "unsupported",
]

#: The folder of a request's directory holding its referenced files, at their paths under the data root.
REFERENCED = "data-root"


@dataclass
class Uploads:
    """Files that came in a multipart body: frames in order, and at most one video."""

    frames: list[bytes] = field(default_factory=list)
    video: bytes | None = None


def media_limits(settings: ServeSettings) -> MediaLimits:
    """The server's limits in the form every door shares."""
    return MediaLimits(
        settings.data_root, settings.max_frames, settings.max_image_pixels, settings.max_video_frames
    )


def check_video(path: Path, settings: ServeSettings, where: str) -> None:
    """The shared video check under the server's limits."""
    _check_video(path, media_limits(settings), where)


def build_media(request: QARequest, uploads: Uploads, settings: ServeSettings, workdir: Path) -> Media:
    """The sample's media from exactly one source: images (inline or uploaded), frame paths, or a video."""
    n_images = len(request.images) + len(uploads.frames)
    has_video = request.video_path is not None or uploads.video is not None
    sources = [n_images > 0, bool(request.frame_paths), has_video]
    if sum(sources) > 1:
        raise invalid("give frames one way only: images/uploaded frames, frame_paths, or one video")
    if request.video_path is not None and uploads.video is not None:
        raise invalid("give either video_path or an uploaded video, not both")
    if max(n_images, len(request.frame_paths)) > settings.max_frames:
        n = max(n_images, len(request.frame_paths))
        raise invalid(f"{n} frames exceed the limit of {settings.max_frames} per request")
    if n_images:
        blobs = [
            *(decode_base64_image(text, f"images[{i}]") for i, text in enumerate(request.images)),
            *uploads.frames,
        ]
        paths = []
        for i, data in enumerate(blobs):
            fmt = check_image(data, settings.max_image_pixels, f"frames[{i}]")
            path = workdir / f"frame_{i:04d}{IMAGE_SUFFIX[fmt]}"
            path.write_bytes(data)
            paths.append(str(path))
        return Media(kind="frames", frame_paths=paths, fps=request.fps)
    if request.frame_paths:
        paths = []
        for i, reference in enumerate(request.frame_paths):
            path = copy_under(settings.data_root, reference, f"frame_paths[{i}]", workdir / REFERENCED)
            check_image(path, settings.max_image_pixels, f"frame_paths[{i}]")
            paths.append(str(path))
        return Media(kind="frames", frame_paths=paths, fps=request.fps)
    if request.video_path is not None:
        video = copy_under(settings.data_root, request.video_path, "video_path", workdir / REFERENCED)
    elif uploads.video is not None:
        video = workdir / "video.bin"
        video.write_bytes(uploads.video)
    else:
        return Media()
    check_video(video, settings, "video")
    return Media(kind="video", video_path=str(video), fps=request.fps)
