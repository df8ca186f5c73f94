"""Turn a request's frames or video into a Sample's media, checking every limit.

Image dimensions are read from the file header before anything is decoded (a 50000x50000 PNG of a few
kilobytes is refused without allocating its pixels). A video's frame size comes from its container
header, and where its packets are still images (MJPEG) from each packet's own header too, since a header
can claim 64x64 frames over a stream of 16000x16000 ones. File references are resolved under the data
root with symlinks followed, so neither `..` nor a link can leave it. Uploads are written to a
per-request directory that the caller deletes afterwards.
"""

from __future__ import annotations

import base64
import binascii
import io
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import cv2
from PIL import Image, UnidentifiedImageError

from kinegraph.serve.errors import ServeError
from kinegraph.serve.schemas import QARequest
from kinegraph.serve.settings import ServeSettings
from kinegraph.types import Media

IMAGE_SUFFIX = {"JPEG": ".jpg", "PNG": ".png", "WEBP": ".webp"}
NAME_MAX_BYTES = 255  # longest file name Linux file systems allow (NAME_MAX)
_DATA_URL = re.compile(r"^data:(?P<mime>[\w.+-]+/[\w.+-]+)?(?:;[\w-]+=[^;,]*)*;base64,", re.ASCII)


@dataclass
class Uploads:
    """Files that came in a multipart body: frames in order, and at most one video."""

    frames: list[bytes] = field(default_factory=list)
    video: bytes | None = None


def invalid(message: str) -> ServeError:
    return ServeError(422, message)


def unsupported(message: str) -> ServeError:
    return ServeError(415, message, "unsupported_media_type")


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


def check_video(path: Path, settings: ServeSettings, where: str) -> None:
    """Frame size and count from the container header, before any frame is decoded."""
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
    if width * height > settings.max_image_pixels:
        raise invalid(
            f"{where}: {width}x{height} frames exceed the limit of {settings.max_image_pixels} pixels"
        )
    if n_frames > settings.max_video_frames:
        raise invalid(f"{where}: {n_frames} frames exceed the limit of {settings.max_video_frames}")
    check_packet_frames(path, settings.max_image_pixels, where)


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


def _frame_over(where: str, index: int, size: str, max_pixels: int) -> ServeError:
    return invalid(
        f"{where}: frame {index}{size} over the limit of {max_pixels} pixels "
        "(the container header claims smaller frames)"
    )


#: Codecs whose packets are whole image files (MJPEG, PNG and the like). Pillow's MPEG reader is left out:
#: it takes MPEG-4 video packets for images and reads sizes out of them that mean nothing.
STILL_FORMATS = ("JPEG", "PNG", "BMP", "TIFF", "WEBP", "GIF", "JPEG2000", "PPM")


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


def resolve_under(root: Path | None, reference: str, where: str) -> Path:
    """`reference` (relative to `root`) as an existing file inside `root`, symlinks resolved."""
    if root is None:
        raise ServeError(400, f"{where}: file references are disabled (the server has no --data-root)")
    if not reference or "\x00" in reference or Path(reference).is_absolute():
        raise ServeError(403, f"{where}: must be a relative path under the data root", "forbidden")
    try:
        longest = max((len(part.encode()) for part in Path(reference).parts), default=0)
    except UnicodeEncodeError:
        raise invalid(f"{where}: not valid UTF-8 text") from None
    if longest > NAME_MAX_BYTES:
        raise invalid(f"{where}: a path component is {longest} bytes long; the limit is {NAME_MAX_BYTES}")
    base = root.resolve()
    try:
        path = (base / reference).resolve()
    except (OSError, RuntimeError):
        raise ServeError(403, f"{where}: cannot be resolved under the data root", "forbidden") from None
    if not path.is_relative_to(base):
        raise ServeError(403, f"{where}: path escapes the data root", "forbidden")
    try:
        is_file = path.is_file()
    except OSError as exc:  # e.g. the whole path over PATH_MAX, or a directory without permission
        raise invalid(f"{where}: cannot be read under the data root ({exc.strerror})") from None
    if not is_file:
        raise ServeError(404, f"{where}: no such file under the data root", "not_found")
    return path


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
            path = resolve_under(settings.data_root, reference, f"frame_paths[{i}]")
            check_image(path, settings.max_image_pixels, f"frame_paths[{i}]")
            paths.append(str(path))
        return Media(kind="frames", frame_paths=paths, fps=request.fps)
    if request.video_path is not None:
        video = resolve_under(settings.data_root, request.video_path, "video_path")
    elif uploads.video is not None:
        video = workdir / "video.bin"
        video.write_bytes(uploads.video)
    else:
        return Media()
    check_video(video, settings, "video")
    return Media(kind="video", video_path=str(video), fps=request.fps)
