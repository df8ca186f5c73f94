"""Renderer throughput: frames/second of the road renderer, and of `synth nuscenes` with JPEG writing.

Renders a scripted 18 s scene (217 poses at ~12 Hz) at 1600x900 and 800x450 on the CPU.
Usage: python perf/render_fps.py [--frames 120]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from kinegraph.benchmarks.nuscenes.world import plan_scenes, write_nuscenes
from kinegraph.benchmarks.synthetic.road_render import PinholeCamera, RoadRenderer
from kinegraph.benchmarks.synthetic.road_world import asphalt_detail, build_world, ego_lane_offset_m


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=120, help="frames rendered per size")
    args = parser.parse_args()
    print(f"OpenCV threads: {cv2.getNumThreads()}\n")
    (spec,) = plan_scenes(1, 0, 6)
    track = spec.track
    asphalt_detail()  # the shared detail tile is built once per process
    t0 = time.perf_counter()
    offset = ego_lane_offset_m(track.timestamps_s, track.yaw_rad, track.speed_mps, track.segments)
    world = build_world(track.xy_m, track.yaw_rad, 0, lane_offset_m=offset)
    build_s = time.perf_counter() - t0
    print(
        f"world build (18 s scene, {len(world.box_corners_m)} boxes, {len(world.decals_m)} windows): "
        f"{build_s:.2f} s\n"
    )
    print("| size | render frames/s (mean) | ms/frame (mean / median) | synth frames/s (+ JPEG) |")
    print("|---|---|---|---|")
    for width, height in ((1600, 900), (800, 450)):
        renderer = RoadRenderer(world, PinholeCamera.nuscenes_front(width, height))
        n = min(args.frames, len(track.timestamps_s))
        times_s = []
        for i in range(n):
            t0 = time.perf_counter()
            renderer.render(float(track.xy_m[i, 0]), float(track.xy_m[i, 1]), float(track.yaw_rad[i]))
            times_s.append(time.perf_counter() - t0)
        render_s, median_s = float(np.mean(times_s)), float(np.median(times_s))
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            write_nuscenes(Path(tmp), [spec], 0, width_px=width, height_px=height)
            total_s = time.perf_counter() - t0
            written = len(list(Path(tmp).rglob("*.jpg")))
        print(
            f"| {width}x{height} | {1 / render_s:.1f} | {render_s * 1e3:.1f} / {median_s * 1e3:.1f} | "
            f"{written / total_s:.1f} |"
        )


if __name__ == "__main__":
    main()
