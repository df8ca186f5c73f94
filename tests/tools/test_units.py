"""Units of QuantiPhy text and the time <-> frame convention."""

from __future__ import annotations

import math

import pytest

from kinegraph.tools.units import convert, frame_to_time, from_si, parse_unit, time_to_frame, to_si


@pytest.mark.parametrize(
    ("text", "symbol", "dimension"),
    [
        ("cm", "cm", "length"),
        ("meters", "m", "length"),
        ("Centimetres", "cm", "length"),
        ("mm", "mm", "length"),
        ("m/s", "m/s", "speed"),
        ("cm / s", "cm/s", "speed"),
        ("meters per second", "m/s", "speed"),
        ("km/h", "km/h", "speed"),
        ("m/s^2", "m/s^2", "acceleration"),
        ("m/s²", "m/s^2", "acceleration"),
        ("m/s2", "m/s^2", "acceleration"),
        ("m/s/s", "m/s^2", "acceleration"),
        ("cm/s^2", "cm/s^2", "acceleration"),
        ("meters per second squared", "m/s^2", "acceleration"),
    ],
)
def test_spellings_map_to_one_unit(text, symbol, dimension):
    unit = parse_unit(text)
    assert (unit.symbol, unit.dimension) == (symbol, dimension)


@pytest.mark.parametrize("text", ["g", "kg", "pixels", "", "s"])
def test_unknown_or_ambiguous_units_are_refused(text):
    with pytest.raises(ValueError, match="unknown unit"):
        parse_unit(text)


def test_conversions():
    assert to_si(57.2, "mm") == pytest.approx(0.0572)
    assert to_si(36, "km/h") == pytest.approx(10.0)
    assert from_si(0.00144, "cm/s") == pytest.approx(0.144)
    assert convert(250, "cm", "meters") == pytest.approx(2.5)
    assert convert(980, "cm/s^2", "m/s²") == pytest.approx(9.8)


def test_conversion_across_dimensions_is_an_error():
    with pytest.raises(ValueError, match="cannot convert"):
        convert(1.0, "m", "m/s")


def test_time_and_frame():
    assert time_to_frame(0.0, 30) == 0
    assert time_to_frame(1.3, 30) == 39  # 1.3 * 30 = 39.00000000000001
    assert time_to_frame(0.6, 25) == 15
    assert time_to_frame(0.1, 25) == 2  # 2.5 rounds half to even, as the Blender ground truth does
    assert frame_to_time(36, 24) == 1.5


@pytest.mark.parametrize("fps", [0, -24, math.nan, math.inf])
def test_bad_fps_names_the_field(fps):
    with pytest.raises(ValueError, match="fps"):
        time_to_frame(1.0, fps)
    with pytest.raises(ValueError, match="fps"):
        frame_to_time(3, fps)


def test_negative_times_and_frames_are_refused():
    with pytest.raises(ValueError, match="time"):
        time_to_frame(-0.5, 30)
    with pytest.raises(ValueError, match="frame index"):
        frame_to_time(-1, 30)
