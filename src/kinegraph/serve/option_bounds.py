"""The bounds of every graph option a request may set: a request costs what its options allow, so each
integer has an upper bound, each number is finite, and an option naming a file stays under the data root.

The table is documented in docs/serve.md ("Graph options a request may set"); an integer option no row
names (a user's graph) is bounded by `OTHER_INT_MAX`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

#: Options counted in frames: bounded by the server's --max-frames.
FRAME_OPTIONS = ("num_frames", "max_frames", "frames_per_segment")
#: Upper bounds of the other integer options (model calls, tool rounds, shots, pixels, batch sizes, seeds).
INT_MAX = {
    "max_attempts": 5,
    "max_tool_rounds": 8,
    "shots": 16,
    "max_side": 4096,
    "batch_pairs": 64,
    "seed": 2**31 - 1,
}
OTHER_INT_MAX = 64
#: Lower bounds where 0 is meaningful (a seed).
INT_MIN = {"seed": 0}
#: Bounds of number options: frame rates, and the camera's focal length, height and pitch.
FLOAT_RANGE = {
    "fps": (1e-3, 1000.0),
    "focal_px": (1.0, 1e5),
    "camera_height_m": (0.1, 100.0),
    "pitch_deg": (-90.0, 90.0),
}
OTHER_FLOAT_ABS_MAX = 1e6
#: Options that name a file: relative to the data root, confined to it like `frame_paths`.
FILE_OPTIONS = ("weights",)


class OptionOutOfBounds(ValueError):
    """An option value a request may not set; the message names the option and its bounds."""


def bound_options(
    options: dict[str, Any], max_frames: int, open_file: Callable[[str, str], Any]
) -> dict[str, Any]:
    """`options` (already typed by the graph's schema) within their bounds; a file name replaced by what
    `open_file(reference, where)` makes of it (the file opened under the data root), which refuses
    anything outside it."""
    bounded = dict(options)
    for name, value in options.items():
        where = f"graph_options.{name}"
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int):
            low = INT_MIN.get(name, 1)
            high = max_frames if name in FRAME_OPTIONS else INT_MAX.get(name, OTHER_INT_MAX)
            if not low <= value <= high:
                raise OptionOutOfBounds(f"{where}: must be between {low} and {high}")
        elif isinstance(value, float):
            low_f, high_f = FLOAT_RANGE.get(name, (-OTHER_FLOAT_ABS_MAX, OTHER_FLOAT_ABS_MAX))
            if not math.isfinite(value) or not low_f <= value <= high_f:
                raise OptionOutOfBounds(f"{where}: must be a number between {low_f:g} and {high_f:g}")
        elif isinstance(value, str) and name in FILE_OPTIONS:
            bounded[name] = open_file(value, where)
    return bounded
