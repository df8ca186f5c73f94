"""The tracker on rendered clips (and through a real mp4 file) against the exact drawn positions."""

from __future__ import annotations

import numpy as np
import pytest

from kinegraph.benchmarks.quantiphy.render import background, draw_box, draw_disc
from kinegraph.media import read_video, write_video
from kinegraph.tools.tracker import difference, find_blobs, median_background, track_objects

N, H, W = 30, 240, 320
T = np.arange(N) / 30.0
# A disc crossing left to right at constant speed, and a box falling from rest (slow at first).
DISC_XY = np.stack([40 + 200 * T, 170 + 20 * T], axis=1)
BOX_XY = np.stack([np.full(N, 250.0), 40 + 0.5 * 150 * T**2], axis=1)
DISC_D, BOX_WH = 30.0, (36.0, 22.0)


def render(kind: str = "S", seed: int = 0) -> np.ndarray:
    bg = background(kind, H, W, np.random.default_rng(seed))
    frames = np.empty((N, H, W, 3), np.uint8)
    for i in range(N):
        frame = bg.copy()
        draw_disc(frame, DISC_XY[i], DISC_D, (220, 40, 40))
        draw_box(frame, BOX_XY[i], BOX_WH, (40, 80, 230))
        frames[i] = frame
    return frames


SEEDS = [(20.0, 150.0, 60.0, 190.0), (228.0, 25.0, 272.0, 55.0)]


@pytest.mark.parametrize("kind", ["X", "S", "C"])
def test_seeded_tracks_match_the_drawn_objects(kind):
    disc, box = track_objects(render(kind), SEEDS)
    assert np.abs(disc.centre_px - DISC_XY).max() < 0.3
    assert np.abs(box.centre_px - BOX_XY).max() < 0.3
    assert np.abs(disc.extent_px - DISC_D).max() < 1.0
    assert np.abs(box.extent_px - np.array(BOX_WH)).max() < 1.0


def test_seed_order_decides_which_track_is_which():
    box, disc = track_objects(render(), SEEDS[::-1])
    assert np.abs(disc.centre_px - DISC_XY).max() < 0.3
    assert np.abs(box.centre_px - BOX_XY).max() < 0.3


def test_second_background_pass_removes_a_slow_object_burnt_into_the_median():
    frames = render("S")
    plain = median_background(frames)
    first = sorted(find_blobs(difference(frames[0], plain)), key=lambda b: b.centre_px[0])[-1]
    # The box barely moves in the first frames, so the plain median keeps part of it: the blob shrinks.
    assert first.extent_px[1] < BOX_WH[1] - 3
    _, box = track_objects(frames, SEEDS)
    assert abs(box.extent_px[0, 1] - BOX_WH[1]) < 1.0


def test_through_a_real_mp4_file(tmp_path):
    path = tmp_path / "clip.mp4"
    write_video(path, render("C"), 30.0)
    frames, fps = read_video(path)
    assert fps == 30.0
    disc, box = track_objects(frames, SEEDS)
    assert np.abs(disc.centre_px - DISC_XY).max() < 0.6
    assert np.abs(box.centre_px - BOX_XY).max() < 0.6
    assert np.median(np.abs(disc.extent_px - DISC_D)) < 1.0


def test_without_seeds_every_component_of_the_seed_frame_is_tracked():
    tracks = track_objects(render("X"))
    assert len(tracks) == 2
    starts = sorted(tuple(t.centre_px[0].round()) for t in tracks)
    assert starts == [(40.0, 170.0), (250.0, 40.0)]


def test_an_object_that_leaves_is_unseen_from_then_on():
    frames = render("X")
    frames[20:] = frames[0]  # freeze: both objects now sit still at their first positions
    frames[20:, 130:210, :] = frames[0, 0, 0]  # wipe the disc's area
    disc, _ = track_objects(frames, SEEDS, background=background("X", H, W, np.random.default_rng(0)))
    assert np.isfinite(disc.centre_px[:20]).all()
    assert np.isnan(disc.centre_px[20:]).all()


def test_a_seed_with_nothing_inside_gives_an_unseen_track():
    (track,) = track_objects(render(), [(150.0, 200.0, 170.0, 230.0)])
    assert np.isnan(track.centre_px).all()


@pytest.mark.parametrize(
    ("frames", "seeds", "kwargs", "message"),
    [
        (np.zeros((1, 8, 8, 3), np.uint8), None, {}, "too few frames"),
        (np.zeros((4, 8, 8), np.uint8), None, {}, "must be uint8"),
        (np.zeros((4, 8, 8, 3), np.float32), None, {}, "must be uint8"),
        (np.zeros((4, 8, 8, 3), np.uint8), [(5.0, 5.0, 1.0, 1.0)], {}, "seed box"),
        (np.zeros((4, 8, 8, 3), np.uint8), None, {"seed_frame": 4}, "seed_frame"),
    ],
)
def test_bad_input(frames, seeds, kwargs, message):
    with pytest.raises(ValueError, match=message):
        track_objects(frames, seeds, **kwargs)
