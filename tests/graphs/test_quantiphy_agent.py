"""`quantiphy.agent` end to end: a synthetic world, real loopback servers, a model calling the calculator."""

from __future__ import annotations

import json

import pytest

from kinegraph.agents.loopback import AnthropicLoopback, OpenAILoopback
from kinegraph.agents.loopback_wire import Reply
from kinegraph.report import compare, write_report
from kinegraph.run import execute as run
from kinegraph.suites import suites
from kinegraph.types import RunConfig
from tests.support.agent_models import quantiphy_model as measurer


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return suites.get("quantiphy").generate(tmp_path_factory.mktemp("qp"), n=4, seed=2)


def _config(world, out, graph, server, model="vllm:loopback", **kw):
    return RunConfig(
        benchmark="quantiphy",
        graph=graph,
        model=model,
        base_url=server.base_url,
        data=str(world / "quantiphy_validation.csv"),
        out_dir=str(out),
        use_cache=False,
        **kw,
    )


def _predictions(out):
    return [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]


def _calls(prediction):
    return [e for e in prediction["trace"] if "tool" in e]


@pytest.mark.slow
def test_agent_calls_the_calculator_answers_its_value_and_compare_counts_the_calls(world, tmp_path):
    with OpenAILoopback(responder=measurer(world)) as server:
        zero = run(_config(world, tmp_path / "zero", "quantiphy.zero_shot", server), show_progress=False)
        agent = run(_config(world, tmp_path / "agent", "quantiphy.agent", server), show_progress=False)
        bodies = [r.body for r in server.requests[zero.n_predictions :]]
    assert agent.status_counts == {"ok": agent.n_predictions}
    assert agent.headline["mra_average"] > 0.8 > zero.headline["mra_average"]
    assert min(agent.headline[f"mra_{kind}"] for kind in ("S2", "D2", "S3", "D3")) > 0.8  # 3D rows too

    first = bodies[0]
    assert {t["function"]["name"] for t in first["tools"]} == {"pixel_scale_calculator", "track_objects"}
    assert all("video_path" not in t["function"]["parameters"]["properties"] for t in first["tools"])
    assert first["messages"][1]["content"][-1]["text"].endswith(
        "Please answer the question with numbers and units ONLY. No explanation needed."
    )
    assert len(bodies) == 2 * agent.n_predictions  # one call round, then the answer

    predictions = _predictions(tmp_path / "agent")
    for p in predictions:
        (call,) = _calls(p)
        assert (call["node"], call["round"], call["tool"]) == (
            "answer_with_tools",
            1,
            "pixel_scale_calculator",
        )
        result = json.loads(call["output"])
        assert p["raw"] == result["answer"] and p["answer"] == pytest.approx(result["value"], rel=1e-5)
        assert p["usage"]["requests"] == 2

    report = json.loads(
        write_report(compare([tmp_path / "zero", tmp_path / "agent"]), tmp_path / "r.json").read_text()
    )
    use = report["runs"][1]["tool_use"]
    n = len(predictions)
    assert (use["calls"], use["tools"], use["questions_with_calls"]) == (n, {"pixel_scale_calculator": n}, n)
    assert use["primary_with_calls"] == pytest.approx(agent.headline["mra_average"])
    assert use["primary_without_calls"] is None and report["runs"][0]["tool_use"]["calls"] == 0


def test_unknown_tools_and_bad_arguments_are_answered_and_rounds_are_bounded(world, tmp_path):
    def confused(body):
        return Reply(tool_calls=[("lidar_scan", {}), ("track_objects", {"video_path": "x.mp4"})])

    with OpenAILoopback(responder=confused) as server:
        summary = run(
            _config(
                world, tmp_path / "c", "quantiphy.agent", server, limit=1, options={"max_tool_rounds": 2}
            ),
            show_progress=False,
        )
        last = server.requests[-1].body
    assert len(server.requests) == 3 and summary.status_counts == {"parse_failure": 1}
    assert [m["content"] for m in last["messages"][-2:]] == [
        "Error: unknown tool 'lidar_scan'; available tools: pixel_scale_calculator, track_objects.",
        "Error: bad arguments for track_objects: "
        "unexpected argument 'video_path' (accepted: ['seed_boxes_px']).",
    ]
    (prediction,) = _predictions(tmp_path / "c")
    assert [(e["round"], e["tool"]) for e in _calls(prediction)] == [
        (1, "lidar_scan"),
        (1, "track_objects"),
        (2, "lidar_scan"),
        (2, "track_objects"),
    ]
    assert {"node": "answer_with_tools", "tool_rounds_exhausted": 2} in prediction["trace"]
    assert prediction["usage"]["requests"] == 3


def test_agent_through_the_anthropic_wire(world, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "loopback-key")
    with AnthropicLoopback(responder=measurer(world)) as server:
        summary = run(
            _config(
                world, tmp_path / "a", "quantiphy.agent", server, model="anthropic:claude-haiku-4-5", limit=2
            ),
            show_progress=False,
        )
        bodies = [r.body for r in server.requests]
    assert summary.status_counts == {"ok": 2}
    assert {t["name"] for t in bodies[0]["tools"]} == {"pixel_scale_calculator", "track_objects"}
    for p in _predictions(tmp_path / "a"):
        (call,) = _calls(p)
        assert p["raw"] == json.loads(call["output"])["answer"]
