"""Encode frames once (JPEG by default, optional max side) and build user messages from text + many frames.

An `ImagePart` is immutable and carries its bytes, digest and base64 text, so a frame encoded once is
reused by every request that shows it; files are memoised by (path, size, mtime, options).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from kinegraph.agents.protocol import ContentPart, ImagePart, Message, TextPart
from kinegraph.errors import DataError

ImageFormat = Literal["jpeg", "png", "webp"]
_MIME = {"jpeg": "image/jpeg", "png": "image/png", "webp": "image/webp"}


def encode_image(
    image: np.ndarray | str | Path,
    *,
    max_side: int | None = None,
    fmt: ImageFormat = "jpeg",
    quality: int = 90,
) -> ImagePart:
    """Encode an RGB uint8 array (H, W, 3) or an image file to the bytes a provider receives.

    `max_side` shrinks the longer side to at most that many pixels (aspect kept, INTER_AREA); smaller
    images are left as they are. Files are decoded and encoded once per (path, size, mtime, options).
    """
    if fmt not in _MIME:
        raise ValueError(f"fmt must be one of {sorted(_MIME)}, got {fmt!r}")
    if max_side is not None and max_side < 1:
        raise ValueError(f"max_side must be positive, got {max_side}")
    if isinstance(image, str | Path):
        path = Path(image)
        try:
            stat = os.stat(path)
        except OSError:
            raise DataError("missing or unreadable image", path=path) from None
        return _encode_file(str(path.resolve()), stat.st_size, stat.st_mtime_ns, max_side, fmt, quality)
    return _encode_array(image, max_side, fmt, quality)


def user_message(
    text: str,
    frames: Iterable[np.ndarray | str | Path | ImagePart] = (),
    *,
    images_first: bool = True,
    max_side: int | None = None,
    fmt: ImageFormat = "jpeg",
    quality: int = 90,
) -> Message:
    """A user message with many frames and one text; frames not yet encoded are encoded here.

    Frames come before the text by default (what most VLM prompts do); `frames` may be a (T, H, W, 3)
    array, a list of arrays, file paths, or already-encoded `ImagePart`s (reused as they are).
    """
    images = encode_frames(frames, max_side=max_side, fmt=fmt, quality=quality)
    parts: list[ContentPart] = [TextPart(text=text)]
    content: list[ContentPart] = [*images, *parts] if images_first else [*parts, *images]
    return Message(role="user", content=content)


def encode_frames(
    frames: Iterable[np.ndarray | str | Path | ImagePart],
    *,
    max_side: int | None = None,
    fmt: ImageFormat = "jpeg",
    quality: int = 90,
) -> list[ImagePart]:
    """Encode each frame (a (T, H, W, 3) array counts as T frames); ImageParts pass through unchanged."""
    if isinstance(frames, np.ndarray) and frames.ndim == 3:
        raise ValueError("expected frames (T, H, W, 3) or a list; got one (H, W, 3) image: wrap it in a list")
    out = []
    for frame in frames:
        if isinstance(frame, ImagePart):
            out.append(frame)
        else:
            out.append(encode_image(frame, max_side=max_side, fmt=fmt, quality=quality))
    return out


def decode_image(part: ImagePart) -> np.ndarray:
    """Decode an ImagePart back to RGB uint8 (H, W, 3) (for in-process models)."""
    import cv2

    bgr = cv2.imdecode(np.frombuffer(part.data, np.uint8), cv2.IMREAD_COLOR)
    if bgr is None:
        raise DataError(f"undecodable {part.mime_type} image ({len(part.data)} bytes)", field="data")
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)


def encoded_size(width: int, height: int, max_side: int | None) -> tuple[int, int]:
    """(width, height) of a frame once encoded with `max_side`: the longer side shrunk to it, aspect kept."""
    if max_side is None or max(height, width) <= max_side:
        return width, height
    scale = max_side / max(height, width)
    return max(1, round(width * scale)), max(1, round(height * scale))


def _encode_array(rgb: np.ndarray, max_side: int | None, fmt: str, quality: int) -> ImagePart:
    import cv2  # here, not at the top: listing providers or catching their errors needs no OpenCV

    if not isinstance(rgb, np.ndarray) or rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
        shape = getattr(rgb, "shape", None)
        raise ValueError(f"expected an RGB uint8 array (H, W, 3), got {type(rgb).__name__} {shape}")
    height, width = rgb.shape[:2]
    size = encoded_size(width, height, max_side)
    if size != (width, height):
        rgb = cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)
        width, height = size
    params: Sequence[int] = []
    if fmt == "jpeg":
        params = [cv2.IMWRITE_JPEG_QUALITY, quality]
    elif fmt == "webp":
        params = [cv2.IMWRITE_WEBP_QUALITY, quality]
    ok, buf = cv2.imencode(
        "." + ("jpg" if fmt == "jpeg" else fmt), cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), params
    )
    if not ok:
        raise ValueError(f"could not encode a {width}x{height} image as {fmt}")
    return ImagePart(data=buf.tobytes(), mime_type=_MIME[fmt], width=width, height=height)


@functools.lru_cache(maxsize=512)
def _encode_file(
    path: str, size: int, mtime_ns: int, max_side: int | None, fmt: str, quality: int
) -> ImagePart:
    from kinegraph.media import read_image

    return _encode_array(read_image(path), max_side, fmt, quality)
