"""EgoDyn tools on scripted maneuvers: per-maneuver agreement of kinematics + oracle and of TCogMap.

Prints markdown tables (agreement with `expected_labels` / `expected_tcogmap`), the oracle's
reproduction of selected_clips.json when the golden files are present, and per-call timings.
Usage: python perf/tools_egodyn.py [--seeds 20]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from kinegraph.benchmarks.egodyn.questions import load_question_bank
from kinegraph.benchmarks.synthetic.maneuvers import (
    MANEUVERS,
    EgoTrack,
    expected_labels,
    expected_tcogmap,
    script_maneuver,
)
from kinegraph.fixtures import fixtures_dir
from kinegraph.tools.encoders import encode_trajectory
from kinegraph.tools.kinematics import clip_kinematics
from kinegraph.tools.oracle import label_clip, label_from_features
from kinegraph.tools.tcogmap import classify_ego_motion, motion_phrase

KEYFRAME_STRIDE = 6  # 12 Hz sweeps -> 2 Hz keyframes


def keyframes(track: EgoTrack, offset: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    idx = np.arange(offset, len(track.timestamps_s), KEYFRAME_STRIDE)
    times_us = np.round(track.timestamps_s[idx] * 1e6).astype(np.int64)
    return times_us, np.column_stack([track.xy_m[idx], np.zeros(len(idx))]), track.rotation_wxyz()[idx]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="seeds per maneuver")
    args = parser.parse_args()

    print(f"## Scripted maneuvers: {len(MANEUVERS)} maneuvers x {args.seeds} seeds (3 s at ~12 Hz)\n")
    print("| maneuver | questions | oracle agreement | segments | TCogMap agreement | TCogMap phrase |")
    print("|---|---|---|---|---|---|")
    totals = np.zeros(4, dtype=int)
    kin_s = oracle_s = tcog_s = 0.0
    for name in MANEUVERS:
        want = expected_labels(name)
        o_hit = o_all = t_hit = t_all = 0
        for seed in range(args.seeds):
            track = script_maneuver(name, seed)
            t0 = time.perf_counter()
            kin = clip_kinematics(track.timestamps_s, track.xy_m, track.yaw_rad)
            t1 = time.perf_counter()
            labels = label_clip(kin, load_question_bank())
            t2 = time.perf_counter()
            kin_s, oracle_s = kin_s + t1 - t0, oracle_s + t2 - t1
            o_hit += sum(labels[q] == v for q, v in want.items())
            o_all += len(want)
            for offset in range(KEYFRAME_STRIDE):
                t3 = time.perf_counter()
                phrase = motion_phrase(classify_ego_motion(*keyframes(track, offset)))
                tcog_s += time.perf_counter() - t3
                t_hit += phrase == expected_tcogmap(name)
                t_all += 1
        totals += (o_hit, o_all, t_hit, t_all)
        print(
            f"| {name} | {len(want)} | {o_hit}/{o_all} ({o_hit / o_all:.1%}) | {args.seeds} | "
            f"{t_hit}/{t_all} ({t_hit / t_all:.1%}) | {expected_tcogmap(name)} |"
        )
    o_hit, o_all, t_hit, t_all = totals
    n_clips = len(MANEUVERS) * args.seeds
    print(
        f"| **all** | | {o_hit}/{o_all} ({o_hit / o_all:.1%}) | {n_clips} | "
        f"{t_hit}/{t_all} ({t_hit / t_all:.1%}) | |"
    )
    print("\n(TCogMap is run on the 2 Hz keyframes at each of the 6 phases of the 12 Hz sweeps.)\n")

    golden = fixtures_dir()
    if golden is not None and (golden / "egodyn" / "selected_clips.json").is_file():
        clips = json.loads((golden / "egodyn" / "selected_clips.json").read_text())
        hit = total = 0
        for clip in clips:
            for qid, label in label_from_features(clip["features"], load_question_bank()).items():
                total += 1
                hit += label == clip["answers"][qid]
        print(f"selected_clips.json: oracle reproduces {hit} of {total} feature-determined answers\n")

    track = script_maneuver("left_turn", 0)
    kin = clip_kinematics(track.timestamps_s, track.xy_m, track.yaw_rad)
    reps = 200
    t0 = time.perf_counter()
    for _ in range(reps):
        encode_trajectory("full", kin)
    enc_ms = (time.perf_counter() - t0) / reps * 1e3
    print("| step | ms per call |")
    print("|---|---|")
    print(f"| clip_kinematics (37 poses -> 31 samples) | {kin_s / n_clips * 1e3:.2f} |")
    print(f"| label_clip (14 questions) | {oracle_s / n_clips * 1e3:.2f} |")
    print(f"| classify_ego_motion (6-7 keyframes) | {tcog_s / t_all * 1e3:.3f} |")
    print(f"| encode_trajectory('full') | {enc_ms:.3f} |")


if __name__ == "__main__":
    main()
