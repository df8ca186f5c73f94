"""AutoDriDM graphs end to end over the synthetic drawn scenes with a text-only loopback VLM."""

from __future__ import annotations

import json

import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.report import compare
from tests.support.suite_readers import autodridm_reader


def _run(kinegraph, world, out, graph, server):
    return kinegraph(
        "run", "autodridm", "--graph", graph, "--model", "vllm:loopback-vlm", "--base-url", server.base_url,
        "--data", world, "--out", out, "--no-cache", "--no-progress",
    )  # fmt: skip


def test_baseline_vs_image_cues_compare(autodridm_world, kinegraph, tmp_path):
    with OpenAILoopback(responder=autodridm_reader) as server:
        _run(kinegraph, autodridm_world, tmp_path / "base", "autodridm.baseline", server)
        _run(kinegraph, autodridm_world, tmp_path / "tools", "autodridm.tools", server)
        requests = list(server.requests)
    assert len(requests) == 2 * 120  # 20 images x 6 tasks
    system = {r.body["messages"][0]["content"][:40] for r in requests}
    assert len(system) == 1  # the single and multi system prompts share their opening
    multi = [r for r in requests if "comma-separated" in r.body["messages"][0]["content"]]
    assert len(multi) == 2 * 40  # Scene-1 and Scene-2
    user = requests[-1].body["messages"][1]["content"]
    assert user[0]["type"] == "image_url" and "lit traffic lamp:" in user[1]["text"]

    truth = [
        json.loads(line) for line in (autodridm_world / "synthetic_truth.jsonl").read_text().splitlines()
    ]
    tools = json.loads((tmp_path / "tools" / "metrics.json").read_text())
    base = json.loads((tmp_path / "base" / "metrics.json").read_text())
    assert tools["all"]["tasks"]["Object-2"] == 1.0  # the lamp cue names the light's state every time
    dry = sum(not t["rain"] for t in truth) / len(truth)
    assert tools["all"]["tasks"]["Scene-1"] == pytest.approx(dry)  # day/night right; rain is not measured
    assert tools["all"]["average"] > base["all"]["average"]

    rescored = json.loads(
        kinegraph(
            "evaluate", "autodridm", tmp_path / "tools" / "official" / "autodridm_predictions.jsonl",
            "--data", autodridm_world,
        ).output
    )  # fmt: skip
    assert rescored["all"]["average"] == pytest.approx(tools["all"]["average"])

    comparison = compare([tmp_path / "base", tmp_path / "tools"], n_boot=500)
    delta = comparison.deltas[1]
    assert delta.n_groups == 20 and delta.low > 0
    assert delta.delta == pytest.approx(tools["all"]["average"] - base["all"]["average"], abs=1e-9)
    assert comparison.breakdowns[1]["Object-2"] == 1.0
    out = kinegraph("compare", tmp_path / "base", tmp_path / "tools").output
    assert "autodridm.tools" in out and "high_risk_average" in out
