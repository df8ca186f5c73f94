"""Answer a synthetic QuantiPhy world with the pixel-scale calculator and write an official prediction CSV.

The solver is `tools.quantiphy_solve` (exact tracks: the oracle ceiling; tracker: pixels from the mp4s).
The answer text goes through the official `parse_number`, and the file is scored by the official scorer.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pandas as pd

from kinegraph.atomic import write_atomic
from kinegraph.benchmarks.quantiphy.world import CSV_NAME, TRUTH_NAME, VIDEO_DIR
from kinegraph.errors import DataError
from kinegraph.evaluators.quantiphy import parse_number
from kinegraph.tools.finite_diff import Scheme
from kinegraph.tools.quantiphy_solve import DEFAULT_SCHEME, Source, exact_tracks, solve_row, tracked_tracks
from kinegraph.tools.tracker import ObjectTrack

PREDICTION_COLUMNS = (
    "Unnamed: 0",
    "video_id",
    "video_source",
    "video_type",
    "fps",
    "inference_type",
    "question",
    "ground_truth_prior",
    "depth_info",
    "ground_truth_posterior",
    "parsed_value",
    "raw_response",
    "error",
)


def predict(
    world_dir: Path,
    source: Source = "exact",
    out_csv: Path | None = None,
    scheme: Scheme | None = None,
    window: int | None = None,
) -> Path:
    """Answer every row of the world's CSV; write the predictions in the official format; return the path.

    A row the calculator cannot answer gets a blank `parsed_value` (scored 0, as upstream scores a
    failure) and the reason in `error`.
    """
    world_dir = Path(world_dir)
    if source not in DEFAULT_SCHEME:
        raise ValueError(f"source must be 'exact' or 'tracker', got {source!r}")
    default_scheme, default_window = DEFAULT_SCHEME[source]
    scheme, window = scheme or default_scheme, window or default_window
    truth_path = world_dir / TRUTH_NAME
    if not truth_path.is_file():
        raise DataError(
            "truth sidecar missing: write the world with `kinegraph synth quantiphy`", path=truth_path
        )
    truth = json.loads(truth_path.read_text())
    gt = pd.read_csv(world_dir / CSV_NAME, keep_default_na=False)
    image_size = tuple(truth["image_size_px"])
    cache: dict[str, dict[str, ObjectTrack]] = {}
    out_csv = Path(out_csv) if out_csv is not None else world_dir / f"calculator_{source}.csv"
    f = io.StringIO(newline="")
    writer = csv.writer(f)
    writer.writerow(PREDICTION_COLUMNS)
    for _, row in gt.iterrows():
        qid, video_id = int(row.iloc[0]), row["video_id"]
        if video_id not in cache:
            video = truth["videos"][video_id]
            path = world_dir / VIDEO_DIR / f"{video_id}.mp4"
            cache = {video_id: exact_tracks(video) if source == "exact" else tracked_tracks(path, video)}
        raw, parsed, error = "", "", ""
        try:
            answer = solve_row(row, truth["rows"][str(qid)], cache[video_id], image_size, scheme, window)
            raw = answer.text()
            value = parse_number(raw)
            parsed = "" if math.isnan(value) else repr(value)
        except ValueError as exc:
            error = str(exc)
        writer.writerow([qid] + [row[c] for c in PREDICTION_COLUMNS[1:10]] + [parsed, raw, error])
    write_atomic(out_csv, f.getvalue())  # a kill leaves the previous CSV or the new one, never a torn one
    return out_csv
