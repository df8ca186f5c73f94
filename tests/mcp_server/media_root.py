"""A data root for the MCP tests: a rendered left-turn drive, a QuantiPhy video, an image, a bad video."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from kinegraph.benchmarks.quantiphy import world as quantiphy_world
from kinegraph.benchmarks.synthetic.maneuvers import script_maneuver
from kinegraph.benchmarks.synthetic.road_render import PinholeCamera, RoadRenderer
from kinegraph.benchmarks.synthetic.road_world import build_world
from kinegraph.media import write_image, write_video

CAMERA = PinholeCamera.nuscenes_front(480, 270)
RATE_HZ = 10.0


def write_drive(path: Path, maneuver: str, seed: int = 3) -> None:
    """31 frames (3 s at 10 Hz) of a scripted maneuver rendered by the project's road renderer."""
    track = script_maneuver(maneuver, seed, duration_s=3.2)
    t = np.arange(31) / RATE_HZ + track.timestamps_s[0]
    xy = np.column_stack([np.interp(t, track.timestamps_s, track.xy_m[:, k]) for k in (0, 1)])
    yaw = np.interp(t, track.timestamps_s, track.yaw_rad)
    renderer = RoadRenderer(build_world(track.xy_m, track.yaw_rad, seed), CAMERA)
    frames = [renderer.render(float(x), float(y), float(a)) for (x, y), a in zip(xy, yaw, strict=True)]
    write_video(path, frames, RATE_HZ)


def write_media_root(root: Path) -> dict:
    """Write the media under `root`; returns what the tests know about it (QuantiPhy rows with truth)."""
    write_drive(root / "drives" / "left_turn.mp4", "left_turn")
    quantiphy_world.generate(root / "quantiphy", n=1, seed=0)
    truth = json.loads((root / "quantiphy" / quantiphy_world.TRUTH_NAME).read_text())
    with open(root / "quantiphy" / quantiphy_world.CSV_NAME, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    sky = np.zeros((120, 160, 3), np.uint8)
    sky[:48] = (200, 220, 250)  # bright sky: daylight
    write_image(root / "day.png", sky)
    (root / "broken.mp4").write_bytes(b"not a video at all")
    (root.parent / "outside.mp4").write_bytes(b"outside the root")
    return {"quantiphy_rows": rows, "quantiphy_truth": truth}
