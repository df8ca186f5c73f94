"""Thumbnails of the frames a prediction records, decoded from its media on request (JPEG bytes)."""

from __future__ import annotations

from pathlib import Path

from kinegraph.errors import DataError
from kinegraph.types import FrameRecord

#: Longest side of a thumbnail, in pixels.
THUMB_SIDE_PX = 240
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp")


def frame_paths(source: str) -> list[Path]:
    """The image sequence `source` (the first frame) belongs to: its folder's images of the same kind,
    sorted, which is how frame folders are read (indices count into this list)."""
    first = Path(source)
    return sorted(p for p in first.parent.iterdir() if p.suffix.lower() == first.suffix.lower())


def thumbnail(frames: FrameRecord, k: int) -> bytes:
    """The `k`-th frame the prediction used, as a JPEG of at most THUMB_SIDE_PX a side."""
    import cv2

    from kinegraph.media import read_image, read_video

    if frames.source is None or not 0 <= k < len(frames.indices):
        raise DataError(f"the prediction records no frame {k}")
    index = frames.indices[k]
    if Path(frames.source).suffix.lower() in IMAGE_SUFFIXES:
        paths = frame_paths(frames.source)
        if index >= len(paths):
            raise DataError(f"frame {index} is not in the folder of {frames.source}")
        rgb = read_image(paths[index])
    else:
        rgb = read_video(frames.source, [index])[0][0]
    scale = THUMB_SIDE_PX / max(rgb.shape[:2])
    if scale < 1:
        rgb = cv2.resize(rgb, (round(rgb.shape[1] * scale), round(rgb.shape[0] * scale)), cv2.INTER_AREA)
    ok, jpeg = cv2.imencode(".jpg", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 85])
    if not ok:
        raise DataError(f"frame {index} of {frames.source} could not be encoded")
    return jpeg.tobytes()
