"""The shared agent shape: registry tools bound to a sample's media, and their results memoised per group."""

from __future__ import annotations

import json

import numpy as np

from kinegraph.graphs.agent import bound_tools
from kinegraph.tool_registry import Clip


def test_a_groups_questions_share_one_result_per_tool_and_arguments():
    loads: list[int] = []

    def load() -> Clip:
        loads.append(1)
        return Clip(np.zeros((1, 48, 64, 3), dtype=np.uint8), [0.0], "night.png")

    results: dict[str, str] = {}
    first, second = (bound_tools(["image_cues", "camera_motion"], load, results) for _ in range(2))
    assert "image_path" not in first["image_cues"][0].parameters["properties"]
    out = first["image_cues"][1]({})
    assert json.loads(out)["illumination"] == "night"
    assert second["image_cues"][1]({}) == out and loads == [1]  # the second question reads the memo
    assert second["camera_motion"][1]({}).startswith("Error: this question has a single image")
    assert len(results) == 2
