from __future__ import annotations

import numpy as np
import pytest

from kinegraph.benchmarks.synthetic.maneuvers import script_maneuver
from kinegraph.tools.encoders import (
    coordinates_text,
    encode_trajectory,
    select_indices,
    summary_text,
    timeseries_text,
)
from kinegraph.tools.kinematics import clip_kinematics

FEATURES = {
    "max_speed": 8.2,
    "mean_speed": 7.4,
    "min_accel": -1.234,
    "max_abs_yaw_rate": 0.0421,
    "max_abs_jerk": 2.851,
    "mean_abs_jerk": 0.9123,
    "max_lateral_accel": 0.3449,
    "total_heading_change": 0.12649,
}
SUMMARY = (
    "Vehicle dynamics: max_speed=8.2m/s (30km/h), mean_speed=7.4m/s, min_accel=-1.23m/s², "
    "max_yaw_rate=0.042rad/s, max_jerk=2.85m/s³, mean_jerk=0.91m/s³, max_lat_accel=0.34m/s², "
    "heading_change=0.126rad"
)


def _arrays() -> dict[str, np.ndarray]:
    t = np.linspace(0.0, 3.0, 31)
    return {
        "timestamps": t,
        "position": np.column_stack([100.0 + 2.0 * t, -50.0 + 0.5 * t]),
        "yaw": 1.5708 + 0.01 * t,
        "speed": 7.0 + 0.1 * t,
        "accel": np.full(31, 0.1),
        "yaw_rate": np.full(31, 0.0123),
        "jerk": np.zeros(31),
    }


def test_index_selection() -> None:
    assert select_indices(31, 10) == [0, 3, 7, 10, 13, 17, 20, 23, 27, 30]
    assert select_indices(5, 10) == [0, 1, 2, 3, 4]
    assert select_indices(31, 1) == [15]
    assert select_indices(0, 10) == []


def test_summary_format() -> None:
    assert summary_text(FEATURES) == SUMMARY
    assert summary_text({}) == (
        "Vehicle dynamics: max_speed=0.0m/s (0km/h), mean_speed=0.0m/s, min_accel=0.00m/s², "
        "max_yaw_rate=0.000rad/s, max_jerk=0.00m/s³, mean_jerk=0.00m/s³, max_lat_accel=0.00m/s², "
        "heading_change=0.000rad"
    )


def test_timeseries_format() -> None:
    assert timeseries_text(_arrays()) == "\n".join(
        [
            "Vehicle dynamics (10 time-steps over 3.0s):",
            "t(s):    0.00, 0.30, 0.70, 1.00, 1.30, 1.70, 2.00, 2.30, 2.70, 3.00",
            "speed(m/s): 7.0, 7.0, 7.1, 7.1, 7.1, 7.2, 7.2, 7.2, 7.3, 7.3",
            "accel(m/s²): 0.10, 0.10, 0.10, 0.10, 0.10, 0.10, 0.10, 0.10, 0.10, 0.10",
            "yaw_rate(rad/s): 0.012, 0.012, 0.012, 0.012, 0.012, 0.012, 0.012, 0.012, 0.012, 0.012",
            "jerk(m/s³): 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00",
        ]
    )


def test_coordinates_format_keeps_map_axes_and_absolute_heading() -> None:
    assert coordinates_text(_arrays(), num_points=4) == "\n".join(
        [
            "Vehicle trajectory (4 waypoints over 3.0s, metres):",
            "t(s): 0.00, 1.00, 2.00, 3.00",
            "x(m): 0.0, 2.0, 4.0, 6.0",
            "y(m): 0.0, 0.5, 1.0, 1.5",
            "heading(rad): 1.571, 1.581, 1.591, 1.601",
        ]
    )


def test_modes_and_fallbacks() -> None:
    arrays = _arrays()
    assert encode_trajectory("none", FEATURES, arrays) is None
    assert encode_trajectory("summary", FEATURES, arrays) == SUMMARY
    assert encode_trajectory("full", FEATURES, arrays) == timeseries_text(arrays) + "\n" + coordinates_text(
        arrays
    )
    for mode in ("timeseries", "coordinates", "full", "polar"):
        assert encode_trajectory(mode, FEATURES, None) == SUMMARY
    assert timeseries_text({}) == "" and coordinates_text({"timestamps": np.zeros(3)}) == ""


def test_encodes_clip_kinematics_directly() -> None:
    track = script_maneuver("right_turn", 2)
    kin = clip_kinematics(track.timestamps_s, track.xy_m, track.yaw_rad)
    text = encode_trajectory("full", kin)
    assert text.startswith("Vehicle dynamics (10 time-steps over 3.0s):\nt(s):    0.00, 0.30, 0.70,")
    assert "\nVehicle trajectory (10 waypoints over 3.0s, metres):\n" in text
    heading = text.rsplit("heading(rad): ", 1)[1].split(", ")
    assert float(heading[0]) == pytest.approx(0.0, abs=1e-3) and float(heading[-1]) < -0.5
    assert encode_trajectory("summary", kin).startswith(
        f"Vehicle dynamics: max_speed={kin.features['max_speed']:.1f}"
    )
