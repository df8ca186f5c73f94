"""STSBench graphs end to end over scripted ego scenarios with a text-only loopback VLM."""

from __future__ import annotations

import json

import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.evaluators.stsbench import score_file
from kinegraph.report import compare
from tests.support.suite_readers import stsbench_reader

# Scenario types whose TCogMap phrase names the option (turns, an emergency stop, a start from rest).
READABLE = {"Ego is turning left", "Ego is turning right", "Ego is stopping"}


def _run(kinegraph, world, out, graph, server):
    return kinegraph(
        "run", "stsbench", "--graph", graph, "--model", "vllm:loopback-vlm", "--base-url", server.base_url,
        "--data", world, "--data-option", f"data_root={world.parent}", "--out", out, "--no-cache",
        "--no-progress",
    )  # fmt: skip


def test_baseline_vs_tcogmap_compare(sts_world, kinegraph, tmp_path):
    with OpenAILoopback(responder=stsbench_reader) as server:
        _run(kinegraph, sts_world, tmp_path / "base", "stsbench.baseline", server)
        _run(kinegraph, sts_world, tmp_path / "tcog", "stsbench.tcogmap", server)
        requests = list(server.requests)
    assert len(requests) == 48
    first = requests[24].body["messages"][0]["content"]
    text = "\n".join(p.get("text", "") for p in first)
    assert sum(p["type"] == "image_url" for p in first) == 6 and first[0]["text"] == "Frame-1:"
    assert "Motion summary: The ego-vehicle is" in text and text.endswith("and nothing else.")
    assert "Options:\nA. Ego is" in text

    base = json.loads((tmp_path / "base" / "metrics.json").read_text())
    tcog = json.loads((tmp_path / "tcog" / "metrics.json").read_text())
    for scenario in READABLE:
        assert tcog["per_scenario"]["ego"][scenario] == 1.0
    assert tcog["per_scenario"]["ego"]["Ego is changing lanes"] < 1.0  # TCogMap cannot see lane changes
    assert base["average"] is None and tcog["agent"] is None  # ego-only set: upstream's average is NaN
    assert tcog["group_average"] == tcog["ego"] > base["ego"]

    # upstream's prediction JSON scores the same through the official scorer
    rescored = score_file(tmp_path / "tcog" / "official" / "stsbench_predictions.json", sts_world)
    assert rescored["ego"] == pytest.approx(tcog["ego"])

    comparison = compare([tmp_path / "base", tmp_path / "tcog"], n_boot=500)
    delta = comparison.deltas[1]
    assert delta.n_groups == 24 and delta.low > 0
    assert delta.delta == pytest.approx(tcog["group_average"] - base["group_average"], abs=1e-9)
    assert "ego: Ego is turning left" in comparison.breakdowns[1]
    out = kinegraph("compare", tmp_path / "base", tmp_path / "tcog").output
    assert "stsbench.tcogmap" in out and "group_average" in out
