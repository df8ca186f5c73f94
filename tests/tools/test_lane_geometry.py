"""The lane comb: which spacing of lane markings the lateral offsets of their pixels show.

Offsets are in camera heights (+ = left), drawn around hand-placed lines with a pixel's jitter and over
a floor of grain, so the true spacing is known without any rendering.
"""

from __future__ import annotations

import numpy as np
import pytest

from kinegraph.tools.lane_geometry import LANE_WIDTH_M, lane_spacing


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
    spacing = lane_spacing(offsets_of([-1.5 * LANE, -0.5 * LANE, 0.5 * LANE, 1.5 * LANE], seed))
    assert spacing == pytest.approx(LANE, abs=0.03)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_two_edge_lines_alone_read_as_three_lanes_not_two_wide_ones(seed: int) -> None:
    """At dusk the dashes between lanes are too dim to detect and only the road's two solid edges show,
    1.5 lanes either side of the car. Two lanes of 1.5 widths would put a line right under the car,
    where none is seen; three lanes of one width put the unseen lines where dashes go. Before: the comb
    took two wide lanes (it pays a toll per empty tooth), and the height read 1.33 m for 2.0 m."""
    spacing = lane_spacing(offsets_of([-1.5 * LANE, 1.5 * LANE], seed))
    assert spacing == pytest.approx(LANE, abs=0.03)
    assert LANE_WIDTH_M / spacing == pytest.approx(HEIGHT_M, rel=0.02)


def test_a_line_under_the_car_that_is_seen_is_kept() -> None:
    """Changing lanes, the car drives over a line it sees: that comb stays allowed."""
    spacing = lane_spacing(offsets_of([-LANE, 0.0, LANE]))
    assert spacing == pytest.approx(LANE, abs=0.03)
