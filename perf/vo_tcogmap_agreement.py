"""How often the frames-only TCogMap-style summary (`kinegraph.tools.vo_tcogmap`) agrees with the labels of a
synthetic EgoDyn world: its turn reading against the oracle's `yaw_rate_turn_direction`, and its class
against official TCogMap run on the clip's true poses (the 31-sample arrays at 2 Hz, every 5th sample).

Frames as the VO baseline gets them: 10 evenly spaced frames per clip. `--native` renders at the real
data's sizes (nuScenes 1600x900, CARLA 1280x720), where VO's pixel thresholds were set; the default is the
generator's test size (800x450, 640x360). Prints the agreement and a confusion table.
Usage: python perf/vo_tcogmap_agreement.py [--data DIR | --n 20 --seed 0 [--native]]
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

from kinegraph.benchmarks.egodyn.loader import load, load_arrays
from kinegraph.media import load_frames
from kinegraph.tools.tcogmap import classify_ego_motion
from kinegraph.tools.vo import vo_signals
from kinegraph.tools.vo_tcogmap import turn_label, vo_motion_summary

N_FRAMES = 10
KEYFRAME_STRIDE = 5  # 10 Hz arrays -> 2 Hz keyframes, TCogMap's input rate


def pose_tcogmap(arrays: dict[str, np.ndarray]) -> str:
    """Official TCogMap on the clip's planar arrays (yaw about z as a quaternion), every 5th sample."""
    idx = np.arange(0, len(arrays["timestamps"]), KEYFRAME_STRIDE)
    position = np.asarray(arrays["position"], dtype=float)[idx]
    translation_m = np.zeros((idx.size, 3))
    translation_m[:, : min(3, position.shape[1])] = position[:, :3]
    half_yaw = np.asarray(arrays["yaw"], dtype=float)[idx] / 2
    rotation_wxyz = np.stack([np.cos(half_yaw), 0 * half_yaw, 0 * half_yaw, np.sin(half_yaw)], axis=1)
    return classify_ego_motion(np.asarray(arrays["timestamps"])[idx] * 1e6, translation_m, rotation_wxyz)


def measure(root: Path) -> None:
    clips: dict[str, list] = {}
    for sample in load(root):
        clips.setdefault(sample.group, []).append(sample)
    turn_hits, class_hits = Counter(), Counter()
    confusion: Counter[tuple[str, str]] = Counter()
    for samples in clips.values():
        source = samples[0].metadata["source"]
        frames, _ = load_frames(samples[0].media, N_FRAMES)
        signals = vo_signals(frames)
        summary = vo_motion_summary(signals.yaw_deg, signals.disp_px)
        oracle_turn = next(s.answer for s in samples if s.question_id == "yaw_rate_turn_direction")
        truth_class = pose_tcogmap(load_arrays(samples[0]))
        turn_hits[source, turn_label(summary.motion_class) == oracle_turn] += 1
        class_hits[source, summary.motion_class == truth_class] += 1
        confusion[truth_class, summary.motion_class] += 1
    for source in ("nuscenes", "carla", "all"):
        sources = ("nuscenes", "carla") if source == "all" else (source,)
        n = sum(v for k, v in turn_hits.items() if k[0] in sources)
        turn = sum(v for k, v in turn_hits.items() if k[0] in sources and k[1])
        cls = sum(v for k, v in class_hits.items() if k[0] in sources and k[1])
        print(
            f"{source:9s} clips {n:4d}  turn vs oracle {turn}/{n} ({100 * turn / max(n, 1):.1f}%)  "
            f"class vs pose TCogMap {cls}/{n} ({100 * cls / max(n, 1):.1f}%)"
        )
    print("\npose TCogMap class -> frames-only class: count")
    for (truth, got), count in sorted(confusion.items()):
        print(f"  {truth:26s} -> {got:26s} {count}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path)
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--native", action="store_true", help="render at 1600x900 / 1280x720")
    args = parser.parse_args()
    if args.data is not None:
        measure(args.data)
        return
    from kinegraph.benchmarks.egodyn.world import generate

    sizes = {"width_px": 1600, "height_px": 900, "carla_width_px": 1280, "carla_height_px": 720}
    with tempfile.TemporaryDirectory(prefix="vo_tcogmap_") as tmp:
        root = generate(Path(tmp), args.n, args.seed, **(sizes if args.native else {}))
        print(f"world: n={args.n} seed={args.seed} {'native' if args.native else 'test'} size")
        measure(root)


if __name__ == "__main__":
    main()
