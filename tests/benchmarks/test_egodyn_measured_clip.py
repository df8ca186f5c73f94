"""A measured clip's answers: a half comparison the measurement does not resolve answers "similar"."""

from __future__ import annotations

import numpy as np
import pytest

from kinegraph.benchmarks.egodyn.measured_clip import unresolved_halves
from kinegraph.benchmarks.egodyn.questions import load_question_bank
from kinegraph.tools.camera_model import camera_from_options
from kinegraph.tools.ego_trajectory import EgoTrajectory, measured_kinematics, smooth_poses
from kinegraph.tools.ground_motion import ClipMotion
from kinegraph.tools.oracle import label_clip

BANK = load_question_bank()
T = np.arange(31) / 10.0
MID = 0.5 * (T[:-1] + T[1:])


def straight_trajectory(steps_m: np.ndarray, sigma_m: float = 0.02) -> EgoTrajectory:
    """A straight clip measured as `steps_m` (30,) a pair, each stated to `sigma_m`, smoothed as measured."""
    n = len(steps_m)
    sigma = np.full(n, sigma_m)
    motion = ClipMotion(
        np.column_stack([steps_m, np.zeros(n), np.zeros(n)]),
        np.zeros(n + 1),
        np.column_stack([sigma, sigma, np.full(n, 1e-4)]),
        np.zeros(n, int),
        np.zeros(n),
    )
    xy, yaw = smooth_poses(T, motion)
    none = np.zeros(n)
    return EgoTrajectory(
        T, xy, yaw, np.zeros(n + 1), xy, yaw, steps_m, sigma, none, np.ones(n),
        none.astype(int), none.astype(int), none, camera_from_options(1280, 720),
    )  # fmt: skip


def answered(trajectory: EgoTrajectory) -> tuple[dict, dict]:
    """The oracle's answers on the measured kinematics, and the half questions it does not resolve."""
    answers = label_clip(measured_kinematics(trajectory).arrays(), BANK)
    return answers, unresolved_halves(answers, trajectory, BANK)


@pytest.mark.parametrize(
    ("seed", "question", "none"),
    [
        (2, "contrastive_sequence", "similar"),
        (9, "contrastive_sequence", "similar"),
        (8, "speed_peak_half", "no_peak"),
        (29, "speed_peak_half", "no_peak"),
    ],
)
def test_a_steady_clips_noise_names_no_half(seed: int, question: str, none: str) -> None:
    """A car at a constant 10 m/s, each pair's speed off by 8 % (white, as aligned pairs at dusk are):
    its halves are alike and its speed has no peak, so EgoDyn's truth is "similar" and "no_peak". The
    smoothed speed keeps a wobble the oracle reads as a more dynamic half, or a peak 5 % above the mean."""
    steps = 1.0 + np.random.default_rng(seed).normal(0.0, 0.08, 30)
    answers, unresolved = answered(straight_trajectory(steps))
    assert answers[question] in ("first_half", "second_half")  # what the oracle reads off the smoothed speed
    assert unresolved[question]["measured"] == answers[question]
    assert unresolved[question]["agreement"] < 2 / 3
    assert unresolved[question]["answer"] == none


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_braking_in_the_second_half_keeps_its_halves(seed: int) -> None:
    """10 m/s for 1.5 s, then braking at 2 m/s^2, measured with 3 % noise a pair: the second half is the
    dynamic one (RMS acceleration 0 against 2 m/s^2) and the speed peaks in the first (10 m/s against a
    mean of 9.25), and the re-measurements agree."""
    speed = np.where(MID < 1.5, 10.0, 10.0 - 2.0 * (MID - 1.5))
    steps = 0.1 * speed * (1.0 + np.random.default_rng(seed).normal(0.0, 0.03, 30))
    answers, unresolved = answered(straight_trajectory(steps))
    assert (answers["contrastive_sequence"], answers["speed_peak_half"]) == ("second_half", "first_half")
    assert unresolved == {}
