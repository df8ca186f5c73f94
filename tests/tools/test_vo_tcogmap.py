from __future__ import annotations

import numpy as np
import pytest

from kinegraph.tools.vo import vo_signals
from kinegraph.tools.vo_tcogmap import turn_label, vo_motion_summary
from tests.support.vision_scenes import drive, render_clip

MOVING = [10.0] * 9  # px per pair, well above every speed stand-in


@pytest.mark.parametrize(
    ("yaw_deg", "disp_px", "want"),
    [
        # 7 of 9 pairs below 0.5 px: stopped, whatever the yaw says (Algorithm 1 checks it first)
        ([0, 0, 0, 0, 0, 20, 0, 0, 0], [0.1, 0.2, 0.0, 0.4, 0.3, 3.0, 4.0, 0.1, 0.2], "Stopped"),
        ([2.0] * 9, MOVING, "Turn left"),  # net +18 deg
        ([-1.2] * 9, MOVING, "Turn right"),  # net -10.8 deg
        ([5.0, 5.0, 0, 0, 0, 0, 0, 0, 0], MOVING, "Straight, constant speed"),  # net exactly 10: not > 10
        ([0.0] * 9, [0, 0, 0, 0, 1, 2, 3, 4, 5], "Starting"),  # 4 of 9 stationary: not stopped
        ([0.0] * 9, [8, 7, 6, 5, 4, 3, 1, 0.3, 0.2], "Stopping"),
        # a turn outranks starting
        ([0, 0, 0, 0, 4, 4, 4, 0, 0], [0.1, 0.2, 0.3, 0.4, 5, 6, 7, 8, 9], "Turn left"),
        ([0.0] * 9, [2.0, 5, 5, 5, 5, 5, 5, 5, 3.5], "Straight, constant speed"),  # start not < 2 px
        ([0.0] * 9, [1.0, 5, 5, 5, 5, 5, 5, 5, 3.0], "Straight, constant speed"),  # end not > 3 px
        ([0.0] * 9, [3.0, 5, 5, 5, 5, 5, 5, 5, 1.0], "Straight, constant speed"),  # start not > 3 px
        ([0.0] * 4, [0.1, 0.1, 5.0, 5.0], "Starting"),  # 2 of 4 stationary is no majority: not stopped
        # a yaw S-curve (lane-change-like) has no net heading change: no lane change is ever reported
        ([3, 3, 3, -3, -3, -3, 0, 0, 0], MOVING, "Straight, constant speed"),
        ([100.0, 100.0, 100.0], [10.0] * 3, "Turn right"),  # +300 deg wraps to -60, as upstream wraps
    ],
)
def test_classes_follow_algorithm_1_order(yaw_deg, disp_px, want):
    assert vo_motion_summary(np.array(yaw_deg, float), np.array(disp_px, float)).motion_class == want


def test_summary_carries_the_phrase_and_the_figures_it_read():
    summary = vo_motion_summary(np.array([1.0, 4.0, 6.0]), np.array([0.2, 6.0, 4.5]))
    assert summary.motion_class == "Turn left" and summary.phrase == "turning to the left."
    assert summary.net_yaw_deg == pytest.approx(11.0)
    assert (summary.start_disp_px, summary.end_disp_px) == (0.2, 4.5)
    assert (summary.stationary_pairs, summary.n_pairs) == (1, 3)


def test_turn_label_maps_non_turn_classes_to_straight():
    assert [turn_label(c) for c in ("Turn left", "Turn right", "Stopping", "Stopped")] == [
        "left",
        "right",
        "straight",
        "straight",
    ]


@pytest.mark.parametrize(
    ("yaw_deg", "disp_px"),
    [([], []), ([1.0, 2.0], [1.0]), ([np.nan], [1.0]), ([1.0], [-0.5]), ([[1.0]], [[1.0]])],
)
def test_bad_signals_are_rejected(yaw_deg, disp_px):
    with pytest.raises(ValueError, match="yaw_deg"):
        vo_motion_summary(np.array(yaw_deg, float), np.array(disp_px, float))


@pytest.mark.parametrize(
    ("poses", "want"),
    [
        (drive(10, 1.0, np.radians(2.0)), "Turn left"),  # 18 deg to the left over the clip
        (drive(10, 1.0, np.radians(-2.0)), "Turn right"),
        (drive(10, 1.0), "Straight, constant speed"),
        (drive(10, 0.0), "Stopped"),
        (drive(10, [0, 0, 0, 0, 0.5, 1.0, 1.5, 2.0, 2.5]), "Starting"),
        (drive(10, [2.5, 2.0, 1.5, 1.0, 0.5, 0, 0, 0, 0]), "Stopping"),
    ],
)
def test_ray_cast_drives_of_known_motion_read_as_that_class(poses, want):
    signals = vo_signals(render_clip(poses))
    assert vo_motion_summary(signals.yaw_deg, signals.disp_px).motion_class == want


def test_probe_shares_one_vo_pass_and_reports_the_summary():
    from kinegraph.graphs.egodyn.prompts import describe_probe
    from kinegraph.graphs.egodyn.tools import measure_probes
    from kinegraph.tools.probe_results import tcogmap_vo_measurement

    frames = render_clip(drive(10, 1.0, np.radians(2.0)))
    measured = measure_probes(("vo", "tcogmap_vo"), frames)
    tcogmap = measured["tcogmap_vo"]
    assert tcogmap == tcogmap_vo_measurement(frames)  # shared VO pass, same result as running it alone
    assert tcogmap["answers"] == {} and tcogmap["motion_class"] == "Turn left"
    assert tcogmap["signals"]["net_yaw_deg"] == pytest.approx(
        sum(measured["vo"]["signals"]["yaw_deg"]), abs=0.02
    )
    text = describe_probe("tcogmap_vo", tcogmap)
    title = "TCogMap-style ego-motion summary from visual odometry (pixels)"
    assert text.splitlines()[0] == f"{title}: the ego vehicle is turning to the left."
    assert "  n_pairs: 9" in text.splitlines()
    with pytest.raises(ValueError, match="unknown probe"):
        measure_probes(("vo", "lidar"), frames)


@pytest.fixture(scope="module")
def rendered_clips(tmp_path_factory):
    """(source, frames, 31-sample arrays, oracle turn label) of a small rendered EgoDyn world."""
    from kinegraph.benchmarks.egodyn.loader import load, load_arrays
    from kinegraph.media import load_frames
    from kinegraph.suites import suites

    root = suites.get("egodyn").generate(tmp_path_factory.mktemp("synth"), n=4, seed=3)
    clips: dict[str, list] = {}
    for sample in load(root):
        clips.setdefault(sample.group, []).append(sample)
    out = []
    for samples in clips.values():
        turn = next(s.answer for s in samples if s.question_id == "yaw_rate_turn_direction")
        frames, _ = load_frames(samples[0].media, 10)
        out.append((samples[0].metadata["source"], frames, load_arrays(samples[0]), turn))
    return out


def test_rendered_clips_moving_throughout_never_read_as_stopped_starting_or_stopping(rendered_clips):
    hits = 0
    for source, frames, arrays, oracle_turn in rendered_clips:
        assert float(np.min(arrays["speed"])) > 5.0  # the world's premise: every clip here keeps moving
        signals = vo_signals(frames)
        summary = vo_motion_summary(signals.yaw_deg, signals.disp_px)
        assert summary.motion_class in {"Turn left", "Turn right", "Straight, constant speed"}, source
        hits += turn_label(summary.motion_class) == oracle_turn
    print(f"frames-only TCogMap turn vs oracle turn label: {hits}/{len(rendered_clips)} rendered clips")
