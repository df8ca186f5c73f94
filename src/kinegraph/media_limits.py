"""The media limits every door applies (`serve`, MCP, Studio): one implementation, one refusal type.

Image dimensions are read from the file header before anything is decoded (a 50000x50000 PNG of a few
kilobytes is refused without allocating its pixels). A video's frame size comes from its container
header, and where its packets are still images (MJPEG) from each packet's own header too, since a header
can claim 64x64 frames over a stream of 16000x16000 ones. While a graph or tool decodes, `decoding_within`
makes a frame over the pixel limit, more frames than `max_frames`, or more than `max_decoded_bytes` of
pixels an error before they are kept.
File references are resolved under the root by `kinegraph.paths` (opened by descriptor).
"""

from __future__ import annotations

import base64
import binascii
import io
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import cv2
from PIL import Image, UnidentifiedImageError

IMAGE_SUFFIX = {"JPEG": ".jpg", "PNG": ".png", "WEBP": ".webp"}
_DATA_URL = re.compile(r"^data:(?P<mime>[\w.+-]+/[\w.+-]+)?(?:;[\w-]+=[^;,]*)*;base64,", re.ASCII)

#: Codecs whose packets are whole image files (MJPEG, PNG and the like). Pillow's MPEG reader is left out:
#: it takes MPEG-4 video packets for images and reads sizes out of them that mean nothing.
STILL_FORMATS = ("JPEG", "PNG", "BMP", "TIFF", "WEBP", "GIF", "JPEG2000", "PPM")


class InputRefused(Exception):
    """An input a door will not take; `status` is the HTTP status serve answers with, `kind` its type."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error", **headers: str):
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind
        self.headers = {k.replace("_", "-"): v for k, v in headers.items()}


@dataclass(frozen=True)
class MediaLimits:
    """The root file references are confined to, and the limits on what one request or call decodes."""

    data_root: Path | None
    max_frames: int = 64
    max_image_pixels: int = 4096 * 4096
    max_video_frames: int = 3000
    #: Decoded pixels one request or call may keep from a clip (RGB bytes): a memory bound per call.
    max_decoded_bytes: int = 1 << 30

    def __post_init__(self) -> None:
        for name in ("max_frames", "max_image_pixels", "max_video_frames", "max_decoded_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")

    def checked_root(self) -> MediaLimits:
        """These limits, after checking that the data root (if any) is a directory (ValueError if not)."""
        if self.data_root is not None and not Path(self.data_root).is_dir():
            raise ValueError(f"{self.data_root}: the data root is not a directory")
        return self


def invalid(message: str) -> InputRefused:
    return InputRefused(422, message)


def unsupported(message: str) -> InputRefused:
    return InputRefused(415, message, "unsupported_media_type")


@contextmanager
def decoding_within(limits: MediaLimits) -> Iterator[None]:
    """Within this block (and the tasks and threads it starts) decoding keeps to `limits`' frame size and
    frame count, whatever a graph's options or a container header say."""
    from kinegraph.media import frame_count_limit, frame_pixel_limit

    with (
        frame_pixel_limit(limits.max_image_pixels),
        frame_count_limit(limits.max_frames, limits.max_decoded_bytes),
    ):
        yield


def decode_base64_image(text: str, where: str) -> bytes:
    """The bytes of a `data:image/...;base64,` URL or of bare base64 text."""
    match = _DATA_URL.match(text)
    if text.startswith("data:") and match is None:
        raise invalid(f"{where}: a data URL must be base64 (data:image/png;base64,...)")
    payload = text[match.end() :] if match else text
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise invalid(f"{where}: not valid base64") from None


def check_image(source: bytes | Path, max_pixels: int, where: str) -> str:
    """The image's format (JPEG, PNG or WEBP), read from its header; 415/422 for anything else."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(source) if isinstance(source, bytes) else source) as image:
                fmt, (width, height) = image.format, image.size
    except Image.DecompressionBombError:
        raise invalid(f"{where}: image dimensions exceed the limit of {max_pixels} pixels") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        raise unsupported(f"{where}: not a JPEG, PNG or WebP image") from None
    if fmt not in IMAGE_SUFFIX:
        raise unsupported(f"{where}: {fmt} images are not accepted (JPEG, PNG or WebP)")
    if width * height > max_pixels:
        raise invalid(f"{where}: {width}x{height} image exceeds the limit of {max_pixels} pixels")
    return fmt


def check_video(path: Path, limits: MediaLimits, where: str) -> None:
    """Frame size and count from the container header, and each still-image packet's size, before any
    frame is decoded."""
    cap = cv2.VideoCapture(str(path))
    try:
        if not cap.isOpened():
            raise unsupported(f"{where}: not a readable video")
        width = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH))
        height = int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
        n_frames = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
    finally:
        cap.release()
    if width <= 0 or height <= 0 or n_frames <= 0:
        raise unsupported(f"{where}: not a readable video")
    if width * height > limits.max_image_pixels:
        limit = limits.max_image_pixels
        raise invalid(f"{where}: {width}x{height} frames exceed the limit of {limit} pixels")
    if n_frames > limits.max_video_frames:
        raise invalid(f"{where}: {n_frames} frames exceed the limit of {limits.max_video_frames}")
    check_packet_frames(path, limits.max_image_pixels, where)


def check_packet_frames(path: Path, max_pixels: int, where: str) -> None:
    """Each packet that is a still image (MJPEG and the like) within `max_pixels`, read undecoded."""
    cap = cv2.VideoCapture(str(path), cv2.CAP_FFMPEG, [cv2.CAP_PROP_FORMAT, -1])  # raw: demux only
    try:
        index = 0
        while cap.isOpened():
            ok, packet = cap.read()
            if not ok:
                return
            try:
                size = _still_image_size(packet.tobytes())
            except Image.DecompressionBombError:
                raise _frame_over(where, index, "", max_pixels) from None
            if size is not None and size[0] * size[1] > max_pixels:
                raise _frame_over(where, index, f" is {size[0]}x{size[1]},", max_pixels)
            index += 1
    finally:
        cap.release()


def _frame_over(where: str, index: int, size: str, max_pixels: int) -> InputRefused:
    return invalid(
        f"{where}: frame {index}{size} over the limit of {max_pixels} pixels "
        "(the container header claims smaller frames)"
    )


def _still_image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from the header of a packet that is an image file; None for other codecs' packets.

    Raises Pillow's DecompressionBombError for a header past Pillow's own limit.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=STILL_FORMATS) as image:
                return image.size
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        return None
