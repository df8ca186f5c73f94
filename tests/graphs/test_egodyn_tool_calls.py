"""`egodyn.tool_calls` end to end: real loopback servers, a text-only model that calls tools."""

from __future__ import annotations

import json

import pytest

from kinegraph.agents.loopback import AnthropicLoopback, OpenAILoopback
from kinegraph.agents.loopback_wire import Reply
from kinegraph.benchmarks.egodyn.questions import VISION_BASELINE_QUESTIONS
from kinegraph.run import execute as run
from kinegraph.types import RunConfig
from tests.support.text_reader_model import text_reader
from tests.support.tool_caller_model import conversation_text, has_tool_result, tool_caller

OFFERED = {"visual_odometry", "optical_flow", "ego_motion_summary"}
MEASURED_TITLE = "TCogMap ego-motion summary of the measured metric trajectory: the ego vehicle is "


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """A small synthetic EgoDyn set rendered by `kinegraph synth egodyn` (nuScenes frames + CARLA mp4s)."""
    from kinegraph.suites import suites

    return suites.get("egodyn").generate(tmp_path_factory.mktemp("synth"), n=4, seed=3)


def _run(server, rendered, out, graph="egodyn.tool_calls", model="vllm:reader", **config):
    return run(
        RunConfig(
            benchmark="egodyn",
            graph=graph,
            model=model,
            base_url=server.base_url,
            data=str(rendered),
            out_dir=str(out),
            use_cache=False,
            **config,
        ),
        show_progress=False,
    )


def _predictions(run_dir):
    return [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().splitlines()]


def _probe_accuracy(summary):
    per_question = summary.metrics["per_question"]
    return sum(per_question[q]["accuracy"] for q in VISION_BASELINE_QUESTIONS) / 6


@pytest.fixture(scope="module")
def vision_run(rendered, tmp_path_factory):
    """`egodyn.vision` with the blind text reader: the baseline every calls-mode run is compared with."""
    out = tmp_path_factory.mktemp("vision")
    with OpenAILoopback(responder=text_reader) as server:
        summary = _run(server, rendered, out, graph="egodyn.vision")
    return summary, {p["sample_id"]: p["answer"] for p in _predictions(out)}


@pytest.mark.slow
def test_calls_mode_sends_tools_runs_the_calls_and_beats_blind_vision(rendered, tmp_path, vision_run):
    with OpenAILoopback(responder=tool_caller) as server:
        summary = _run(server, rendered, tmp_path / "calls")
        bodies = [r.body for r in server.requests]
    assert set(summary.status_counts) <= {"ok", "parse_failure"} and summary.decodes == 8

    # every request offers the three probes in the OpenAI function format; the prompt has no tool text
    first = next(b for b in bodies if not has_tool_result(b))
    assert {t["type"] for t in first["tools"]} == {"function"}
    assert {t["function"]["name"] for t in first["tools"]} == OFFERED
    assert all(t["function"]["parameters"]["type"] == "object" for t in first["tools"])
    assert "Visual odometry" not in conversation_text(first) and "Measurements from" not in conversation_text(
        first
    )

    # the follow-up carries the assistant's call and the tool's answer: the probe's text
    follow = next(b for b in bodies if "turning left" in conversation_text(b) and has_tool_result(b))
    assistant, tool = follow["messages"][-2:]
    assert assistant["role"] == "assistant"
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == ["visual_odometry"]
    assert tool["role"] == "tool" and tool["tool_call_id"] == assistant["tool_calls"][0]["id"]
    assert tool["content"].startswith("Visual odometry (KLT tracks + essential matrix)")
    assert "its reading of the questions it can answer" in tool["content"]
    assert len(bodies) == 2 * summary.n_predictions  # each question: one call round, then the answer

    # predictions list the calls, with two requests' usage summed
    turn = next(p for p in _predictions(tmp_path / "calls") if p["question_id"] == "yaw_rate_turn_direction")
    calls = [e for e in turn["trace"] if "tool" in e]
    assert calls == [
        {
            "node": "answer_question_with_tools",
            "round": 1,
            "tool": "visual_odometry",
            "arguments": {},
            "output": calls[0]["output"],
        }
    ]
    assert calls[0]["output"].startswith("Visual odometry") and turn["usage"]["requests"] == 2
    speed = next(p for p in _predictions(tmp_path / "calls") if p["question_id"] == "speed_regime")
    summary_call = next(e for e in speed["trace"] if "tool" in e)
    assert summary_call["tool"] == "ego_motion_summary"
    assert summary_call["output"].startswith(MEASURED_TITLE)

    # on the six questions the probes measure, the same blind reader gains from what it asked for
    vision, _ = vision_run
    print(
        f"probe-question accuracy: vision {_probe_accuracy(vision):.3f}, calls {_probe_accuracy(summary):.3f}"
    )
    assert _probe_accuracy(summary) > _probe_accuracy(vision) + 0.1


@pytest.mark.slow
def test_a_model_that_never_calls_tools_answers_as_vision(rendered, tmp_path, vision_run):
    with OpenAILoopback(responder=text_reader) as server:
        summary = _run(server, rendered, tmp_path / "calls")
        bodies = [r.body for r in server.requests]
    assert len(bodies) == summary.n_predictions and all(b["tools"] and not has_tool_result(b) for b in bodies)
    answers = {p["sample_id"]: p["answer"] for p in _predictions(tmp_path / "calls")}
    assert answers == vision_run[1]


@pytest.mark.slow
def test_grouped_calls_mode_asks_once_per_clip_round(rendered, tmp_path):
    with OpenAILoopback(responder=tool_caller) as server:
        summary = _run(server, rendered, tmp_path / "g", options={"grouped": True}, limit=28)
        bodies = [r.body for r in server.requests]
    assert len(bodies) == 4  # two clips, each: one request calling both tools, one answering all 14
    follow = next(b for b in bodies if has_tool_result(b))
    assert [c["function"]["name"] for c in follow["messages"][1]["tool_calls"]] == [
        "visual_odometry",
        "ego_motion_summary",
    ]
    predictions = _predictions(tmp_path / "g")
    assert summary.status_counts == {"ok": 28}
    assert sorted(p["usage"]["requests"] for p in predictions) == [0] * 26 + [2, 2]  # counted once per clip
    assert all(p["trace"][1]["node"] == "answer_clip_with_tools" for p in predictions)


@pytest.mark.slow
def test_unknown_tool_and_bad_arguments_are_answered_not_fatal(rendered, tmp_path):
    def confused(body):
        if not has_tool_result(body):
            return Reply(tool_calls=[("lidar_scan", {}), ("visual_odometry", {"detail": "high"})])
        return text_reader(body)

    with OpenAILoopback(responder=confused) as server:
        summary = _run(server, rendered, tmp_path / "u", limit=14)
        follow = next(r.body for r in server.requests if has_tool_result(r.body))
    assert set(summary.status_counts) <= {"ok", "parse_failure"}
    assert [m["content"] for m in follow["messages"][-2:]] == [
        "Error: unknown tool 'lidar_scan'; available tools: "
        "ego_motion_summary, optical_flow, visual_odometry.",
        "Error: bad arguments for visual_odometry: unexpected argument 'detail' (accepted: none).",
    ]
    trace = _predictions(tmp_path / "u")[0]["trace"]
    assert [(e["tool"], e["arguments"]) for e in trace if "tool" in e] == [
        ("lidar_scan", {}),
        ("visual_odometry", {"detail": "high"}),
    ]


@pytest.mark.slow
def test_calls_mode_through_the_anthropic_wire(rendered, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "loopback-key")
    with AnthropicLoopback(responder=tool_caller) as server:
        summary = _run(server, rendered, tmp_path / "a", model="anthropic:claude-haiku-4-5", limit=14)
        bodies = [r.body for r in server.requests]
    assert set(summary.status_counts) <= {"ok", "parse_failure"}
    assert {t["name"] for t in bodies[0]["tools"]} == OFFERED and "input_schema" in bodies[0]["tools"][0]
    follow = next(b for b in bodies if "turning left" in conversation_text(b) and has_tool_result(b))
    use = next(b for b in follow["messages"][-2]["content"] if b["type"] == "tool_use")
    result = follow["messages"][-1]["content"][0]
    assert (use["name"], result["type"], result["tool_use_id"]) == (
        "visual_odometry",
        "tool_result",
        use["id"],
    )
    assert result["content"].startswith("Visual odometry")
    turn = next(p for p in _predictions(tmp_path / "a") if p["question_id"] == "yaw_rate_turn_direction")
    assert [e["tool"] for e in turn["trace"] if "tool" in e] == ["visual_odometry"]
    assert turn["answer"] == next(
        line.rsplit("-> ", 1)[1]
        for line in result["content"].splitlines()
        if line.startswith("  - Is the vehicle turning left")
    )


def test_replay_answers_recorded_text_through_calls_mode(rendered, tmp_path):
    qa = [json.loads(line) for line in (rendered / "nuscenes_clips" / "qa.jsonl").read_text().splitlines()][
        :14
    ]
    recorded = tmp_path / "m_answers.jsonl"
    recorded.write_text(
        "".join(json.dumps({"qa_id": r["qa_id"], "model_answer": r["choices"][-1]}) + "\n" for r in qa)
    )
    summary = run(
        RunConfig(
            benchmark="egodyn",
            graph="egodyn.tool_calls",
            model=f"replay:{recorded}",
            data=str(rendered),
            out_dir=str(tmp_path / "r"),
            limit=14,
        ),
        show_progress=False,
    )
    assert summary.status_counts == {"ok": 14}
    predictions = _predictions(tmp_path / "r")
    assert [p["answer"] for p in predictions] == [r["choices"][-1] for r in qa]
    assert not any("tool" in e for p in predictions for e in p["trace"])  # a recording never calls tools


@pytest.mark.slow
def test_cli_runs_calls_mode(rendered, tmp_path, kinegraph):
    with OpenAILoopback(responder=tool_caller) as server:
        kinegraph(
            "run", "egodyn", "--graph", "egodyn.tool_calls", "--model", "vllm:reader",
            "--base-url", server.base_url, "--data", rendered, "--out", tmp_path / "cli", "--limit", "14",
            "--no-cache", "--no-progress",
        )  # fmt: skip
        assert sum(has_tool_result(r.body) for r in server.requests) == 14
    config = json.loads((tmp_path / "cli" / "run.json").read_text())["config"]
    assert (config["graph"], config["options"]) == ("egodyn.tool_calls", {})


@pytest.mark.slow
def test_text_mode_injects_the_tcogmap_summary_and_offers_no_tools(rendered, tmp_path):
    with OpenAILoopback(responder=text_reader) as server:
        _run(server, rendered, tmp_path / "t", graph="egodyn.tools", limit=14)
        bodies = [r.body for r in server.requests]
    assert all("tools" not in b for b in bodies)
    text = conversation_text(bodies[0])
    assert "Measurements from deterministic motion tools" in text
    assert f"\n{MEASURED_TITLE}" in text and "max_speed: " in text


@pytest.mark.parametrize("graph", ["egodyn.tools", "egodyn.tool_calls"])
def test_bad_probe_names_are_rejected_at_build_time(graph):
    from kinegraph.graphs import graph_spec

    with pytest.raises(ValueError, match=r"probes must name at least one of \['flow', 'gpu_flow', 'tcogmap'"):
        graph_spec(graph).build({"probes": ["vo", "lidar"]})
