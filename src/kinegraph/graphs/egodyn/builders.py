"""EgoDyn-Bench graphs: the VLM baselines (vision, trajectory) and their tool-augmented variant.

Each builder returns a compiled graph over one clip (`GroupState`); the runtime context carries the backend.
Prompts are upstream's (`graphs/egodyn/prompts.py`); answers go through the official parser.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from kinegraph.agents.protocol import GenerateRequest, GenerateResponse, Message, TextPart
from kinegraph.benchmarks.egodyn.loader import load_arrays
from kinegraph.evaluators.egodyn import parse_answer
from kinegraph.graphs.egodyn import prompts
from kinegraph.graphs.nodes import (
    ask,
    prediction,
)
from kinegraph.graphs.shapes import question_graph
from kinegraph.graphs.state import GraphContext, GroupState, QuestionState
from kinegraph.graphs.tool_calls import ToolOffer, ask_with_tools
from kinegraph.types import Sample, Status

Encoding = Literal["summary", "timeseries", "coordinates", "full"]
MAX_TOKENS = 256  # upstream default; reasoning models need more (set on the backend)

BlockFn = Callable[[dict[str, Any]], list[str | None]]


def no_blocks(measurements: dict[str, Any]) -> list[str | None]:
    """No text besides the question: the vision-only prompt."""
    return []


def trajectory_blocks(measurements: dict[str, Any]) -> list[str | None]:
    return [measurements.get("trajectory")]


def tool_blocks(measurements: dict[str, Any]) -> list[str | None]:
    return [measurements.get("trajectory"), prompts.tool_block(measurements.get("tools", {}))]


def question_request(text: str, state: QuestionState | GroupState, sample: Sample) -> GenerateRequest:
    """Upstream's request: the prompt text, then the frames; replay's lookup keys in the metadata."""
    content = [TextPart(text=text), *state.get("images", [])]  # upstream order: text, then images
    # replay looks answers up by these (never sent to the model, not part of the cache key)
    metadata = {
        "sample_id": sample.metadata.get("qa_id") or sample.id,
        "clip_id": sample.group,
        "question_id": sample.question_id,
    }
    return GenerateRequest(
        messages=[Message(role="user", content=content)], max_tokens=MAX_TOKENS, metadata=metadata
    )


def finish_prediction(
    sample: Sample, raw: str, state: Any, response: Any, start: float, trace: list[dict]
) -> Any:
    """The prediction of `raw` read by the official parser (`response`'s usage, when given)."""
    answer = parse_answer(raw, sample.options, sample.metadata.get("answer_type", "multiclass"))
    extra = {"usage": response.usage} if response is not None else {}
    return prediction(
        sample,
        raw=raw,
        answer=answer,
        status=Status.ok if answer is not None else Status.parse_failure,
        trace=trace,
        frames=state.get("frame_record"),
        latency_s=time.perf_counter() - start,
        **extra,
    )


async def _ask(
    runtime: Runtime[GraphContext],
    request: GenerateRequest,
    state: QuestionState | GroupState,
    tools: ToolOffer | None,
    node: str,
) -> tuple[GenerateResponse | None, dict[str, Any], list[dict[str, Any]]]:
    """One request, or the tool-call loop when the graph offers tools: (response, error fields, calls)."""
    if tools is None:
        response, error = await ask(runtime, request)
        return response, error, []
    table = tools.table(state.get("measurements", {}))
    loop = await ask_with_tools(runtime, request, table, tools.max_rounds, node=node)
    return loop.response, loop.error, loop.trace


def _node_name(base: str, tools: ToolOffer | None) -> str:
    return base if tools is None else f"{base}_with_tools"


def answer_question(blocks: BlockFn, tools: ToolOffer | None = None) -> Callable[..., Any]:
    """Ask one question with the clip's frames and text blocks (and `tools` offered); official parser."""
    node = _node_name("answer_question", tools)

    async def answer(state: QuestionState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        sample, start = state["sample"], time.perf_counter()
        text = prompts.single_prompt(
            sample.question, sample.options, len(state["images"]), blocks(state["measurements"])
        )
        response, error, calls = await _ask(
            runtime, question_request(text, state, sample), state, tools, node
        )
        trace = [{"node": node, "prompt": text}, *calls]
        if response is None:
            return {"results": [prediction(sample, trace=trace, frames=state["frame_record"], **error)]}
        trace.append({"node": node, "raw": response.text, "cached": response.cached})
        return {"results": [finish_prediction(sample, response.text, state, response, start, trace)]}

    return answer


def answer_clip(blocks: BlockFn, tools: ToolOffer | None = None) -> Callable[..., Any]:
    """Upstream's grouped mode: every question of the clip in one request, numbered answers."""
    node = _node_name("answer_clip", tools)

    async def answer(state: GroupState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        samples, start = state["samples"], time.perf_counter()
        measurements = state.get("measurements", {})
        text = prompts.grouped_prompt(
            [(s.question, s.options) for s in samples], len(state.get("images", [])), blocks(measurements)
        )
        response, error, calls = await _ask(
            runtime, question_request(text, state, samples[0]), state, tools, node
        )
        trace = [{"node": node, "prompt": text}, *calls]
        if response is None:
            return {
                "results": [
                    prediction(s, trace=trace, frames=state.get("frame_record"), **error) for s in samples
                ]
            }
        raws = prompts.parse_grouped_response(response.text, len(samples))
        trace.append({"node": node, "raw": response.text, "cached": response.cached})
        results = [
            finish_prediction(s, raw, state, None, start, trace) for s, raw in zip(samples, raws, strict=True)
        ]
        results[0] = results[0].model_copy(update={"usage": response.usage})  # one call: counted once
        return {"results": results}

    return answer


def encode_trajectory(encoding: Encoding, num_points: int) -> Callable[..., Any]:
    """The clip's ego trajectory as upstream's text encoding (summary/timeseries/coordinates/full)."""

    async def encode(state: GroupState) -> dict[str, Any]:
        from kinegraph.tools.encoders import encode_trajectory as encode_text

        sample = state["samples"][0]
        arrays = load_arrays(sample)
        text = encode_text(
            encoding, arrays=arrays, features=sample.context.get("features", {}), num_points=num_points
        )
        return {"measurements": {"trajectory": text}}

    return encode


def vlm_graph(
    *,
    num_frames: int,
    grouped: bool,
    max_side: int | None,
    blocks: BlockFn,
    prelude: Sequence[tuple[str, Callable[..., Any]]] = (),
    frames: bool = True,
    tools: ToolOffer | None = None,
) -> CompiledStateGraph:
    """decode -> encode -> [prelude nodes] -> ask (each question, or grouped; `tools` offered if given)."""
    return question_graph(
        answer_clip(blocks, tools) if grouped else answer_question(blocks, tools),
        answer_name=_node_name("answer_clip" if grouped else "answer_question", tools),
        num_frames=num_frames,
        max_side=max_side,
        prelude=prelude,
        frames=frames,
        grouped=grouped,
    )


def build_vision(
    num_frames: int = 10, grouped: bool = False, max_side: int | None = None
) -> CompiledStateGraph:
    """`egodyn.vision`: frames + question, upstream prompt; one question per request or grouped by clip.

    `num_frames=1` sends the clip's middle frame, as upstream's `select_frames` does; the paper's static
    row (O = {I_0}) is `egodyn.static_first`.
    """
    return vlm_graph(num_frames=num_frames, grouped=grouped, max_side=max_side, blocks=no_blocks)


def build_trajectory(
    encoding: Encoding = "summary",
    num_frames: int = 10,
    text_only: bool = False,
    grouped: bool = False,
    max_side: int | None = None,
) -> CompiledStateGraph:
    """`egodyn.trajectory`: plus the ego trajectory as text (`text_only`: the paper's O=∅ ablation)."""
    prelude = [("encode_trajectory", encode_trajectory(encoding, num_frames))]
    return vlm_graph(
        num_frames=num_frames,
        grouped=grouped,
        max_side=max_side,
        blocks=trajectory_blocks,
        prelude=prelude,
        frames=not text_only,
    )


def build_text_only(encoding: Encoding = "summary", grouped: bool = False) -> CompiledStateGraph:
    """`egodyn.text_only`: the trajectory text without frames (Table 4's O=∅ row)."""
    return build_trajectory(encoding, text_only=True, grouped=grouped)


def measure_ego_motion(
    probes: Sequence[str],
    vo_thresholds: Mapping[str, float] | None = None,
    flow_thresholds: Mapping[str, float] | None = None,
) -> Callable[..., Any]:
    """Measure the clip with the probes (VO, flow, TCogMap on the measured trajectory); keep each as text
    too. A clip a probe cannot measure fails its questions (counted as errors), never asks without it.
    `vo_thresholds` / `flow_thresholds`: mapping thresholds to change (unknown names refused here)."""
    from kinegraph.graphs.egodyn import tools as egodyn_tools

    vo = egodyn_tools.vo_thresholds(vo_thresholds)
    flow = egodyn_tools.flow_thresholds(flow_thresholds)

    async def measure(state: GroupState) -> dict[str, Any]:
        from kinegraph.errors import DataError

        sample = state["samples"][0]
        try:
            measured = await asyncio.to_thread(
                egodyn_tools.measure_probes, probes, state["frames"], sample, vo, flow
            )
        except (DataError, OSError, ValueError) as exc:
            raise DataError(f"probes {list(probes)} on {sample.group}: {exc}") from exc
        text = {name: prompts.describe_probe(name, m) for name, m in measured.items()}
        return {"measurements": {"tools": text, "probes": measured}}

    return measure


def probe_prelude(
    probes: Sequence[str],
    encoding: Encoding | None,
    num_frames: int,
    vo_thresholds: Mapping[str, float] | None = None,
    flow_thresholds: Mapping[str, float] | None = None,
) -> list[tuple[str, Callable[..., Any]]]:
    """The nodes run before asking in `egodyn.tools` and `egodyn.tool_calls`: measure the clip with the
    probes, then (with `encoding`) encode the trajectory as text. Unknown probes are refused here."""
    from kinegraph.graphs.egodyn.tools import check_probes

    check_probes(probes)
    measure = measure_ego_motion(tuple(probes), vo_thresholds, flow_thresholds)
    prelude = [("measure_ego_motion", measure)]
    if encoding is not None:
        prelude.append(("encode_trajectory", encode_trajectory(encoding, num_frames)))
    return prelude


def build_tools(
    probes: Sequence[str] = ("vo", "flow", "tcogmap"),
    num_frames: int = 10,
    encoding: Encoding | None = None,
    grouped: bool = False,
    max_side: int | None = None,
    vo_thresholds: dict[str, float] | None = None,
    flow_thresholds: dict[str, float] | None = None,
) -> CompiledStateGraph:
    """`egodyn.tools`: the VLM also gets what deterministic probes measured from the same frames.

    The measurements are injected into the prompt (`egodyn.tool_calls` offers them as functions instead).
    With `encoding`, the trajectory text is added too (vision + dynamics + tools). `vo_thresholds` /
    `flow_thresholds` change the probes' mapping thresholds (`egodyn.vo` / `egodyn.flow`'s option names).
    """
    return vlm_graph(
        num_frames=num_frames,
        grouped=grouped,
        max_side=max_side,
        blocks=tool_blocks,
        prelude=probe_prelude(probes, encoding, num_frames, vo_thresholds, flow_thresholds),
    )
