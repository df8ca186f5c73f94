"""`tad.agent` end to end: the synthetic TAD world, real loopback servers, a model that calls the tools."""

from __future__ import annotations

import json

import pytest

from kinegraph.agents.loopback import AnthropicLoopback, OpenAILoopback
from kinegraph.report import compare, write_report
from tests.support.agent_models import tad_model
from tests.support.tool_caller_model import has_tool_result

LIMIT = "28"  # the first scenes' questions, segment and scene level


def _run(kinegraph, world, out, graph, server, *extra, model="vllm:loopback-vlm"):
    tad, nus = world
    return kinegraph(
        "run", "tad", "--graph", graph, "--model", model, "--base-url", server.base_url, "--data", tad,
        "--data-option", f"nuscenes_root={nus}", "--out", out, "--no-cache", "--no-progress",
        "--limit", LIMIT, *extra,
    )  # fmt: skip


def _predictions(run_dir):
    return [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().splitlines()]


def _calls(prediction):
    return [e for e in prediction["trace"] if "tool" in e]


def test_agent_answers_as_tcogmap_from_its_calls_and_compare_counts_them(tad_world, kinegraph, tmp_path):
    with OpenAILoopback(responder=tad_model()) as server:
        _run(kinegraph, tad_world, tmp_path / "base", "tad.baseline", server)
        _run(kinegraph, tad_world, tmp_path / "tcog", "tad.tcogmap", server)
        before = len(server.requests)
        _run(kinegraph, tad_world, tmp_path / "agent", "tad.agent", server)
        bodies = [r.body for r in server.requests[before:]]
    assert {t["function"]["name"] for t in bodies[0]["tools"]} == {"ego_motion_map", "camera_motion"}
    assert len(bodies) == 2 * int(LIMIT)

    agent, tcog = _predictions(tmp_path / "agent"), _predictions(tmp_path / "tcog")
    by_id = {p["sample_id"]: p for p in tcog}
    assert len(agent) == int(LIMIT) and {p["status"] for p in agent} == {"ok"}
    for p in agent:
        ego, camera = _calls(p)
        assert (ego["tool"], camera["tool"], ego["round"], camera["round"]) == (
            "ego_motion_map",
            "camera_motion",
            1,
            1,
        )
        assert ego["output"] in by_id[p["sample_id"]]["trace"][0]["prompt"]  # tad.tcogmap's own lines
        motion = json.loads(camera["output"])
        assert motion["direction"] in {"left", "right", "forward", "backward", "static"}
        assert motion["frames_used"]["n_frames"] == by_id[p["sample_id"]]["trace"][0]["n_images"]
        assert p["answer"] == by_id[p["sample_id"]]["answer"] and p["usage"]["requests"] == 2

    report = json.loads(
        write_report(compare([tmp_path / "base", tmp_path / "agent"]), tmp_path / "r.json").read_text()
    )
    base_use, use = (r["tool_use"] for r in report["runs"])
    n = int(LIMIT)
    assert (use["calls"], use["tools"], use["share_with_calls"]) == (
        2 * n,
        {"ego_motion_map": n, "camera_motion": n},
        1.0,
    )
    assert base_use["calls"] == 0 and use["primary_without_calls"] is None
    agent_metrics = json.loads((tmp_path / "agent" / "metrics.json").read_text())
    base_metrics = json.loads((tmp_path / "base" / "metrics.json").read_text())
    assert use["primary_with_calls"] == pytest.approx(agent_metrics["task_average"]["all"], rel=1e-9)
    assert agent_metrics["task_average"]["all"] > base_metrics["task_average"]["all"] + 0.3


def test_agent_through_the_anthropic_wire(tad_world, kinegraph, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "loopback-key")
    with AnthropicLoopback(responder=tad_model()) as server:
        _run(kinegraph, tad_world, tmp_path / "a", "tad.agent", server, model="anthropic:claude-haiku-4-5")
        bodies = [r.body for r in server.requests]
    assert {t["name"] for t in bodies[0]["tools"]} == {"ego_motion_map", "camera_motion"}
    follow = next(b for b in bodies if has_tool_result(b))
    uses = [b for m in follow["messages"] if isinstance(m["content"], list) for b in m["content"]]
    calls = {b["id"]: b["name"] for b in uses if b["type"] == "tool_use"}
    results = {calls[b["tool_use_id"]]: b["content"] for b in uses if b["type"] == "tool_result"}
    assert set(results) == {"ego_motion_map", "camera_motion"}
    assert results["ego_motion_map"].startswith("Motion summary")
    assert all(
        [e["tool"] for e in _calls(p)] == ["ego_motion_map", "camera_motion"]
        for p in _predictions(tmp_path / "a")
    )
