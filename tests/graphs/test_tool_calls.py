"""The reusable tool-call loop, on the `scripted` provider (a real backend that can answer with calls)."""

from __future__ import annotations

import asyncio

import pytest
from langgraph.runtime import Runtime

from kinegraph.agents import BackendError, get_backend
from kinegraph.agents.protocol import GenerateRequest, GenerateResponse, Message, ToolCall, ToolSpec
from kinegraph.graphs.state import GraphContext
from kinegraph.graphs.tool_calls import ask_with_tools, run_tool_call
from kinegraph.tool_registry.schema import argument_errors
from kinegraph.types import Status, Usage

ECHO_SCHEMA = {
    "type": "object",
    "properties": {
        "word": {"type": "string"},
        "times": {"type": "integer"},
        "tone": {"enum": ["calm", "loud"]},
    },
    "required": ["word"],
    "additionalProperties": False,
}


def _echo(arguments: dict) -> str:
    if arguments.get("times", 1) > 3:
        raise ValueError("at most 3 times")
    return " ".join([arguments["word"]] * arguments.get("times", 1))


TOOLS = {"echo": (ToolSpec(name="echo", description="Repeat a word.", parameters=ECHO_SCHEMA), _echo)}


def _calls(*calls: tuple[str, dict], text: str = "") -> GenerateResponse:
    tool_calls = [ToolCall(id=f"c{i}", name=n, arguments=a) for i, (n, a) in enumerate(calls)]
    return GenerateResponse(
        text=text, model="s", tool_calls=tool_calls, usage=Usage(input_tokens=10, output_tokens=2)
    )


def _final(text: str) -> GenerateResponse:
    return GenerateResponse(text=text, model="s", usage=Usage(input_tokens=20, output_tokens=1))


def _loop(responses: list, max_rounds: int = 3):
    backend = get_backend("scripted:tools", responses=responses, cycle=False, cache=False)
    request = GenerateRequest(messages=[Message(role="user", content="say it")], max_tokens=16)
    runtime = Runtime(context=GraphContext(backend=backend))
    result = asyncio.run(ask_with_tools(runtime, request, TOOLS, max_rounds, node="n"))
    return result, backend.inner.calls


@pytest.mark.parametrize(
    ("arguments", "want"),
    [
        ({"word": "hi"}, []),
        ({"word": "hi", "times": 2, "tone": "calm"}, []),
        ({}, ["missing required argument 'word'"]),
        ({"word": 3}, ["argument 'word' must be of type string, got 3"]),
        ({"word": "a", "times": True}, ["argument 'times' must be of type integer, got True"]),
        ({"word": "a", "tone": "shy"}, ["argument 'tone' must be one of ['calm', 'loud'], got 'shy'"]),
        ({"word": "a", "color": 1}, ["unexpected argument 'color' (accepted: ['times', 'tone', 'word'])"]),
        ({"_unparsed": "{word"}, ["arguments are not a JSON object: '{word'"]),
        (["word"], ["arguments must be a JSON object"]),
    ],
)
def test_argument_errors(arguments, want):
    assert argument_errors(ECHO_SCHEMA, arguments) == want


def test_run_tool_call_answers_bad_calls_with_what_was_wrong():
    assert (
        run_tool_call(TOOLS, ToolCall(id="1", name="echo", arguments={"word": "go", "times": 2})) == "go go"
    )
    assert run_tool_call(TOOLS, ToolCall(id="1", name="lidar", arguments={})) == (
        "Error: unknown tool 'lidar'; available tools: echo."
    )
    assert run_tool_call(TOOLS, ToolCall(id="1", name="echo", arguments={"word": "go", "x": 1})) == (
        "Error: bad arguments for echo: unexpected argument 'x' (accepted: ['times', 'tone', 'word'])."
    )
    assert run_tool_call(TOOLS, ToolCall(id="1", name="echo", arguments={"word": "go", "times": 9})) == (
        "Error: echo could not run: at most 3 times"
    )


def test_loop_runs_the_calls_and_asks_again_with_the_results():
    result, calls = _loop(
        [_calls(("echo", {"word": "hi", "times": 2}), ("lidar", {}), text="let me see"), _final("hi hi")]
    )
    assert result.error == {} and result.response.text == "hi hi"
    assert [len(c.messages) for c in calls] == [1, 4]
    assert all(c.tools and c.tools[0].name == "echo" for c in calls)
    assistant, first, second = calls[1].messages[1:]
    assert assistant.role == "assistant" and assistant.text == "let me see"
    assert [c.name for c in assistant.tool_calls] == ["echo", "lidar"]
    assert (first.role, first.tool_call_id, first.text) == ("tool", "c0", "hi hi")
    assert (second.tool_call_id, second.text) == ("c1", "Error: unknown tool 'lidar'; available tools: echo.")
    assert result.trace == [
        {"node": "n", "round": 1, "tool": "echo", "arguments": {"word": "hi", "times": 2}, "output": "hi hi"},
        {"node": "n", "round": 1, "tool": "lidar", "arguments": {}, "output": second.text},
    ]
    assert (result.usage.input_tokens, result.usage.output_tokens) == (30, 3)
    assert result.response.usage == result.usage  # the final response carries the sum over rounds


def test_a_response_without_calls_ends_the_loop_at_once():
    result, calls = _loop([_final("left")])
    assert result.response.text == "left" and result.trace == [] and len(calls) == 1


def test_calls_after_the_last_round_end_the_loop_with_that_response():
    result, calls = _loop([_calls(("echo", {"word": "a"}))] * 4, max_rounds=2)
    assert len(calls) == 3  # two answered rounds, then the third response is final
    assert result.response.text == "" and result.response.tool_calls
    assert result.trace[-1] == {"node": "n", "tool_rounds_exhausted": 2}
    assert [e["round"] for e in result.trace[:-1]] == [1, 2]


def test_a_failed_request_mid_loop_keeps_the_usage_spent_so_far():
    result, _ = _loop([_calls(("echo", {"word": "a"})), BackendError("provider down")])
    assert result.response is None and result.error["status"] == Status.api_error
    assert result.error["usage"].input_tokens == 10 and "provider down" in result.error["error"]
    assert [e["tool"] for e in result.trace] == ["echo"]


def test_negative_round_limit_is_rejected():
    with pytest.raises(ValueError, match="max_rounds"):
        _loop([_final("x")], max_rounds=-1)
