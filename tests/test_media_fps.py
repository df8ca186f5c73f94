"""Frame sampling by rate (`fps`) on a real video file, and the sampling recorded with the frames."""

from __future__ import annotations

import numpy as np
import pytest

from kinegraph.errors import DataError
from kinegraph.media import fps_indices, load_frames_sampled, read_video, write_video
from kinegraph.types import Media


def _ramp(n: int) -> np.ndarray:
    """n frames, frame i a flat grey of level 3 * i (told apart after a lossy codec)."""
    return np.stack([np.full((32, 48, 3), 3 * i, np.uint8) for i in range(n)])


def test_two_frames_a_second_from_a_25_fps_video(tmp_path):
    # 3.2 s at 25 fps: frames 0..79. At 2 fps the times are 0, 0.5, ..., 3.0 s; the frame on screen at t
    # is floor(25 t): 0, 12 (12.5), 25, 37 (37.5), 50, 62 (62.5), 75.
    path = tmp_path / "clip.mp4"
    write_video(path, _ramp(80), fps=25.0)
    frames, record = load_frames_sampled(Media(kind="video", video_path=str(path)), fps=2.0)
    assert record.indices == [0, 12, 25, 37, 50, 62, 75]
    assert record.timestamps_s == pytest.approx([0.0, 0.48, 1.0, 1.48, 2.0, 2.48, 3.0])
    assert (record.sampling, record.sampling_value) == ("fps", 2.0)
    every, _ = read_video(path)  # the pixels are those frames' (decoded in one pass of the whole file)
    assert np.array_equal(frames, every[[0, 12, 25, 37, 50, 62, 75]])


def test_the_loaders_fps_wins_over_the_header(tmp_path):
    # QuantiPhy's CSV names the fps; a header written at 10 fps is not believed when the media says 20.
    path = tmp_path / "clip.mp4"
    write_video(path, _ramp(20), fps=10.0)
    _, record = load_frames_sampled(Media(kind="video", video_path=str(path), fps=20.0), fps=4.0)
    assert record.indices == [0, 5, 10, 15]
    assert record.timestamps_s == pytest.approx([0.0, 0.25, 0.5, 0.75])


def test_count_and_all_are_recorded_as_such(tmp_path):
    path = tmp_path / "clip.mp4"
    write_video(path, _ramp(10), fps=10.0)
    media = Media(kind="video", video_path=str(path))
    _, counted = load_frames_sampled(media, num_frames=4)
    assert (counted.indices, counted.sampling, counted.sampling_value) == ([0, 3, 6, 9], "count", 4)
    _, every = load_frames_sampled(media)
    assert (every.indices, every.sampling, every.sampling_value) == (list(range(10)), "all", None)
    given = media.model_copy(update={"frame_indices": [1, 2]})
    _, kept = load_frames_sampled(given, fps=2.0)
    assert (kept.indices, kept.sampling) == ([1, 2], "given")
    with pytest.raises(ValueError, match="not both"):
        load_frames_sampled(media, num_frames=4, fps=2.0)


def test_frame_files_sample_by_their_capture_times(tmp_path):
    # nuScenes-named frames at irregular times: 0, 0.3, 0.45, 1.1, 1.6 s; at 2 fps (t = 0, 0.5, 1.0, 1.5)
    # the frames on screen are 0, 2 (since 0.45), 2 again (left out), 3 (since 1.1).
    from kinegraph.media import write_image

    times_us = [1_000_000_000_000_000 + us for us in (0, 300_000, 450_000, 1_100_000, 1_600_000)]
    paths = []
    for i, frame in enumerate(_ramp(5)):
        paths.append(str(tmp_path / f"n008__CAM_FRONT__{times_us[i]}.jpg"))
        write_image(paths[-1], frame)
    _, record = load_frames_sampled(Media(kind="frames", frame_paths=paths), fps=2.0)
    assert record.indices == [0, 2, 3]
    assert record.timestamps_s == pytest.approx([1e9, 1e9 + 0.45, 1e9 + 1.1])


def test_rate_above_the_clips_repeats_no_frame_and_no_times_is_refused(tmp_path):
    assert fps_indices([0.0, 0.1, 0.2], 30.0) == [0, 1, 2]
    with pytest.raises(ValueError, match="positive"):
        fps_indices([0.0], 0.0)
    paths = [str(tmp_path / "a.png")]
    with pytest.raises(DataError, match="no fps and no timestamps"):
        load_frames_sampled(Media(kind="frames", frame_paths=paths), fps=2.0)
