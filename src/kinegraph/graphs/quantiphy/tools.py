"""QuantiPhy tool graphs: measure pixels, convert with the prior, compute the answer.

- `quantiphy.oracle_tracks`: exact pixel tracks from a synthetic world's truth sidecar -> calculator
  (the calculator's ceiling).
- `quantiphy.tracker`: the tracker, seeded with the sidecar's frame-0 boxes -> calculator (VLM-free).
- `quantiphy.tools`: the VLM names and boxes the prior's object and the target in the first frame, the
  tracker measures, the calculator computes, the answer is formatted "[value] [unit]"; validity retry
  as upstream.
- `quantiphy.hybrid`: the tool answer when its measurement passes checks, else the VLM's zero-shot answer.

Every one takes `differencing` (how the calculator turns positions into velocity and acceleration,
`tools/finite_diff.py`) and `fit_window` (frames of the `quadratic_fit`). The default is the paper's own
formula, forward differences (Sec 3.1); `centred` (App D.2/D.3), `backward`, `speed_diff` (the Blender
ground truth, App D.1.3) and `quadratic_fit` (non-official, for noisy tracker output) are opt-in, and
the scheme is in every prediction's trace.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import time
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from kinegraph.agents.protocol import GenerateRequest, Message, TextPart
from kinegraph.errors import DataError
from kinegraph.evaluators.quantiphy import parse_number
from kinegraph.graphs.nodes import (
    ask,
    prediction,
)
from kinegraph.graphs.quantiphy import prompts
from kinegraph.graphs.quantiphy.builders import ask_number, request_metadata
from kinegraph.graphs.shapes import question_graph
from kinegraph.graphs.state import GraphContext, GroupState, QuestionState
from kinegraph.types import Prediction, Sample, Status, Usage

TRUTH_FILE = "quantiphy_truth.json"
Differencing = Literal["forward", "backward", "centred", "speed_diff", "quadratic_fit"]
PAPER_DIFFERENCING: Differencing = "forward"  # the paper's formula, Sec 3.1
BOX = re.compile(
    r"\[\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*\]"
)


@lru_cache(maxsize=8)
def _truth(source_dir: str) -> dict[str, Any]:
    path = Path(source_dir) / TRUTH_FILE
    if not path.is_file():
        raise DataError(
            "no truth sidecar: this graph needs a world written by `kinegraph synth quantiphy`", path=path
        )
    return json.loads(path.read_text())


def _sidecar(sample: Sample) -> tuple[dict[str, Any], dict[str, Any], tuple[int, int]]:
    truth = _truth(sample.context.get("source_dir", "."))
    return (
        truth["videos"][sample.group],
        truth["rows"][str(sample.question_id)],
        tuple(truth["image_size_px"]),
    )


def _row(sample: Sample) -> dict[str, Any]:
    """The CSV row fields the calculator reads."""
    return {
        "ground_truth_prior": sample.context.get("ground_truth_prior"),
        "question": sample.question,
        "fps": sample.context.get("fps"),
        "video_type": sample.metadata.get("video_type"),
        "depth_info": sample.context.get("depth_info") or "",
    }


def calculate(
    sample: Sample,
    tracks: dict[str, Any],
    grounding: dict[str, Any],
    image_size: tuple[int, int],
    *,
    differencing: Differencing,
    fit_window: int,
) -> tuple[float, str, list[str]]:
    """Run the 2D/3D calculator: (value, answer text, notes); ValueError when it cannot answer."""
    from kinegraph.tools.quantiphy_solve import solve_row

    answer = solve_row(_row(sample), grounding, tracks, image_size, differencing, fit_window)
    return parse_number(answer.text()), answer.text(), list(answer.notes)


def _finish(
    sample: Sample, value: float, text: str, trace: list[dict], start: float, **fields: Any
) -> Prediction:
    if math.isnan(value):
        return prediction(
            sample,
            raw=text,
            status=Status.parse_failure,
            trace=trace,
            latency_s=time.perf_counter() - start,
            **fields,
        )
    return prediction(
        sample, raw=text, answer=value, trace=trace, latency_s=time.perf_counter() - start, **fields
    )


def measure_from_sidecar(use_tracker: bool, differencing: Differencing, fit_window: int) -> Any:
    """Answer every question of the video from sidecar grounding and exact or tracked pixels."""

    async def measure(state: GroupState) -> dict[str, Any]:
        from kinegraph.tools.quantiphy_solve import exact_tracks, tracked_tracks

        results = []
        for sample in state["samples"]:
            start = time.perf_counter()
            try:
                video, grounding, size = _sidecar(sample)
                if use_tracker:
                    tracks = await asyncio.to_thread(
                        tracked_tracks, Path(sample.media.video_path or ""), video
                    )
                else:
                    tracks = exact_tracks(video)
                value, text, notes = await asyncio.to_thread(
                    calculate,
                    sample,
                    tracks,
                    grounding,
                    size,
                    differencing=differencing,
                    fit_window=fit_window,
                )
            except (ValueError, KeyError) as exc:  # DataError is a ValueError
                results.append(prediction(sample, status=Status.input_error, error=str(exc)))
                continue
            trace = [
                {
                    "node": "measure",
                    "grounding": grounding,
                    "answer": text,
                    "notes": notes,
                    "differencing": differencing,
                }
            ]
            results.append(_finish(sample, value, text, trace, start))
        return {"results": results}

    return measure


def _single_node_graph(node: Any) -> CompiledStateGraph:
    graph = StateGraph(GroupState, context_schema=GraphContext)
    graph.add_node("measure", node)
    graph.add_edge(START, "measure")
    graph.add_edge("measure", END)
    return graph.compile()


def build_oracle_tracks(
    differencing: Differencing = PAPER_DIFFERENCING, fit_window: int = 9
) -> CompiledStateGraph:
    """`quantiphy.oracle_tracks`: exact tracks from the synthetic world's sidecar -> calculator."""
    return _single_node_graph(measure_from_sidecar(False, differencing, fit_window))


def build_tracker(
    differencing: Differencing = PAPER_DIFFERENCING, fit_window: int = 15
) -> CompiledStateGraph:
    """`quantiphy.tracker`: the tracker seeded by the sidecar's frame-0 boxes -> calculator."""
    return _single_node_graph(measure_from_sidecar(True, differencing, fit_window))


def grounding_prompt(sample: Sample, width: int, height: int) -> tuple[str, list[str]]:
    """Ask for one box per object the calculator needs: the prior's object and the question's targets."""
    from kinegraph.tools.quantiphy_text import parse_prior, parse_question

    prior, question = (
        parse_prior(str(sample.context.get("ground_truth_prior"))),
        parse_question(sample.question),
    )
    names = list(dict.fromkeys([prior.object, *question.objects]))  # the prior's object may be the target
    lines = "\n".join(f"{i}. {name}" for i, name in enumerate(names, 1))
    text = (
        f"The image is the first frame of a video, {width}x{height} pixels. For each object below, give its "
        "bounding box in pixels as [x1, y1, x2, y2], one per line, numbered, nothing else.\n" + lines
    )
    return text, names


def parse_boxes(text: str, n: int) -> list[tuple[float, float, float, float]] | None:
    boxes = [tuple(float(v) for v in m) for m in BOX.findall(text)]
    return boxes[:n] if len(boxes) >= n else None  # type: ignore[return-value]


async def answer_with_tools(
    state: QuestionState,
    runtime: Runtime[GraphContext],
    fallback: bool,
    differencing: Differencing = PAPER_DIFFERENCING,
    fit_window: int = 15,
) -> dict[str, Any]:
    """The VLM grounds the objects; tracker + calculator answer. With `fallback`, a failed measurement
    falls back to the official zero-shot answer (the hybrid graph)."""
    from kinegraph.tools.quantiphy_text import parse_question
    from kinegraph.tools.tracker import track_objects

    sample, start = state["sample"], time.perf_counter()
    frames: np.ndarray = state["measurements"]["frames"]
    height, width = frames.shape[1:3]
    trace: list[dict[str, Any]] = []
    usage = Usage()
    reason = "grounding failed"
    try:
        text, names = grounding_prompt(sample, width, height)
        content = [state["images"][0], TextPart(text=text)]
        request = GenerateRequest(
            messages=[Message(role="user", content=content)],
            metadata={**request_metadata(sample), "step": "ground_objects"},
        )
        response, error = await ask(runtime, request)
        if response is not None:
            usage = usage + response.usage
            boxes = parse_boxes(response.text, len(names))
            trace.append({"node": "ground_objects", "prompt": text, "raw": response.text, "boxes": boxes})
            if boxes is not None:
                tracks = await asyncio.to_thread(track_objects, frames, boxes)
                targets = list(parse_question(sample.question).objects)
                grounding = {"prior_object": names[0], "target_objects": targets}
                value, answer_text, notes = await asyncio.to_thread(
                    calculate,
                    sample,
                    dict(zip(names, tracks, strict=True)),
                    grounding,
                    (width, height),
                    differencing=differencing,
                    fit_window=fit_window,
                )
                step = {
                    "node": "calculate",
                    "answer": answer_text,
                    "notes": notes,
                    "differencing": differencing,
                }
                trace.append(step)
                if not math.isnan(value) and value > 0:
                    return {"results": [_finish(sample, value, answer_text, trace, start, usage=usage)]}
        elif not fallback:
            return {"results": [prediction(sample, trace=trace, usage=usage, **error)]}
    except ValueError as exc:
        reason = str(exc)
        trace.append({"node": "calculate", "error": reason})
    if not fallback:
        return {
            "results": [
                prediction(
                    sample,
                    status=Status.parse_failure,
                    error=reason,
                    trace=trace,
                    usage=usage,
                    latency_s=time.perf_counter() - start,
                )
            ]
        }
    text = prompts.zero_shot_text(sample, sample.context.get("ground_truth_prior"))
    value, raw, more, error = await ask_number(runtime, text, state["images"], sample)
    trace.append({"node": "fallback_zero_shot", "prompt": text, "raw": raw})
    if error:
        return {"results": [prediction(sample, trace=trace, usage=usage + more, **error)]}
    return {"results": [_finish(sample, value, raw or "", trace, start, usage=usage + more)]}


def _vlm_tool_graph(
    fallback: bool, max_frames: int | None, max_side: int | None, differencing: Differencing, fit_window: int
) -> CompiledStateGraph:
    async def keep_frames(state: GroupState) -> dict[str, Any]:
        return {"measurements": {"frames": state["frames"]}}

    async def answer(state: QuestionState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        return await answer_with_tools(state, runtime, fallback, differencing, fit_window)

    return question_graph(
        answer,
        answer_name="answer",
        num_frames=max_frames,
        max_side=max_side,
        prelude=[("keep_frames", keep_frames)],
    )


def build_tools(
    max_frames: int | None = None,
    max_side: int | None = None,
    differencing: Differencing = PAPER_DIFFERENCING,
    fit_window: int = 15,
) -> CompiledStateGraph:
    """`quantiphy.tools`: VLM grounding -> tracker -> calculator -> "[value] [unit]"."""
    return _vlm_tool_graph(False, max_frames, max_side, differencing, fit_window)


def build_hybrid(
    max_frames: int | None = None,
    max_side: int | None = None,
    differencing: Differencing = PAPER_DIFFERENCING,
    fit_window: int = 15,
) -> CompiledStateGraph:
    """`quantiphy.hybrid`: the tool answer when the measurement succeeds, else the VLM's zero-shot answer."""
    return _vlm_tool_graph(True, max_frames, max_side, differencing, fit_window)
