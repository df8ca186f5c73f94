"""The pixel-scale calculator on hand-built 2D and pinhole 3D scenes whose answers are worked out here."""

from __future__ import annotations

import numpy as np
import pytest

from kinegraph.evaluators.quantiphy import parse_number
from kinegraph.tools.pixel_scale import calibrate_focal, solve_2d, solve_3d
from kinegraph.tools.quantiphy_text import DepthEntry, parse_prior, parse_question
from kinegraph.tools.tracker import ObjectTrack

FPS = 25.0
T = np.arange(51) / FPS  # 2 s


def track(xy: np.ndarray, extent: tuple[float, float]) -> ObjectTrack:
    return ObjectTrack(np.asarray(xy, dtype=float), np.tile(np.asarray(extent, dtype=float), (len(xy), 1)))


def solve(prior: str, question: str, source: ObjectTrack, *targets: ObjectTrack, **kw):
    return solve_2d(parse_prior(prior), parse_question(question), source, list(targets), FPS, **kw)


CAR = track(np.stack([100 + 40 * T, np.full_like(T, 200)], axis=1), (135, 58))


def test_paper_worked_example_car_width_from_its_length():
    # Spec §4.3: 5.67 m over 135 px, the other side 58 px -> 58 / 135 * 5.67 = 2.436 m. The long side is
    # horizontal here, so the 58 px side is the image height ("width" is the horizontal extent).
    answer = solve(
        "length of the yellow car = 5.67 m", "What is the height of the yellow car in meters?", CAR, CAR
    )
    assert answer.value == pytest.approx(2.436)
    assert answer.scale == pytest.approx(0.042)
    assert (answer.unit, answer.path, answer.prior_measured) == ("m", "2d", 135)


def test_speed_prior_fixes_the_scale_for_a_size_in_another_unit():
    cart = track(np.stack([50 + 50 * T, np.full_like(T, 100)], axis=1), (60, 30))
    ball = track(np.stack([300 - 80 * T, np.full_like(T, 300)], axis=1), (40, 40))
    # 1.5 m/s over 50 px/s -> 0.03 m/px; 40 px -> 1.2 m = 120 cm.
    answer = solve("speed of the cart = 1.5 m/s", "What is the diameter of the ball in cm?", cart, ball)
    assert answer.value == pytest.approx(120.0)
    assert answer.text() == "120 cm"


def test_gravity_prior_gives_speed_and_cm_units():
    # Fall from rest at 200 px/s^2: gamma = 9.8 / 200 m/px; speed at 1.0 s = 200 px/s -> 9.8 m/s.
    ball = track(np.stack([np.full_like(T, 300), 10 + 100 * T**2], axis=1), (30, 30))
    answer = solve("gravity acc = 9.8 m/s^2", "What is the velocity of the ball at 1.0s in cm/s?", ball, ball)
    assert answer.value == pytest.approx(980.0)
    answer = solve(
        "gravity acc = 9.8 m/s^2", "What is the acceleration of the ball at 0.4s in cm/s^2?", ball, ball
    )
    assert answer.value == pytest.approx(980.0)
    assert answer.text() == "980 cm/s²"
    assert parse_number(answer.text()) == pytest.approx(980.0)  # "cm/s^2" would read as 2.0 upstream


def test_timed_velocity_prior_of_an_accelerating_object():
    # v(t) = 100 + 80 t px/s: at 0.4 s 132 px/s -> gamma = 2 / 132; acceleration 80 px/s^2 -> 160/132 m/s^2.
    x = 20 + 100 * T + 40 * T**2
    ball = track(np.stack([x, np.full_like(T, 240)], axis=1), (30, 30))
    prior = "velocity of the red ball at 0.4s = 2 m/s"
    answer = solve(prior, "What is the acceleration of the red ball at 1.2s in m/s^2?", ball, ball)
    assert answer.value == pytest.approx(160 / 132)
    # The same prior without a unit is read in m/s, and the answer says so.
    answer = solve(
        "velocity of the red ball at 0.4s = 2",
        "What is the speed of the red ball at 1.0s in m/s?",
        ball,
        ball,
    )
    assert answer.value == pytest.approx(180 * 2 / 132)
    assert any("no unit" in note for note in answer.notes)


def test_distances_between_two_objects_and_along_a_path():
    a = track(np.stack([100 + 30 * T, np.full_like(T, 100)], axis=1), (20, 20))
    b = track(np.stack([np.full_like(T, 400), 100 + 40 * T], axis=1), (20, 20))
    prior = "diameter of the white ball = 10 cm"  # 0.1 m over 20 px: 0.005 m/px
    gap = solve(prior, "What is the distance between the white ball and the box at 1.0s in cm?", a, a, b)
    assert gap.value == pytest.approx(0.5 * np.hypot(400 - 130, 140 - 100))
    initial = solve(prior, "What is the initial distance between the ball and the box in cm?", a, a, b)
    assert initial.value == pytest.approx(0.5 * 300)
    final = solve(prior, "What is the final distance between the ball and the box in cm?", a, a, b)
    assert final.value == pytest.approx(0.5 * np.hypot(400 - 160, 180 - 100))
    path = solve(prior, "What is the total distance traveled by the box in cm?", a, b)
    assert path.value == pytest.approx(0.5 * 80)
    shift = solve(prior, "What is the displacement of the box between 0.4s and 1.2s in mm?", a, b)
    assert shift.value == pytest.approx(5 * 40 * 0.8)
    mean = solve(prior, "What is the box's average velocity in 0.40s to 1.20s in cm/s?", a, b)
    assert mean.value == pytest.approx(0.5 * 40)


def test_question_without_unit_is_answered_in_si_and_noted():
    answer = solve("length of the car = 5.67 m", "What is the height of the car?", CAR, CAR)
    assert (answer.unit, answer.value) == ("m", pytest.approx(2.436))
    assert any("names no unit" in note for note in answer.notes)


@pytest.mark.parametrize(
    ("prior", "question", "targets", "message"),
    [
        ("speed of the parked car = 2 m/s", "What is the width of the car in m?", 1, "cannot fix the scale"),
        (
            "length of the car = 5.67 m",
            "What is the speed of the car at 3.0s in m/s?",
            1,
            "after the last frame",
        ),
        (
            "length of the car = 5.67 m",
            "What is the distance between the car and the bus in m?",
            1,
            "needs 2 object",
        ),
    ],
)
def test_unanswerable_rows_raise(prior, question, targets, message):
    parked = track(np.tile([[100.0, 100.0]], (len(T), 1)), (135, 58))
    source = parked if "parked" in prior else CAR
    with pytest.raises(ValueError, match=message):
        solve(prior, question, source, *[CAR] * targets)


def test_zero_fps_is_refused():
    with pytest.raises(ValueError, match="fps"):
        solve_2d(
            parse_prior("speed of the car = 2 m/s"),
            parse_question("What is the width of the car in m?"),
            CAR,
            [CAR],
            0.0,
        )


# A pinhole camera (f = 600 px, principal point at the image centre) over a 3D scene built here.
F, C = 600.0, (319.5, 239.5)


def project(points_m: np.ndarray, size_m: float) -> ObjectTrack:
    u = F * points_m[:, 0] / points_m[:, 2] + C[0]
    v = F * points_m[:, 1] / points_m[:, 2] + C[1]
    extent = size_m * F / points_m[:, 2]
    return ObjectTrack(np.stack([u, v], axis=1), np.stack([extent, extent], axis=1))


BALL_M = np.stack([-1.0 + 1.0 * T, np.full_like(T, 0.3), np.full_like(T, 4.0)], axis=1)  # 1 m/s sideways
BOX_M = np.stack([0.5 + 0.6 * T, np.full_like(T, -0.4), 8.0 + 0.8 * T], axis=1)  # 1 m/s, receding
BALL, BOX = project(BALL_M, 0.3), project(BOX_M, 0.5)


def entries(points_m: np.ndarray, kind: str = "euclidean") -> list[DepthEntry]:
    """Depth entries at 0.4 s and 1.6 s: camera distances (Blender) or z-depths (lab)."""
    out = []
    for t in (0.4, 1.6):
        p = points_m[round(t * FPS)]
        out.append(DepthEntry(t, "x", float(np.linalg.norm(p) if kind == "euclidean" else p[2])))
    return out


def solve3(prior: str, question: str, targets, depths, kind="euclidean", source_depth=None):
    return solve_3d(
        parse_prior(prior),
        parse_question(question),
        BALL,
        targets,
        FPS,
        source_depth=entries(BALL_M, kind) if source_depth is None else source_depth,
        target_depths=depths,
        principal_point_px=C,
        depth_kind=kind,
    )


@pytest.mark.parametrize("kind", ["euclidean", "z"])
def test_3d_size_prior_calibrates_the_focal_length(kind):
    answer = solve3(
        "diameter of the ball = 0.3 m",
        "What is the speed of the box at 1.0s in m/s?",
        [BOX],
        [entries(BOX_M, kind)],
        kind,
    )
    assert answer.scale == pytest.approx(F, rel=1e-6)
    assert answer.value == pytest.approx(1.0, rel=1e-6)
    assert answer.path == "3d"


def test_3d_speed_prior_gives_sizes_and_distances():
    size = solve3(
        "speed of the ball = 1 m/s", "What is the diameter of the box in cm?", [BOX], [entries(BOX_M)]
    )
    assert size.value == pytest.approx(50.0, rel=1e-6)
    gap = solve3(
        "speed of the ball = 1 m/s",
        "What is the distance between the ball and the box at 1.0s in meters?",
        [BALL, BOX],
        [entries(BALL_M), entries(BOX_M)],
    )
    assert gap.value == pytest.approx(np.linalg.norm(BALL_M[25] - BOX_M[25]), rel=1e-6)


def test_3d_target_without_depth_is_put_at_the_prior_objects_depth():
    twin = project(BALL_M + [0.0, -0.5, 0.0], 0.2)  # same depth as the ball
    answer = solve3("diameter of the ball = 0.3 m", "What is the diameter of the puck in cm?", [twin], [[]])
    assert answer.value == pytest.approx(20.0, rel=1e-6)
    assert any("no depth entry" in note for note in answer.notes)


def test_3d_needs_depth_for_the_prior_object():
    with pytest.raises(ValueError, match="depth_info"):
        solve3(
            "diameter of the ball = 0.3 m",
            "What is the diameter of the box in cm?",
            [BOX],
            [entries(BOX_M)],
            source_depth=[],
        )


def test_3d_prior_that_no_focal_length_can_produce():
    # The ball moves 1 m/s sideways at a fixed depth: no focal length makes that look like 1 nm/s.
    ball_static_depth = [DepthEntry(None, "ball", 4.0)]
    with pytest.raises(ValueError, match="no focal length"):
        solve3(
            "speed of the ball = 1e-9 m/s",
            "What is the diameter of the box in cm?",
            [BOX],
            [entries(BOX_M)],
            source_depth=ball_static_depth,
        )


def test_calibrate_focal_picks_the_root_nearest_the_reference():
    # value(f) = (f - 100)(f - 1000) / 1e5 + 1 crosses 1 at f = 100 and f = 1000.
    f = calibrate_focal(lambda f: (f - 100) * (f - 1000) / 1e5 + 1, 1.0, 800.0)
    assert f == pytest.approx(1000.0)
