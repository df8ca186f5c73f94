"""Named capture conditions: every name resolves, and any name + "/camera_unknown" leaves the camera out."""

from __future__ import annotations

import numpy as np
import pytest

from kinegraph.benchmarks.synthetic.conditions import CONDITIONS, DUSK, Conditions, condition


def test_every_named_condition_resolves_to_itself() -> None:
    assert all(condition(name) is conditions for name, conditions in CONDITIONS.items())


def test_any_condition_with_the_camera_unknown_keeps_everything_else() -> None:
    dark = condition("dark/camera_unknown")
    assert dark.camera_given is False and CONDITIONS["dark"].camera_given is True
    assert (dark.exposure, dark.contrast) == (0.3, 0.6)
    highway = condition("dusk_highway/camera_unknown")
    assert highway.camera_given is False
    assert (highway.jpeg_quality, highway.resolution, highway.height_m) == (
        DUSK.jpeg_quality,
        (960, 540),
        2.0,
    )


@pytest.mark.parametrize("name", ["dusky", "dark/camera_known", "/camera_unknown"])
def test_an_unknown_name_is_refused_with_the_known_ones(name: str) -> None:
    with pytest.raises(KeyError, match="known: clean, drawn"):
        condition(name)


@pytest.mark.parametrize("traffic", [-1, 41])
def test_traffic_beyond_what_a_road_holds_is_refused(traffic: int) -> None:
    with pytest.raises(ValueError, match=f"traffic must be within 0..40 vehicles, got {traffic}"):
        Conditions(traffic=traffic)


@pytest.mark.parametrize(
    ("fps", "n_frames", "last_s"),
    [(5.0, 16, 3.0), (10.0, 31, 3.0), (12.5, 38, 2.96), (15.0, 46, 3.0), (7.0, 22, 3.0)],
)
def test_frames_are_captured_within_the_window(fps: float, n_frames: int, last_s: float) -> None:
    """3 s at 12.5 fps is 37.5 gaps: 38 frames, the last at 2.96 s; a 39th at 3.04 s lies past the window
    (the last window of a drive has no track there, and its frame froze)."""
    times = Conditions(fps=fps).frame_times_s(3.0, np.random.default_rng(0))
    assert len(times) == n_frames
    assert times[-1] == pytest.approx(last_s)
    assert times[-1] <= 3.0 + 1e-9
