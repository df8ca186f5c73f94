"""The pixel-scale calculator's solver for one QuantiPhy row: parse its text, pick the tracks, solve.

Pixels come from exact tracks (a synthetic world's truth sidecar, the oracle ceiling) or from the tracker
on the decoded video, seeded with one box per object at frame 0, as a detector would give. The sidecar
grounding only says which object a prior or question is about (what a VLM or detector would do).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np

from kinegraph.media import read_video
from kinegraph.tools.finite_diff import Scheme
from kinegraph.tools.pixel_scale import Answer, solve_2d, solve_3d
from kinegraph.tools.quantiphy_text import DepthEntry, parse_depth_info, parse_prior, parse_question
from kinegraph.tools.tracker import ObjectTrack, track_objects

Source = Literal["exact", "tracker"]
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
