"""Detector context for Scene-CoT (TAD paper App. D.3, Table 11): object counts per keyframe, given to the
captioner's first step.

The paper runs YOLO11x on each keysegment's 4 sampled keyframes and writes the counts of bicycles, cars,
motorcycles, buses and trucks as `Frame1: 5 cars, 2 bicycles`. kinegraph runs no detector: the counts come
from a file the user provides (or the synthetic TAD world's `detections.json`, its road users as seen by
the camera). The file is JSON, one entry per keyframe sample token:

    {"<sample_token>": {"car": 5, "bicycle": 2}, ...}

Classes outside the five and counts that are not non-negative integers are refused when the graph is
built. The sentence that introduces the counts is kinegraph's (the paper does not print its prompt), so a
run with detections is labelled non-official.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

#: The classes the paper counts (COCO names, as YOLO11x reports them), in its order.
DETECTOR_CLASSES = ("bicycle", "car", "motorcycle", "bus", "truck")
PLURAL = {
    "bicycle": "bicycles",
    "car": "cars",
    "motorcycle": "motorcycles",
    "bus": "buses",
    "truck": "trucks",
}

Detections = dict[str, dict[str, int]]


def load_detections(path: str | Path) -> Detections:
    """The counts in a detections file; a ValueError in one line names what is wrong with it."""
    where = Path(path)
    try:
        raw = json.loads(where.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"detections file {str(where)!r} unreadable: {exc}") from None
    if not isinstance(raw, dict):
        raise ValueError(f"detections file {str(where)!r}: expected an object of sample_token: counts")
    out: Detections = {}
    for token, counts in raw.items():
        if not isinstance(counts, dict):
            raise ValueError(f"detections file {str(where)!r}: {token!r} maps to no object of class: count")
        for name, count in counts.items():
            if name not in DETECTOR_CLASSES:
                raise ValueError(
                    f"detections file {str(where)!r}: {token!r} counts {name!r}; "
                    f"classes: {', '.join(DETECTOR_CLASSES)}"
                )
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise ValueError(
                    f"detections file {str(where)!r}: {token!r} {name} count {count!r} is no count"
                )
        out[str(token)] = {name: int(counts[name]) for name in DETECTOR_CLASSES if counts.get(name)}
    return out


def frame_counts(counts: Mapping[str, int]) -> str:
    """`5 cars, 2 bicycles` (the paper's wording, most frequent first); `no vehicles` when all are zero."""
    ordered = sorted(((n, c) for c, n in counts.items() if n), key=lambda item: -item[0])
    if not ordered:
        return "no vehicles"
    return ", ".join(f"{n} {c if n == 1 else PLURAL[c]}" for n, c in ordered)


def detection_context(tokens: Sequence[str], detections: Detections) -> str:
    """The block for one keysegment's sampled frames, `FrameK: ...` per frame; a KeyError names a
    keyframe the file does not cover (a frame never detected is not a frame with nothing in it)."""
    missing = [t for t in tokens if t not in detections]
    if missing:
        raise KeyError(f"the detections file has no entry for keyframe {missing[0]!r}")
    lines = [f"Frame{k}: {frame_counts(detections[t])}" for k, t in enumerate(tokens, start=1)]
    return "Objects an object detector counted in each frame:\n" + "\n".join(lines)
