"""VLM-free EgoDyn graphs: deterministic tools answer directly (the paper's geometric baselines, the oracle).

A tool that determines only some questions (flow and VO answer 6 of 14) marks the rest `skipped`, which
leaves them out of scoring exactly as upstream's 6-question prediction files do.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from kinegraph.graphs.egodyn import load_arrays
from kinegraph.graphs.nodes import decode_frames, prediction, record_group_error, route_on_error
from kinegraph.graphs.state import GraphContext, GroupState
from kinegraph.types import Sample, Status

Answers = Mapping[str, str]


def answer_from(measurement: str) -> Callable[[GroupState], Any]:
    """Turn `measurements[measurement]["answers"]` into one prediction per sample."""

    async def answer(state: GroupState) -> dict[str, Any]:
        measured = state.get("measurements", {}).get(measurement, {})
        answers: Answers = measured.get("answers", {})
        trace = [{"node": f"measure_{measurement}", "output": measured.get("signals", {})}]
        results = []
        for s in state["samples"]:
            label = answers.get(s.question_id or "")
            if label is None:
                results.append(prediction(s, status=Status.skipped, trace=trace))
            else:
                results.append(prediction(s, raw=label, answer=label, trace=trace))
        return {"results": results}

    return answer


def oracle_answers(sample: Sample) -> dict[str, Any]:
    """The oracle on the clip's kinematics arrays, or on its stored features when the layout has no arrays."""
    from kinegraph.tools.oracle import label_clip, label_from_features

    arrays = load_arrays(sample)
    features = sample.context.get("features") or {}
    answers = label_clip(arrays, features=features) if arrays is not None else label_from_features(features)
    return {"answers": answers, "signals": {"source": "arrays" if arrays is not None else "features"}}


async def measure_oracle(state: GroupState) -> dict[str, Any]:
    sample = state["samples"][0]
    return {"measurements": {"oracle": await asyncio.to_thread(oracle_answers, sample)}}


def build_oracle() -> CompiledStateGraph:
    """`egodyn.oracle`: the labelling rules on the true kinematics, a sanity ceiling for every other graph."""
    graph = StateGraph(GroupState, context_schema=GraphContext)
    graph.add_node("measure_oracle", measure_oracle)
    graph.add_node("answer", answer_from("oracle"))
    graph.add_edge(START, "measure_oracle")
    graph.add_edge("measure_oracle", "answer")
    graph.add_edge("answer", END)
    return graph.compile()


build_oracle.needs_model = False  # type: ignore[attr-defined]


def frame_probe_graph(name: str, measure: Callable[..., Any], num_frames: int) -> CompiledStateGraph:
    """decode the clip's frames once -> run the probe (in a worker thread) -> answer what it determines."""

    async def run_probe(state: GroupState) -> dict[str, Any]:
        return {"measurements": {name: await asyncio.to_thread(measure, state["frames"])}}

    graph = StateGraph(GroupState, context_schema=GraphContext)
    graph.add_node("decode_frames", decode_frames(num_frames))
    graph.add_node(f"measure_{name}", run_probe)
    graph.add_node("answer", answer_from(name))
    graph.add_node("record_group_error", record_group_error)
    graph.add_edge(START, "decode_frames")
    graph.add_conditional_edges(
        "decode_frames", route_on_error(f"measure_{name}"), [f"measure_{name}", "record_group_error"]
    )
    graph.add_edge(f"measure_{name}", "answer")
    graph.add_edge("answer", END)
    graph.add_edge("record_group_error", END)
    return graph.compile()


def _rounded(values: Any, digits: int = 3) -> list[float]:
    return [round(float(v), digits) for v in values]


def vo_measurement(frames: Any) -> dict[str, Any]:
    """EgoDyn's KLT + essential-matrix VO on the clip's frames."""
    from kinegraph.tools.vo import visual_odometry

    result = visual_odometry(frames)
    signals = {
        "yaw_deg": _rounded(result.signals.yaw_deg),
        "disp_px": _rounded(result.signals.disp_px, 2),
        "method": list(result.signals.method),
    }
    return {"answers": result.answers, "signals": signals}


def flow_measurement(frames: Any) -> dict[str, Any]:
    """EgoDyn's Farneback flow heuristic on the clip's frames."""
    from kinegraph.tools.flow import flow_heuristic

    result = flow_heuristic(frames)
    signals = {k: _rounded(v) for k, v in result.signals._asdict().items()}
    return {"answers": result.answers, "signals": signals}


def gpu_flow_measurement(frames: Any) -> dict[str, Any]:
    """The torch Horn-Schunck probe (CUDA when present) with the flow heuristic's mapping."""
    from kinegraph.tools.gpu_flow import gpu_flow_probe

    result = gpu_flow_probe([frames])[0]
    signals = {k: _rounded(v) for k, v in result.signals._asdict().items()}
    return {"answers": result.answers, "signals": signals}


def build_vo(num_frames: int = 10) -> CompiledStateGraph:
    """`egodyn.vo`: the paper's visual-odometry baseline (answers 6 questions)."""
    return frame_probe_graph("vo", vo_measurement, num_frames)


def build_flow(num_frames: int = 10) -> CompiledStateGraph:
    """`egodyn.flow`: the paper's Farneback flow heuristic (answers 6 questions)."""
    return frame_probe_graph("flow", flow_measurement, num_frames)


def build_gpu_flow(num_frames: int = 10) -> CompiledStateGraph:
    """`egodyn.gpu_flow`: a dense Horn-Schunck flow probe in torch feeding the flow mapping."""
    return frame_probe_graph("gpu_flow", gpu_flow_measurement, num_frames)


PROBES: dict[str, Callable[[Any], dict[str, Any]]] = {
    "vo": vo_measurement,
    "flow": flow_measurement,
    "gpu_flow": gpu_flow_measurement,
}

for _builder in (build_vo, build_flow, build_gpu_flow):
    _builder.needs_model = False  # type: ignore[attr-defined]
build_gpu_flow.needs_gpu = True  # type: ignore[attr-defined]  # on Ray: a GPU per worker when the cluster has one
