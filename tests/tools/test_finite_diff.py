"""Differencing schemes on analytic tracks: which are exact, which are off by the textbook amount."""

from __future__ import annotations

import numpy as np
import pytest

from kinegraph.tools.finite_diff import (
    acceleration_at,
    average_speed,
    path_length,
    seen_range,
    speed_at,
    velocity_at,
)

FPS = 25.0
T = np.arange(40) / FPS
# Constant acceleration along a 3-4-5 direction: x(t) = (3, 4) * (2 t + 1.5 t^2), speed 5 (2 + 3 t).
TRACK = np.outer(2 * T + 1.5 * T**2, [3.0, 4.0])


def speed(t):
    return 5 * (2 + 3 * t)


@pytest.mark.parametrize("index", [0, 1, 20, 38, 39])
def test_centred_is_exact_for_constant_acceleration_even_at_the_ends(index):
    assert speed_at(TRACK, FPS, index, "centred") == pytest.approx(speed(T[index]), rel=1e-9)
    assert acceleration_at(TRACK, FPS, index, "centred") == pytest.approx(15.0, rel=1e-9)


def test_forward_and_backward_are_off_by_half_a_step():
    # (x(t + dt) - x(t)) / dt = v(t) + a dt / 2 for constant acceleration.
    assert speed_at(TRACK, FPS, 20, "forward") == pytest.approx(speed(T[20]) + 15 / FPS / 2)
    assert speed_at(TRACK, FPS, 20, "backward") == pytest.approx(speed(T[20]) - 15 / FPS / 2)
    assert acceleration_at(TRACK, FPS, 20, "forward") == pytest.approx(15.0)
    assert acceleration_at(TRACK, FPS, 20, "backward") == pytest.approx(15.0)


def test_speed_difference_scheme_of_the_blender_ground_truth():
    # Along a straight line the difference of backward speeds is the acceleration.
    assert acceleration_at(TRACK, FPS, 20, "speed_diff") == pytest.approx(15.0)
    assert speed_at(TRACK, FPS, 20, "speed_diff") == pytest.approx(speed(T[20]) - 15 / FPS / 2)


def test_quadratic_fit_is_exact_and_averages_noise():
    assert speed_at(TRACK, FPS, 0, "quadratic_fit", window=9) == pytest.approx(speed(0.0))
    rng = np.random.default_rng(0)
    noisy = TRACK + rng.normal(0, 0.3, TRACK.shape)
    fit_err = abs(acceleration_at(noisy, FPS, 20, "quadratic_fit", window=25) - 15.0)
    centred_err = abs(acceleration_at(noisy, FPS, 20, "centred") - 15.0)
    assert fit_err < 0.1 * centred_err


def test_vector_acceleration_magnitude_on_a_curved_path():
    # Projectile: constant horizontal speed 3, gravity 9.8 downwards: |a| = 9.8 everywhere.
    t = np.arange(30) / 30.0
    track = np.stack([3 * t, 4.9 * t**2], axis=1)
    assert acceleration_at(track, 30.0, 10, "centred") == pytest.approx(9.8)
    assert speed_at(track, 30.0, 10, "centred") == pytest.approx(np.hypot(3, 9.8 * t[10]))


def test_unseen_frames_shift_the_stencil_or_fail_clearly():
    track = TRACK.copy()
    track[21:] = np.nan
    assert speed_at(track, FPS, 20, "centred") == pytest.approx(speed(T[20]))  # one-sided, still exact
    with pytest.raises(ValueError, match="forward difference at frame 20 needs frames"):
        velocity_at(track, FPS, 20, "forward")
    with pytest.raises(ValueError, match="not seen at frame 25"):
        speed_at(track, FPS, 25)
    assert seen_range(track) == (0, 20)


@pytest.mark.parametrize(
    ("frames", "call", "message"),
    [
        (1, lambda x: speed_at(x, FPS, 0), "too few frames"),
        (2, lambda x: acceleration_at(x, FPS, 0), "too few frames"),
        (2, lambda x: acceleration_at(x, FPS, 1, "quadratic_fit"), "too few frames"),
        (1, lambda x: average_speed(x, FPS, 0, 0), "too few frames"),
    ],
)
def test_too_few_frames(frames, call, message):
    with pytest.raises(ValueError, match=message):
        call(TRACK[:frames])


@pytest.mark.parametrize("fps", [0.0, -30.0, float("nan")])
def test_zero_or_bad_fps(fps):
    with pytest.raises(ValueError, match="fps"):
        speed_at(TRACK, fps, 3)
    with pytest.raises(ValueError, match="fps"):
        average_speed(TRACK, fps, 0, 5)


def test_unknown_scheme():
    with pytest.raises(ValueError, match="unknown scheme"):
        speed_at(TRACK, FPS, 3, "leapfrog")  # type: ignore[arg-type]


def test_path_length_and_average_speed():
    # Out and back: path 2, displacement 0.
    track = np.array([[0.0, 0], [1, 0], [0, 0]])
    assert path_length(track, 0, 2) == 2.0
    assert average_speed(track, 2.0, 0, 2, "path") == 2.0
    assert average_speed(track, 2.0, 0, 2, "displacement") == 0.0
    # On the analytic track: distance travelled in [0.4 s, 1.2 s] over 0.8 s.
    s = 2 * T + 1.5 * T**2
    expected = 5 * (s[30] - s[10]) / (T[30] - T[10])
    assert average_speed(TRACK, FPS, 10, 30) == pytest.approx(expected)
