"""Pixel-scale calculator on a synthetic QuantiPhy world, scored by the official MRA scorer.

Writes a world (default 32 videos, over 100 rows across S2/D2/S3/D3), answers every row from the
exact pixel tracks and from the tracker under several differencing schemes, scores each prediction
file with `kinegraph.evaluators.quantiphy.score_file`, and prints the MRA table and the timings, then
the tracker's pixel error against the exact tracks per background kind.

    python perf/quantiphy_calculator_mra.py [--n 32] [--seed 0] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from kinegraph.benchmarks.quantiphy.world import CSV_NAME, TRUTH_NAME, VIDEO_DIR, generate
from kinegraph.evaluators.quantiphy import score_file
from kinegraph.evaluators.quantiphy_calculator import predict
from kinegraph.tools.quantiphy_solve import exact_tracks, tracked_tracks

RUNS = (
    ("exact", "centred", 9),
    ("exact", "forward", 9),
    ("exact", "backward", 9),
    ("exact", "speed_diff", 9),
    ("tracker", "quadratic_fit", 15),
    ("tracker", "centred", 9),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=32, help="videos in the world")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="world directory (default: a temporary one)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="quantiphy_world_"))

    start = time.perf_counter()
    generate(out, n=args.n, seed=args.seed)
    generate_s = time.perf_counter() - start
    table = pd.read_csv(out / CSV_NAME)
    categories = (table["inference_type"].str[0] + table["video_type"].str[1]).value_counts()
    truth = json.loads((out / TRUTH_NAME).read_text())
    n_frames = sum(v["n_frames"] for v in truth["videos"].values())
    counts = ", ".join(f"{c} {categories.get(c, 0)}" for c in ("S2", "D2", "S3", "D3"))
    print(f"world: {out}")
    print(f"  {len(truth['videos'])} videos, {n_frames} frames of 640x480, {len(table)} rows: {counts}")
    print(f"  generated (render + mp4) in {generate_s:.2f} s = {n_frames / generate_s:.0f} frames/s")

    print()
    print("| pixels | scheme | rows | S2 | D2 | S3 | D3 | average | invalid % | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for source, scheme, window in RUNS:
        start = time.perf_counter()
        target = out / f"pred_{source}_{scheme}.csv"
        path = predict(out, source, target, scheme=scheme, window=window)  # type: ignore[arg-type]
        seconds = time.perf_counter() - start
        r = score_file(path, out / CSV_NAME)
        cells = " | ".join(f"{r[f'mra_{c}']:.4f}" for c in ("S2", "D2", "S3", "D3"))
        name = f"{scheme} (window {window})" if scheme == "quadratic_fit" else scheme
        row = f"| {source} | {name} | {len(table)} | {cells} | {r['mra_average']:.4f} |"
        print(f"{row} {r['invalid_percentage']:.1f} | {seconds:.1f} |")
    print()
    print("seconds = decode + track (tracker rows) + solve + write for every row of the world")
    tracker_accuracy(out, truth, table)


def tracker_accuracy(out: Path, truth: dict, table: pd.DataFrame) -> None:
    """Centre and extent error of the tracker against the exact tracks, per background kind."""
    background = dict(zip(table["video_id"], table["video_type"].str[3], strict=False))
    errors: dict[str, list[np.ndarray]] = {"X": [], "S": [], "C": []}
    extent_errors: dict[str, list[np.ndarray]] = {"X": [], "S": [], "C": []}
    lost = frames = 0
    seconds = 0.0
    for video_id, video in truth["videos"].items():
        start = time.perf_counter()
        tracked = tracked_tracks(out / VIDEO_DIR / f"{video_id}.mp4", video)
        seconds += time.perf_counter() - start
        frames += video["n_frames"]
        for name, exact in exact_tracks(video).items():
            seen = np.all(np.isfinite(tracked[name].centre_px), axis=1)
            lost += int((~seen).sum())
            errors[background[video_id]].append(
                np.linalg.norm(tracked[name].centre_px - exact.centre_px, axis=1)[seen]
            )
            extent_errors[background[video_id]].append(
                np.abs(tracked[name].extent_px - exact.extent_px)[seen].ravel()
            )
    print()
    print(f"tracker (decode + two-pass background + components): {1000 * seconds / frames:.1f} ms per frame")
    print(f"object-frames lost: {lost}")
    print(
        "| background | object-frames | centre error median px | centre p95 px | extent error median px |"
        " extent p95 px |"
    )
    print("|---|---|---|---|---|---|")
    for kind in ("X", "S", "C"):
        if errors[kind]:
            e, x = np.concatenate(errors[kind]), np.concatenate(extent_errors[kind])
            print(
                f"| {kind} | {len(e)} | {np.median(e):.3f} | {np.percentile(e, 95):.3f} | "
                f"{np.median(x):.3f} | {np.percentile(x, 95):.3f} |"
            )


if __name__ == "__main__":
    main()
