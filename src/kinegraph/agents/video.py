"""Videos for backends: which take them whole, and the frames a video becomes everywhere else.

A backend option `video` says how a `VideoPart` travels: `frames` (the default, and the only choice for
anthropic, openai, transformers) samples it to JPEG frames before the call; `native` sends it whole, and
only google (inline video data) and vllm (a `video_url` part, for servers that take one) accept it.
"""

from __future__ import annotations

import asyncio
import mimetypes
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

from kinegraph.agents.errors import BackendError
from kinegraph.agents.protocol import ContentPart, GenerateRequest, ImagePart, VideoPart
from kinegraph.errors import DataError
from kinegraph.types import Status

VideoInput = Literal["frames", "native"]
#: The providers that can take a video whole (`video=native`).
NATIVE_VIDEO_PROVIDERS = ("google", "vllm")


def video_input(spec: str, video: str, *, native: bool) -> VideoInput:
    """`video` checked for the backend `spec`: "frames", or "native" where the provider takes video
    (`native`); anything else is a BackendError in one line."""
    if video not in ("frames", "native"):
        raise BackendError(f"{spec}: video must be 'frames' or 'native', got {video!r}")
    if video == "native" and not native:
        takers = " and ".join(NATIVE_VIDEO_PROVIDERS)
        raise BackendError(f"{spec}: this provider takes no video whole; video=native works with {takers}")
    return video  # type: ignore[return-value]


def has_video(request: GenerateRequest) -> bool:
    """Whether any message of the request carries a VideoPart."""
    return any(isinstance(p, VideoPart) for m in request.messages for p in m.parts)


def sample_video(part: VideoPart) -> list[ImagePart]:
    """The video as JPEG frames: `part.fps` a second, else `part.num_frames` evenly spaced, else all."""
    from kinegraph.agents.images import encode_image
    from kinegraph.media import load_frames_sampled
    from kinegraph.types import Media

    with video_file(part) as path:
        num_frames = part.num_frames if part.fps is None else None
        frames, _ = load_frames_sampled(
            Media(kind="video", video_path=path), num_frames=num_frames, fps=part.fps
        )
    return [encode_image(frame) for frame in frames]


def frames_for_videos(request: GenerateRequest) -> GenerateRequest:
    """The request with every VideoPart replaced by its sampled frames (the same object when none)."""
    if not has_video(request):
        return request
    messages = []
    for message in request.messages:
        if isinstance(message.content, str) or not any(isinstance(p, VideoPart) for p in message.content):
            messages.append(message)
            continue
        content: list[ContentPart] = []
        for part in message.content:
            content.extend(sample_video(part) if isinstance(part, VideoPart) else [part])
        messages.append(message.model_copy(update={"content": content}))
    return request.model_copy(update={"messages": messages})


async def as_frames(request: GenerateRequest) -> GenerateRequest:
    """`frames_for_videos` off the event loop (decoding a video takes a while); free without videos.

    A video that cannot be read or sampled is a BackendError with status input_error (never retried).
    """
    if not has_video(request):
        return request
    try:
        return await asyncio.to_thread(frames_for_videos, request)
    except (DataError, OSError, ValueError) as exc:
        raise BackendError(f"cannot sample the video to frames: {exc}", status=Status.input_error) from None


@contextmanager
def video_file(part: VideoPart) -> Iterator[str]:
    """A path to the video's bytes: its own file, else a temporary copy removed afterwards."""
    if part.path is not None:
        yield part.path
        return
    suffix = mimetypes.guess_extension(part.mime_type) or ".mp4"
    handle, path = tempfile.mkstemp(suffix=suffix, prefix="kinegraph-video-")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(part.content)
        yield path
    finally:
        os.unlink(path)
