"""The tool-call loop any graph can use: offer functions, run what the model calls, ask again.

`ask_with_tools` sends the request with the tools' specs; while the response calls tools (and rounds are
left) it appends the assistant turn with its calls and one `tool` message per call, then asks again. A
call of an unknown tool, with arguments that break the tool's schema, or whose tool rejects its input
(ValueError) is answered with a tool message saying so, so the model may recover; it never fails the
sample. At most `MAX_CALLS_PER_ROUND` calls of one response run; the rest are answered as not run. Every
call is recorded for the prediction trace, and usage is summed over all rounds. Tools run in a worker
thread, so a measurement (optical flow, tracking) never holds up other questions' requests.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from langgraph.runtime import Runtime

from kinegraph.agents.protocol import GenerateRequest, GenerateResponse, Message, ToolCall, ToolSpec
from kinegraph.graphs.nodes import ask
from kinegraph.graphs.state import GraphContext
from kinegraph.tool_registry.schema import argument_errors
from kinegraph.types import Usage

MAX_TOOL_ROUNDS = 3
#: Tool calls run per round: a response asking for more has the rest answered "not run" (each call still
#: gets its tool message, as the APIs require), so one response cannot make a request cost without bound.
MAX_CALLS_PER_ROUND = 8

#: A tool: its spec and a function of the call's (validated) arguments returning the text the model reads.
Tool = tuple[ToolSpec, Callable[[dict[str, Any]], str]]


@dataclass(frozen=True)
class ToolOffer:
    """What a graph offers the model: `table(measurements)` builds the tools for one group's measurements."""

    table: Callable[[dict[str, Any]], Mapping[str, Tool]]
    max_rounds: int = MAX_TOOL_ROUNDS


class ToolLoopResult(NamedTuple):
    """The final response (usage summed over every round) or None with the fields of an error prediction
    (usage so far included); the calls made, as trace entries; the summed usage."""

    response: GenerateResponse | None
    error: dict[str, Any]
    trace: list[dict[str, Any]]
    usage: Usage


def run_tool_call(tools: Mapping[str, Tool], call: ToolCall) -> str:
    """The text answering one call: the tool's output, or what was wrong with the call."""
    if call.name not in tools:
        return f"Error: unknown tool {call.name!r}; available tools: {', '.join(sorted(tools)) or 'none'}."
    spec, function = tools[call.name]
    errors = argument_errors(spec.parameters, call.arguments)
    if errors:
        return f"Error: bad arguments for {call.name}: " + "; ".join(errors) + "."
    try:
        return function(call.arguments)
    except ValueError as exc:
        return f"Error: {call.name} could not run: {exc}"


async def ask_with_tools(
    runtime: Runtime[GraphContext],
    request: GenerateRequest,
    tools: Mapping[str, Tool],
    max_rounds: int = MAX_TOOL_ROUNDS,
    *,
    node: str = "ask_with_tools",
    max_calls_per_round: int = MAX_CALLS_PER_ROUND,
) -> ToolLoopResult:
    """Ask with `tools` offered; answer up to `max_rounds` rounds of at most `max_calls_per_round` calls
    each, then return the last response.

    A response that still calls tools after the last round is returned as it is (its text is parsed).
    """
    if max_rounds < 0:
        raise ValueError(f"max_rounds must be >= 0, got {max_rounds}")
    if max_calls_per_round < 1:
        raise ValueError(f"max_calls_per_round must be >= 1, got {max_calls_per_round}")
    messages = list(request.messages)
    offered = [spec for spec, _ in tools.values()]
    trace: list[dict[str, Any]] = []
    usage = Usage()
    rounds = 0
    while True:
        response, error = await ask(
            runtime, request.model_copy(update={"messages": list(messages), "tools": offered})
        )
        if response is None:
            return ToolLoopResult(None, {**error, "usage": usage}, trace, usage)
        usage = usage + response.usage
        if response.tool_calls and rounds == max_rounds:
            trace.append({"node": node, "tool_rounds_exhausted": max_rounds})
        if not response.tool_calls or rounds == max_rounds:
            return ToolLoopResult(response.model_copy(update={"usage": usage}), {}, trace, usage)
        rounds += 1
        messages.append(Message(role="assistant", content=response.text, tool_calls=response.tool_calls))
        if len(response.tool_calls) > max_calls_per_round:
            not_run = len(response.tool_calls) - max_calls_per_round
            trace.append({"node": node, "round": rounds, "tool_calls_not_run": not_run})
        for index, call in enumerate(response.tool_calls):
            if index >= max_calls_per_round:
                output = f"Error: not run: at most {max_calls_per_round} tool calls are run per round."
                messages.append(Message(role="tool", content=output, tool_call_id=call.id))
                continue
            output = await asyncio.to_thread(run_tool_call, tools, call)
            messages.append(Message(role="tool", content=output, tool_call_id=call.id))
            trace.append(
                {
                    "node": node,
                    "round": rounds,
                    "tool": call.name,
                    "arguments": call.arguments,
                    "output": output,
                }
            )
