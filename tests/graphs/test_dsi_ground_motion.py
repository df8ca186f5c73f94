"""DSI's camera-motion block: the ground-plane reading on a road clip, and an honest refusal elsewhere."""

from __future__ import annotations

import numpy as np
import pytest

from kinegraph.benchmarks.synthetic.maneuvers import script_maneuver
from kinegraph.benchmarks.synthetic.road_render import PinholeCamera, RoadRenderer
from kinegraph.benchmarks.synthetic.road_world import build_world
from kinegraph.graphs.dsi.builders import camera_motion_block, ground_motion_sentence
from kinegraph.types import FrameRecord


def _record(n: int, fps: float) -> FrameRecord:
    return FrameRecord(indices=list(range(n)), timestamps_s=[i / fps for i in range(n)], source="clip.mp4")


@pytest.mark.slow
def test_a_road_clip_gets_metres_forward() -> None:
    track = script_maneuver("cruise", 2, duration_s=3.2)
    t = np.arange(16) / 5.0
    xy = np.column_stack([np.interp(t, track.timestamps_s, track.xy_m[:, k]) for k in (0, 1)])
    yaw = np.interp(t, track.timestamps_s, track.yaw_rad)
    # the DSI block assumes CARLA's default camera: render through one (90 deg HFOV, 1.6 m)
    camera = PinholeCamera(320, 180, 160.0, 160.0, 159.5, 89.5, mount_height_m=1.6)
    renderer = RoadRenderer(build_world(track.xy_m, track.yaw_rad, 2), camera)
    frames = np.stack(
        [renderer.render(float(a), float(b), float(c)) for (a, b), c in zip(xy, yaw, strict=True)]
    )
    sentence = ground_motion_sentence(frames, _record(16, 5.0))
    forward = float(sentence.split("moved ")[1].split(" m forward")[0])
    travelled = float(np.sum(np.linalg.norm(np.diff(xy, axis=0), axis=1)))
    assert abs(forward - travelled) < 0.1 * travelled, sentence
    assert "optical flow" in camera_motion_block(frames, _record(16, 5.0))


def test_no_road_gives_no_reading_instead_of_a_number() -> None:
    rng = np.random.default_rng(0)
    noise = rng.integers(0, 255, (6, 96, 128, 3), dtype=np.uint8)  # nothing moves consistently
    assert "gives no reading" in ground_motion_sentence(noise, _record(6, 5.0))
    assert "not run" in ground_motion_sentence(noise[:2], _record(2, 5.0))
