"""The lane comb: which spacing of lane markings the lateral offsets of their pixels show, and how much
of the markings lie on its lines.

Offsets are in camera heights (+ = left), drawn around hand-placed lines with a pixel's jitter and over
a floor of grain, so the true spacing is known without any rendering.
"""

from __future__ import annotations

import numpy as np
import pytest

from kinegraph.tools.camera_model import CameraModel
from kinegraph.tools.ego_trajectory import lanes_hold, mean_view
from kinegraph.tools.lane_geometry import (
    LANE_WIDTH_M,
    HeightEstimate,
    height_from_lanes,
    height_from_offsets,
    lane_spacing,
    marking_pixels,
)


def offsets_of(lines: list[float], seed: int = 0, per_line: int = 800, grain: int = 400) -> np.ndarray:
    """Marking pixels' lateral offsets (heights): `per_line` around each line, plus uniform grain."""
    rng = np.random.default_rng(seed)
    painted = [rng.normal(line, 0.02, per_line) for line in lines]
    return np.concatenate([*painted, rng.uniform(-4.0, 4.0, grain)])


HEIGHT_M = 2.0
LANE = LANE_WIDTH_M / HEIGHT_M  # 1.75 heights


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_line_seen_gives_the_lane_width(seed: int) -> None:
    """A car centred in the middle lane of three: lines at +-0.5 and +-1.5 lanes."""
    found = height_from_offsets(offsets_of([-1.5 * LANE, -0.5 * LANE, 0.5 * LANE, 1.5 * LANE], seed))
    assert found.spacing == pytest.approx(LANE, abs=0.03)
    assert found.height_m == pytest.approx(HEIGHT_M, rel=0.02)
    assert found.on_lines > 0.8  # 3,200 pixels on lines, ~70 of the grain around them


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_two_edge_lines_alone_read_as_three_lanes_not_two_wide_ones(seed: int) -> None:
    """At dusk the dashes between lanes are too dim to detect and only the road's two solid edges show,
    1.5 lanes either side of the car. Two lanes of 1.5 widths would put a line right under the car,
    where none is seen; three lanes of one width put the unseen lines where dashes go. Before: the comb
    took two wide lanes (it pays a toll per empty tooth), and the height read 1.33 m for 2.0 m."""
    spacing = lane_spacing(offsets_of([-1.5 * LANE, 1.5 * LANE], seed)).period
    assert spacing == pytest.approx(LANE, abs=0.03)
    assert LANE_WIDTH_M / spacing == pytest.approx(HEIGHT_M, rel=0.02)


def test_a_line_under_the_car_that_is_seen_is_kept() -> None:
    """Changing lanes, the car drives over a line it sees: that comb stays allowed."""
    assert lane_spacing(offsets_of([-LANE, 0.0, LANE])).period == pytest.approx(LANE, abs=0.03)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_markings_smeared_across_the_lane_lie_off_the_combs_lines(seed: int) -> None:
    """Turning through a junction, the one line in view bends under the car: back-projected from ten
    frames, its pixels spread evenly over 1.3-2.9 heights of offset, beside two short blobs (a stop
    line's end, a kerb) and grain. A comb still fits (at a 1.0-height period: a 3.4 m camera); what
    tells it from lines is that about a quarter of the markings around its lines lie on them (a line's
    width of a period: 0.16, plus the blobs), not most."""
    rng = np.random.default_rng(seed)
    smear = np.concatenate(
        [
            rng.uniform(1.3, 2.9, 3000),
            rng.normal(-0.3, 0.05, 300),
            rng.normal(-3.8, 0.05, 200),
            rng.uniform(-4.0, 4.0, 300),
        ]
    )
    found = height_from_offsets(smear)
    assert found.on_lines < 0.3


def test_a_turning_clip_needs_its_markings_on_the_combs_lines() -> None:
    """The smeared comb above, 3.4 m, on a clip turning by 60 deg is refused (the height stays assumed);
    driving straight it stands, as it does on lines, turning or not, and so does a smeared comb giving
    a car's height (1.85 m: on a held-out dusk turn, for a true 1.91)."""
    smeared = HeightEstimate(3.4, 0.24, 1.03, 0.25)
    on_lines = HeightEstimate(3.4, 0.24, 1.03, 0.9)
    plausible = HeightEstimate(1.85, 0.13, 1.89, 0.25)
    assert not lanes_hold(smeared, turn_deg=60.0)
    assert lanes_hold(smeared, turn_deg=2.0)
    assert lanes_hold(on_lines, turn_deg=60.0)
    assert lanes_hold(plausible, turn_deg=60.0)


def test_paint_too_faint_for_any_frame_gives_the_height_on_the_clips_mean_view() -> None:
    """A dark road (grey 40) seen by a level camera 1.8 m high (480x270, 240 px focal length), lines 15 cm
    wide painted 1.75 m and 5.25 m either side, 10 grey levels over the road, under sensor noise of 6 in
    each of 30 frames. No frame shows a marking pixel (10 levels is under what noise lets through), so
    no frame gives a height; their mean view, where the noise averages to 1.1, gives 3.5 m lanes at
    1.8 m (the comb's period of 1.95 heights: 1.795 m)."""
    height_m, focal_px, h, w = 1.8, 240.0, 270, 480
    camera = CameraModel(focal_px, focal_px, (w - 1) / 2, (h - 1) / 2, height_m, pitch_rad=0.0)
    below = np.arange(h)[:, None] - camera.cy_px
    lateral_m = (np.arange(w)[None, :] - camera.cx_px) * height_m / np.where(below > 0, below, np.inf)
    paint = np.any([np.abs(lateral_m - x) < 0.075 for x in (-5.25, -1.75, 1.75, 5.25)], axis=0)
    rng = np.random.default_rng(0)
    frames = [np.clip(40 + 10 * paint + rng.normal(0, 6, (h, w)), 0, 255).astype(np.uint8) for _ in range(30)]
    assert not any(marking_pixels(frame).any() for frame in frames)
    assert height_from_lanes(frames, camera, 0.0) is None
    found = height_from_lanes([mean_view(frames)], camera, 0.0)
    assert found is not None
    assert found.height_m == pytest.approx(height_m, rel=0.02)
    assert found.on_lines > 0.8
