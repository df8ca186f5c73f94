"""Speed of the EgoDyn vision probes: VO and flow heuristic milliseconds per 10-frame clip at 1600x900,
and torch Horn-Schunck frame pairs/second on CPU (and on CUDA when a GPU is present).

Frames come from the synthetic road renderer (a scripted 18 s drive), 10 evenly spaced over 3 s.
Usage: python perf/tools_vision_speed.py [--clips 5] [--gpu-clips 64]
"""

from __future__ import annotations

import argparse
import os
import time

import cv2
import numpy as np
import torch

from kinegraph.benchmarks.nuscenes.world import plan_scenes
from kinegraph.benchmarks.synthetic.road_render import PinholeCamera, RoadRenderer
from kinegraph.benchmarks.synthetic.road_world import build_world, ego_lane_offset_m
from kinegraph.media import even_indices
from kinegraph.tools.flow import flow_heuristic
from kinegraph.tools.gpu_flow import gpu_flow_signals
from kinegraph.tools.vo import visual_odometry


def render_clips(n_clips: int, width_px: int, height_px: int) -> list[np.ndarray]:
    """n 10-frame clips (3 s windows of a scripted drive) at the given size."""
    (spec,) = plan_scenes(1, 0, 6)
    track = spec.track
    offset = ego_lane_offset_m(track.timestamps_s, track.yaw_rad, track.speed_mps, track.segments)
    renderer = RoadRenderer(
        build_world(track.xy_m, track.yaw_rad, 0, lane_offset_m=offset),
        PinholeCamera.nuscenes_front(width_px, height_px),
    )
    per_window = int(round(3.0 * len(track.timestamps_s) / track.timestamps_s[-1]))
    clips = []
    for k in range(n_clips):
        start = (k * per_window) % max(1, len(track.timestamps_s) - per_window)
        idx = [start + i for i in even_indices(per_window, 10)]
        clips.append(
            np.stack([renderer.render(*map(float, (*track.xy_m[i], track.yaw_rad[i]))) for i in idx])
        )
    return clips


def ms_per_clip(probe, clips: list[np.ndarray]) -> tuple[float, float]:
    """Median and min milliseconds of `probe(clip)` over the clips (after one warm-up call)."""
    probe(clips[0])
    times = []
    for clip in clips:
        t0 = time.perf_counter()
        probe(clip)
        times.append(1e3 * (time.perf_counter() - t0))
    return float(np.median(times)), float(np.min(times))


def pairs_per_second(clips: list[np.ndarray], device: str) -> float:
    """Frame pairs/second of the batched Horn-Schunck probe over all clips (after a warm-up)."""
    gpu_flow_signals(clips[:2], device=device)
    if device == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    gpu_flow_signals(clips, device=device)
    if device == "cuda":
        torch.cuda.synchronize()
    return sum(len(c) - 1 for c in clips) / (time.perf_counter() - t0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=5, help="clips timed for VO and flow")
    parser.add_argument("--gpu-clips", type=int, default=64, help="clips in the CUDA throughput run")
    args = parser.parse_args()
    threads = f"OpenCV threads: {cv2.getNumThreads()}, torch threads: {torch.get_num_threads()}"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"CPU cores visible: {os.cpu_count()}, {threads}, 1-min load average: {load:.1f}")
    clips = render_clips(args.clips, 1600, 900)
    print("\n| probe | ms per 10-frame clip at 1600x900 (median) | min |")
    print("|---|---|---|")
    for name, probe in (
        ("vo (KLT + essential matrix)", visual_odometry),
        ("flow (Farneback heuristic)", flow_heuristic),
    ):
        median_ms, min_ms = ms_per_clip(probe, clips)
        print(f"| {name} | {median_ms:.0f} | {min_ms:.0f} |")
    print("\n| gpu_flow (Horn-Schunck, 320 px wide) | frame pairs/s |")
    print("|---|---|")
    default_threads = torch.get_num_threads()
    for threads in sorted({1, default_threads}):
        torch.set_num_threads(threads)
        print(f"| cpu, {threads} torch thread(s), frames 1600x900 | {pairs_per_second(clips, 'cpu'):.1f} |")
    torch.set_num_threads(default_threads)
    if torch.cuda.is_available():
        gpu_clips = (clips * (args.gpu_clips // len(clips) + 1))[: args.gpu_clips]
        name = torch.cuda.get_device_name()
        rate = pairs_per_second(gpu_clips, "cuda")
        print(f"| cuda ({name}), {len(gpu_clips)} clips, frames 1600x900 | {rate:.1f} |")
    else:
        print("| cuda | no CUDA device here |")


if __name__ == "__main__":
    main()
