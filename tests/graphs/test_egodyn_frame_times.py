"""Every EgoDyn prediction over a nuScenes-style clip records the capture times of the frames it used."""

from __future__ import annotations

import json
import re

import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.suites import suites

MICROSECONDS = re.compile(r"__(\d{16})\.jpg$")  # nuScenes: <log>__CAM_FRONT__<capture time, µs>.jpg


@pytest.mark.slow
@pytest.mark.parametrize("graph", ["egodyn.vision", "egodyn.static_first", "egodyn.shuffled"])
def test_nuscenes_clip_frames_carry_the_file_names_times(graph, kinegraph, tmp_path):
    world = suites.get("egodyn").generate(tmp_path / "world", n=2, seed=0)
    samples = {s.id: s for s in suites.get("egodyn").load(world)}
    with OpenAILoopback(responder=lambda body: "A") as server:
        kinegraph(
            "run", "egodyn", "--graph", graph, "--model", "vllm:loopback-vlm", "--base-url", server.base_url,
            "--data", world, "--out", tmp_path / "run", "--no-cache", "--no-progress",
        )  # fmt: skip
    lines = (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()
    checked = 0
    for prediction in map(json.loads, lines):
        paths = samples[prediction["sample_id"]].media.frame_paths
        if not paths:
            continue  # a CARLA video
        frames = prediction["frames"]
        assert frames["indices"], prediction["sample_id"]
        names = [MICROSECONDS.search(paths[i]).group(1) for i in frames["indices"]]
        assert frames["timestamps_s"] == [int(n) / 1e6 for n in names], prediction["sample_id"]
        checked += 1
    assert checked >= 28  # the nuScenes clip's questions
