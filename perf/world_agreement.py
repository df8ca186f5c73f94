"""Scripted maneuvers through the nuScenes path: synthetic dataroot -> devkit-free reader -> EgoDyn clip
extraction -> kinematics + oracle, and keyframe poses -> TCogMap, per maneuver segment of chained scenes.

Each scene chains 6 maneuvers of 3 s (speeds carry over from one to the next); the clip ending at a
segment's last keyframe covers exactly that segment. Tables only (no rendering needed for poses).
Usage: python perf/world_agreement.py [--scenes 20] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import defaultdict
from pathlib import Path

import numpy as np

from kinegraph.benchmarks.egodyn.extract import extract_nuscenes_clips, qa_rows
from kinegraph.benchmarks.nuscenes.loader import NuScenesTables
from kinegraph.benchmarks.nuscenes.world import plan_scenes, write_nuscenes
from kinegraph.benchmarks.synthetic.maneuvers import MANEUVERS, expected_labels, expected_tcogmap
from kinegraph.tools.tcogmap import classify_ego_motion, motion_phrase

TOLERANCE_US = 10_000  # keyframes drift a few ms around the segment boundaries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = write_nuscenes(
            Path(tmp) / "nuscenes", plan_scenes(args.scenes, args.seed, 6), args.seed, render=False
        )
        nusc = NuScenesTables(root)
        records = extract_nuscenes_clips(nusc, Path(tmp) / "clips")
        answers: dict[str, dict[str, str]] = defaultdict(dict)
        for row in qa_rows(records, Path(tmp) / "clips"):
            answers[row["clip_id"]][row["question_id"]] = row["answer"]
        truth = json.loads((root / "synthetic_truth.json").read_text())["scenes"]
        clip_at = {round(r["t_end"] * 1e6): r["clip_id"] for r in records}
        stats: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(5, dtype=int))
        missed: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for scene in truth:
            samples = nusc.samples(scene["scene_token"])
            for seg in scene["segments"]:
                name = seg["maneuver"]
                clip = next((c for t, c in clip_at.items() if abs(t - seg["end_us"]) < TOLERANCE_US), None)
                if clip is None:
                    continue
                want = expected_labels(name)
                hits = [answers[clip][q] == v for q, v in want.items()]
                for q, v in want.items():
                    if answers[clip][q] != v:
                        missed[name][f"{q}={answers[clip][q]}"] += 1
                keys = [
                    nusc.camera_frame(nusc.keyframe_token(s["token"])).ego_pose
                    for s in samples
                    if seg["start_us"] - TOLERANCE_US <= s["timestamp"] <= seg["end_us"] + TOLERANCE_US
                ]
                phrase = motion_phrase(
                    classify_ego_motion(
                        np.array([p.timestamp_us for p in keys]),
                        np.array([p.translation_m for p in keys]),
                        np.array([p.rotation_wxyz for p in keys]),
                    )
                )
                stats[name] += (1, sum(hits), len(hits), all(hits), phrase == expected_tcogmap(name))
    n_segments = sum(int(s[0]) for s in stats.values())
    print(f"## {args.scenes} scenes x 6 chained maneuvers (seed {args.seed}): {n_segments} segments\n")
    print("| maneuver | segments | oracle label agreement | segments all correct | TCogMap agreement |")
    print("|---|---|---|---|---|")
    total = np.zeros(5, dtype=int)
    for name in MANEUVERS:
        seg, hit, n, whole, tcog = stats[name]
        total += stats[name]
        if seg:
            print(
                f"| {name} | {seg} | {hit}/{n} ({hit / n:.1%}) | {whole}/{seg} | "
                f"{tcog}/{seg} ({tcog / seg:.1%}) |"
            )
    seg, hit, n, whole, tcog = total
    print(
        f"| **all** | {seg} | {hit}/{n} ({hit / n:.1%}) | {whole}/{seg} | {tcog}/{seg} ({tcog / seg:.1%}) |"
    )
    if missed:
        print("\nDisagreements (question=oracle answer: count):")
        for name, counts in missed.items():
            print(f"- {name}: " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))


if __name__ == "__main__":
    main()
