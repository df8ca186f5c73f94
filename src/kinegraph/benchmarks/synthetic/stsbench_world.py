"""Synthetic STSBench: single scripted ego maneuvers over 6 keyframes, written as STSnu.json with frames.

Ground truth is the scripted maneuver's scenario type; the negatives are the other ego types. Frames are
tiny noise images (the set tests text and trajectory paths, not vision).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from kinegraph.benchmarks.stsbench import KEYFRAME_RATE_HZ
from kinegraph.benchmarks.synthetic.maneuvers import script_maneuver
from kinegraph.benchmarks.synthetic.nuscenes_world import token
from kinegraph.media import write_image

STS_EGO = {
    "accelerate": "Ego is accelerating",
    "stop_and_go": "Ego is accelerating",
    "brake": "Ego is decelerating",
    "emergency_stop": "Ego is stopping",
    "left_turn": "Ego is turning left",
    "right_turn": "Ego is turning right",
    "lane_change_left": "Ego is changing lanes",
    "lane_change_right": "Ego is changing lanes",
}
STS_EGO_TYPES = (
    "Ego is accelerating",
    "Ego is decelerating",
    "Ego is changing lanes",
    "Ego is turning left",
    "Ego is turning right",
    "Ego is performing u-turn",
    "Ego is reversing",
    "Ego is stopping",
)


def _tiny_frame(rng: np.random.Generator) -> np.ndarray:
    return rng.integers(0, 255, (18, 32, 3), dtype=np.uint8)


def write_stsbench_world(root: Path, n_records: int = 24, seed: int = 0) -> Path:
    """STSnu.json with `n_records` ego scenarios (6 keyframes of one scripted maneuver each) and frames."""
    maneuvers = sorted(STS_EGO)
    rng = np.random.default_rng(seed)
    records = []
    for i in range(n_records):
        name = maneuvers[i % len(maneuvers)]
        track = script_maneuver(name, seed + i, duration_s=2.5, rate_hz=KEYFRAME_RATE_HZ)
        positive = STS_EGO[name]
        negatives = [t for t in STS_EGO_TYPES if t != positive]
        frames = [f"samples/CAM_FRONT/sts_{i:03d}_{j}.jpg" for j in range(len(track.timestamps_s))]
        for f in frames:
            write_image(root / f, _tiny_frame(rng))
        records.append(
            {
                "scenario": positive,
                "negative_scenarios": ",".join(negatives),
                "sensors": {"CAM_FRONT": frames},
                "ego": {
                    "xyz": [[float(x), float(y), 0.0] for x, y in track.xy_m],
                    "yaw": [float(v) for v in track.yaw_rad],
                    "velocity": [float(v) for v in track.speed_mps],
                    "ego_pose_token": [token(seed, "sts", i, j) for j in range(len(frames))],
                },
            }
        )
    path = root / "STSnu.json"
    path.write_text(json.dumps(records))
    return path


def generate(out_dir: Path, n: int = 24, seed: int = 0) -> Path:
    """Write `n` ego scenarios; returns the STSnu.json path (what the loader reads)."""
    if n < 1:
        raise ValueError(f"need at least one record, got n={n}")
    return write_stsbench_world(Path(out_dir), n_records=n, seed=seed)
