"""Frame encoding: exact pixels round-trip, max side, formats, files memoised, messages with many frames."""

from __future__ import annotations

import numpy as np
import pytest

from kinegraph.agents import ImagePart, TextPart, encode_frames, encode_image, user_message
from kinegraph.agents.images import decode_image
from kinegraph.errors import DataError
from kinegraph.media import write_image


def test_png_round_trips_exact_rgb_pixels(frames):
    part = encode_image(frames[0], fmt="png")
    assert part.mime_type == "image/png" and (part.width, part.height) == (64, 48)
    assert np.array_equal(decode_image(part), frames[0])  # channel order kept (RGB in, RGB out)


def test_jpeg_keeps_colour_channels_in_rgb_order():
    red = np.zeros((32, 32, 3), np.uint8)
    red[..., 0] = 255
    decoded = decode_image(encode_image(red, quality=95))
    assert decoded[..., 0].min() > 240 and decoded[..., 2].max() < 15


def test_max_side_shrinks_longer_side_and_keeps_aspect(frames):
    part = encode_image(frames[0], max_side=32)
    assert (part.width, part.height) == (32, 24)
    assert decode_image(part).shape == (24, 32, 3)
    untouched = encode_image(frames[0], max_side=640)
    assert (untouched.width, untouched.height) == (64, 48)


def test_encoding_is_deterministic_and_reusable(frames):
    a, b = encode_image(frames[1]), encode_image(frames[1])
    assert a.data == b.data and a.sha256 == b.sha256
    assert encode_frames([a]) == [a] and encode_frames([a])[0] is a


def test_files_are_encoded_once(tmp_path, frames):
    path = tmp_path / "f.png"
    write_image(path, frames[0])
    first, second = encode_image(path), encode_image(str(path))
    assert first is second
    write_image(path, frames[1])  # rewritten file -> new bytes
    assert encode_image(path).data != first.data


def test_user_message_puts_frames_before_text(frames):
    message = user_message("Is the car turning?", frames)
    assert message.role == "user"
    assert [type(p) for p in message.content] == [ImagePart, ImagePart, ImagePart, TextPart]
    after = user_message("q", list(frames[:1]), images_first=False)
    assert [type(p) for p in after.content] == [TextPart, ImagePart]


def test_bad_inputs_are_clear(tmp_path, frames):
    with pytest.raises(ValueError, match="RGB uint8"):
        encode_image(frames[0].astype(np.float32))
    with pytest.raises(ValueError, match="wrap it in a list"):
        encode_frames(frames[0])
    with pytest.raises(DataError, match="missing"):
        encode_image(tmp_path / "absent.jpg")
    with pytest.raises(ValueError, match="fmt"):
        encode_image(frames[0], fmt="bmp")  # type: ignore[arg-type]
