"""Answer a synthetic QuantiPhy world with the pixel-scale calculator and write an official prediction CSV.

The pixels come either from the world's exact tracks (`source="exact"`, the oracle ceiling) or from the
tracker run on the decoded mp4 files, seeded with one box per object at frame 0 (`source="tracker"`),
as a detector would give. Priors, questions and depth entries are parsed from the CSV text; the truth
sidecar only says which object a prior or question is about (the grounding a VLM or detector would do).
The answer text goes through the official `parse_number`, and the file is scored by the official scorer.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from kinegraph.benchmarks.synthetic.quantiphy_world import CSV_NAME, TRUTH_NAME, VIDEO_DIR
from kinegraph.errors import DataError
from kinegraph.evaluators.quantiphy import parse_number
from kinegraph.media import read_video
from kinegraph.tools.finite_diff import Scheme
from kinegraph.tools.pixel_scale import Answer, solve_2d, solve_3d
from kinegraph.tools.quantiphy_text import DepthEntry, parse_depth_info, parse_prior, parse_question
from kinegraph.tools.tracker import ObjectTrack, track_objects

Source = Literal["exact", "tracker"]
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
# Exact tracks are differenced as the paper's appendix does; tracker output is noisy, so it is fitted.
DEFAULT_SCHEME: dict[str, tuple[Scheme, int]] = {"exact": ("centred", 9), "tracker": ("quadratic_fit", 15)}


def exact_tracks(video: Mapping[str, Any]) -> dict[str, ObjectTrack]:
    """Object name -> exact pixel track, from one video's entry of the truth sidecar."""
    return {
        name: ObjectTrack(np.asarray(o["centre_px"], dtype=float), np.asarray(o["extent_px"], dtype=float))
        for name, o in video["objects"].items()
    }


def tracked_tracks(video_path: Path, video: Mapping[str, Any]) -> dict[str, ObjectTrack]:
    """Object name -> track from the tracker on the decoded video, seeded by the frame-0 boxes."""
    frames, _ = read_video(video_path)
    names = list(video["objects"])
    seeds = [tuple(video["objects"][name]["seed_box_px"]) for name in names]
    return dict(zip(names, track_objects(frames, seeds), strict=True))


def _depths(entries: list[DepthEntry], name: str) -> list[DepthEntry]:
    wanted = " ".join(name.lower().split())
    return [e for e in entries if e.entity == wanted]


def solve_row(
    row: Mapping[str, Any],
    grounding: Mapping[str, Any],
    tracks: Mapping[str, ObjectTrack],
    image_size_px: tuple[int, int],
    scheme: Scheme,
    window: int,
) -> Answer:
    """One CSV row: parse its text, pick the grounded objects' tracks, run the 2D or 3D calculator."""
    prior = parse_prior(row["ground_truth_prior"])
    question = parse_question(row["question"])
    source = tracks[grounding["prior_object"]]
    targets = [tracks[name] for name in grounding["target_objects"]]
    fps = float(row["fps"])
    if str(row["video_type"])[1] == "2":
        return solve_2d(prior, question, source, targets, fps, scheme=scheme, window=window)
    entries = parse_depth_info(row["depth_info"])
    width, height = image_size_px
    return solve_3d(
        prior,
        question,
        source,
        targets,
        fps,
        source_depth=_depths(entries, grounding["prior_object"]),
        target_depths=[_depths(entries, name) for name in grounding["target_objects"]],
        principal_point_px=((width - 1) / 2, (height - 1) / 2),
        scheme=scheme,
        window=window,
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
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    with open(out_csv, "w", newline="", encoding="utf-8") as f:
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
    return out_csv
