"""Pixel-scale calculator on a synthetic QuantiPhy world, scored by the official MRA scorer.

Writes a world (default 32 videos, over 100 rows across S2/D2/S3/D3), answers every row from the
exact pixel tracks and from the tracker under several differencing schemes, scores each prediction
file with `kinegraph.evaluators.quantiphy.score_file`, and prints the MRA table and the timings.

    python perf/quantiphy_calculator_mra.py [--n 32] [--seed 0] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import pandas as pd

from kinegraph.benchmarks.synthetic.quantiphy_solve import predict
from kinegraph.benchmarks.synthetic.quantiphy_world import CSV_NAME, TRUTH_NAME, generate
from kinegraph.evaluators.quantiphy import score_file

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


if __name__ == "__main__":
    main()
