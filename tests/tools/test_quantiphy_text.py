"""Parsing QuantiPhy priors, questions and depth_info, on hand-written cases and on the official files."""

from __future__ import annotations

import pandas as pd
import pytest

from kinegraph.errors import DataError
from kinegraph.tools.quantiphy_text import parse_depth_info, parse_prior, parse_question


@pytest.mark.parametrize(
    ("text", "kind", "aspect", "value", "unit", "t_s", "obj", "inferred"),
    [
        ("ruler calibre = 1 cm", "size", "size", 1.0, "cm", None, "ruler", False),
        ("billiard ball diameter = 57.2 mm", "size", "diameter", 57.2, "mm", None, "billiard ball", False),
        (
            "diameter of the ping pong ball = 40mm",
            "size",
            "diameter",
            40.0,
            "mm",
            None,
            "ping pong ball",
            False,
        ),
        ("lane width = 3.66 m", "size", "width", 3.66, "m", None, "lane", False),
        ("pedestrian walking speed ~1.1 m/s", "speed", "", 1.1, "m/s", None, "pedestrian walking", False),
        ("speed of the bird =6m/s", "speed", "", 6.0, "m/s", None, "bird", False),
        ("gravity acc = 9.8 m/s^2", "acceleration", "", 9.8, "m/s^2", None, "gravity", False),
        ("t=1.5, ball acceleration = 3.0 m/s^2", "acceleration", "", 3.0, "m/s^2", 1.5, "ball", False),
        (
            "velocity of the yoga ball at 0.6s = 2.5104 m/s",
            "speed",
            "",
            2.5104,
            "m/s",
            0.6,
            "yoga ball",
            False,
        ),
        ("velocity of the soccer ball at 1.5s = 5.21", "speed", "", 5.21, "m/s", 1.5, "soccer ball", True),
        (
            "acceleration of the red cart = 40 cm/s²",
            "acceleration",
            "",
            40.0,
            "cm/s^2",
            None,
            "red cart",
            False,
        ),
        ("Callisto's model speed = 0.627 m/s", "speed", "", 0.627, "m/s", None, "callisto model", False),
    ],
)
def test_prior_formats(text, kind, aspect, value, unit, t_s, obj, inferred):
    p = parse_prior(text)
    assert (p.kind, p.aspect, p.value, p.unit.symbol, p.t_s, p.object, p.unit_inferred) == (
        kind,
        aspect,
        value,
        unit,
        t_s,
        obj,
        inferred,
    )


def test_prior_value_in_si():
    assert parse_prior("billiard ball diameter = 57.2 mm").value_si == pytest.approx(0.0572)
    assert parse_prior("acceleration of the red cart = 40 cm/s^2").value_si == pytest.approx(0.4)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty prior"),
        ("the ball is big", "no '=' or '~'"),
        ("diameter of the ball = big", "no number"),
        ("diameter of the ball = 0 cm", "must be positive"),
        ("diameter of the ball = 3 furlongs", "unknown unit"),
        ("speed of the car = 3 m", "is a speed but the unit"),
        ("the thing = 4", "neither a quantity word nor a unit"),
    ],
)
def test_unparseable_priors_name_the_field(text, reason):
    with pytest.raises(DataError, match=reason) as info:
        parse_prior(text)
    assert info.value.field == "ground_truth_prior"


@pytest.mark.parametrize(
    ("text", "kind", "aspect", "objects", "t_s", "interval", "unit"),
    [
        ("What is the length of the wood block in cm?", "size", "length", ("wood block",), None, None, "cm"),
        (
            "What is the eagle’s wingspan (the distance from the tip) in meters?",
            "size",
            "width",
            ("eagle",),
            None,
            None,
            "m",
        ),
        ("What is the speed of the car at 1s, in m/s?", "speed", "", ("car",), 1.0, None, "m/s"),
        (
            "What is the acceleration of the ball at time 0.5s in m/s^2?",
            "acceleration",
            "",
            ("ball",),
            0.5,
            None,
            "m/s^2",
        ),
        (
            "What is the white ball's average velocity in 1.00s to 2.00s in cm/s?",
            "speed",
            "",
            ("white ball",),
            None,
            (1.0, 2.0),
            "cm/s",
        ),
        (
            "What is the displacement of the ping pong ball between 1.0s and 1.4s in cm?",
            "displacement",
            "",
            ("ping pong ball",),
            None,
            (1.0, 1.4),
            "cm",
        ),
        (
            "What is the soccer ball's diasplacement between 1.5s and 1.6s in meters? ",
            "displacement",
            "",
            ("soccer ball",),
            None,
            (1.5, 1.6),
            "m",
        ),
        ("What is the velolicty of the ball at 1.5s in cm/s? ", "speed", "", ("ball",), 1.5, None, "cm/s"),
        (
            "What is the distance between the soccer ball and the basketball at 2.0s in meters?",
            "distance",
            "",
            ("soccer ball", "basketball"),
            2.0,
            None,
            "m",
        ),
        (
            "When t=3s, what is the minimum distance from the outer end of the pier to the boat in meters?",
            "distance",
            "",
            ("outer end of the pier", "boat"),
            3.0,
            None,
            "m",
        ),
        (
            "What is the total distance traveled by the left tennis ball in cm?",
            "path_length",
            "",
            ("left tennis ball",),
            None,
            None,
            "cm",
        ),
        (
            "What is the height of the woman in yellow in meters?",
            "size",
            "height",
            ("woman in yellow",),
            None,
            None,
            "m",
        ),
        (
            "What is the average speed of the yellow car in m/s？",
            "speed",
            "",
            ("yellow car",),
            None,
            None,
            "m/s",
        ),
    ],
)
def test_question_formats(text, kind, aspect, objects, t_s, interval, unit):
    q = parse_question(text)
    assert (q.kind, q.aspect, q.objects, q.t_s, q.interval_s, q.unit.symbol) == (
        kind,
        aspect,
        objects,
        t_s,
        interval,
        unit,
    )
    assert not q.unit_inferred


def test_question_flags():
    assert parse_question("What is the average speed of the boat in m/s?").average
    assert (
        parse_question(
            "What is the initial distance between the balck ball and the purple ball in cm?"
        ).moment
        == "initial"
    )
    assert (
        parse_question("What is the final distance between the purple ball and the black ball in cm?").moment
        == "final"
    )
    assert parse_question("What is the (average) horizontal velocity of the ball in m/s?").horizontal


def test_question_without_unit_falls_back_to_si_and_says_so():
    q = parse_question("What is the orbital diameter of the Io model?")
    assert (q.kind, q.unit.symbol, q.unit_inferred) == ("size", "m", True)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty question"),
        ("Why?", "neither a quantity word nor a unit"),
        ("What is the speed of the car in cm?", "asks for a speed"),
    ],
)
def test_bad_questions_name_the_field(text, reason):
    with pytest.raises(DataError, match=reason) as info:
        parse_question(text)
    assert info.value.field == "question"


def test_depth_info_lines_spacing_and_static_entries():
    text = (
        "t=0s, distance_boat_camera =11.827 m\n"
        "t = 1.0s, distance_boat_camera = 13.154 m\n"
        "distance_pier_camera = 18.920 m"
    )
    entries = parse_depth_info(text)
    assert [(e.t_s, e.entity, e.distance_m) for e in entries] == [
        (0.0, "boat", 11.827),
        (1.0, "boat", 13.154),
        (None, "pier", 18.92),
    ]
    assert parse_depth_info("t=1.0s, distance_pingpong_camera=1.511 m")[0].distance_m == 1.511
    assert (
        parse_depth_info("t=1s, distance_ball_camera = 13.80 m; t=2s, distance_ball_camera = 13.80 m")[1].t_s
        == 2.0
    )
    assert parse_depth_info(float("nan")) == []
    assert parse_depth_info("") == []


def test_bad_depth_entry_names_the_field():
    with pytest.raises(DataError, match="cannot read depth entry") as info:
        parse_depth_info("t=1s, the boat is far")
    assert info.value.field == "depth_info"


def _official_priors(golden) -> set[str]:
    q = golden / "quantiphy"
    priors = set()
    for name, columns in [
        ("quantiphy_validation.csv", ["ground_truth_prior"]),
        ("gpt-5.1.csv", ["ground_truth_prior"]),
        ("starter_kit_CIB_Ready_test4.csv", ["ground_truth_prior", "alt_prior"]),
    ]:
        df = pd.read_csv(q / name)
        for column in columns:
            priors |= set(df[column].dropna())
    return priors


def test_every_official_prior_parses(golden):
    priors = _official_priors(golden)
    assert len(priors) >= 30
    parsed = {p: parse_prior(p) for p in priors}
    # Spot checks against the values printed in the files.
    assert parsed["gravity acc = 980m/s^2"].value_si == pytest.approx(980)
    assert parsed["diameter of the ping pong ball = 40mm"].value_si == pytest.approx(0.04)
    assert parsed["speed of the bubble in the drop = 0.00144m/s"].value_si == pytest.approx(0.00144)
    assert parsed["velocity of the soccer ball at 1.5s = 5.21"].unit_inferred
    assert sum(p.unit_inferred for p in parsed.values()) == 1


def test_every_official_question_and_depth_info_parses(golden):
    df = pd.read_csv(golden / "quantiphy" / "quantiphy_validation.csv")
    questions = [parse_question(q) for q in df["question"]]
    # The posterior letter of inference_type says static (size, distance) or dynamic (speed, acceleration).
    dynamic = [q.kind in ("speed", "acceleration") for q in questions]
    agree = sum(d == (it[1] == "D") for d, it in zip(dynamic, df["inference_type"], strict=True))
    assert agree >= 0.95 * len(df)
    # Only the four "orbital diameter" questions name no unit.
    assert sum(q.unit_inferred for q in questions) == 4
    depth_rows = df["depth_info"].dropna()
    assert len(depth_rows) == 90
    entries = [parse_depth_info(d) for d in depth_rows]
    assert all(entries) and all(e.distance_m > 0 for row in entries for e in row)
