"""Videos whose container header lies about their frames, written chunk by chunk (OpenCV's writers refuse)."""

from __future__ import annotations

import struct
from collections.abc import Sequence

import cv2
import numpy as np

AVIF_HASINDEX = 0x10
AVIIF_KEYFRAME = 0x10


def jpeg(height: int, width: int, value: int = 0) -> bytes:
    return cv2.imencode(".jpg", np.full((height, width, 3), value, np.uint8))[1].tobytes()


def mjpeg_avi(frames: Sequence[bytes], width: int, height: int, fps: int = 4) -> bytes:
    """An MJPEG AVI of the given JPEG frames whose headers (avih, strh, strf) all declare width x height."""
    n = len(frames)
    avih = struct.pack("<14I", 1_000_000 // fps, 0, 0, AVIF_HASINDEX, n, 0, 1, 0, width, height, 0, 0, 0, 0)
    strh = b"vidsMJPG" + struct.pack(
        "<IHHIIIIIIIIhhhh", 0, 0, 0, 0, 1, fps, 0, n, 0, 0xFFFFFFFF, 0, 0, 0, width, height
    )
    strf = struct.pack("<IiiHH4sIiiII", 40, width, height, 1, 24, b"MJPG", width * height * 3, 0, 0, 0, 0)
    stream = _list(b"strl", _chunk(b"strh", strh) + _chunk(b"strf", strf))
    header = _list(b"hdrl", _chunk(b"avih", avih) + stream)
    movi, index, offset = b"", b"", 4  # idx1 offsets count from the `movi` fourcc
    for frame in frames:
        chunk = _chunk(b"00dc", frame)
        index += b"00dc" + struct.pack("<III", AVIIF_KEYFRAME, offset, len(frame))
        movi += chunk
        offset += len(chunk)
    return _chunk(b"RIFF", b"AVI " + header + _list(b"movi", movi) + _chunk(b"idx1", index))


def _chunk(fourcc: bytes, data: bytes) -> bytes:
    return fourcc + struct.pack("<I", len(data)) + data + (b"\0" if len(data) % 2 else b"")


def _list(kind: bytes, body: bytes) -> bytes:
    return _chunk(b"LIST", kind + body)
