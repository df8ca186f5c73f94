"""Named capture conditions: every name resolves, and any name + "/camera_unknown" leaves the camera out."""

from __future__ import annotations

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
