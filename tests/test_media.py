"""Frame sampling and decoding on real image and video files."""

from __future__ import annotations

import numpy as np
import pytest

from kinegraph.errors import DataError
from kinegraph.media import even_indices, load_frames, read_video, write_image, write_video
from kinegraph.types import Media


def test_even_indices_matches_upstream_formula():
    # 31 samples -> 10 points: the indices EgoDyn's timeseries encoding uses
    assert even_indices(31, 10) == [0, 3, 7, 10, 13, 17, 20, 23, 27, 30]
    assert even_indices(5, 10) == [0, 1, 2, 3, 4]
    assert even_indices(7, 1) == [3]
    with pytest.raises(ValueError):
        even_indices(0, 3)


def _ramp_frames(n: int) -> np.ndarray:
    return np.stack([np.full((48, 64, 3), 20 * i, np.uint8) for i in range(n)])


def test_video_roundtrip_selects_requested_frames(tmp_path):
    path = tmp_path / "clip.mp4"
    write_video(path, _ramp_frames(10), fps=10.0)
    frames, record = load_frames(Media(kind="video", video_path=str(path)), k=4)
    assert record.indices == [0, 3, 6, 9]
    assert record.timestamps_s == pytest.approx([0.0, 0.3, 0.6, 0.9])
    # lossy codec: brightness ordering survives
    means = frames.reshape(4, -1).mean(axis=1)
    assert np.all(np.diff(means) > 30)


def test_frames_media_and_missing_file(tmp_path):
    paths = []
    for i, frame in enumerate(_ramp_frames(3)):
        paths.append(str(tmp_path / f"{i}.png"))
        write_image(paths[-1], frame)
    frames, record = load_frames(Media(kind="frames", frame_paths=paths, fps=2.0))
    assert frames.shape == (3, 48, 64, 3) and record.timestamps_s == [0.0, 0.5, 1.0]
    assert int(frames[2, 0, 0, 0]) == 40
    with pytest.raises(DataError, match="missing.png"):
        load_frames(Media(kind="frames", frame_paths=[str(tmp_path / "missing.png")]))


def test_frames_named_as_nuscenes_names_them_record_their_capture_times(tmp_path):
    times_us = [1533151603512404, 1533151604012404, 1533151604512409, 1533151605012404]
    paths = [str(tmp_path / f"n008-2018-08-01-15-16-36-0400__CAM_FRONT__{t}.jpg") for t in times_us]
    for path, frame in zip(paths, _ramp_frames(4), strict=True):
        write_image(path, frame)
    # the capture times, not index / fps (keyframes are not exactly 2 Hz apart)
    _, record = load_frames(Media(kind="frames", frame_paths=paths, fps=2.0), k=2)
    assert record.indices == [0, 3]
    assert record.timestamps_s == [1533151603.512404, 1533151605.012404]
    # one name without a time: back to index / fps
    write_image(tmp_path / "extra.jpg", _ramp_frames(1)[0])
    _, record = load_frames(
        Media(kind="frames", frame_paths=[*paths[:2], str(tmp_path / "extra.jpg")], fps=2.0)
    )
    assert record.timestamps_s == [0.0, 0.5, 1.0]


def test_corrupt_video_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"not a video")
    with pytest.raises(DataError, match="bad.mp4"):
        read_video(bad)
