"""VLM-free EgoDyn graphs: deterministic tools answer directly (the paper's geometric baselines, the oracle).

A tool that determines only some questions (flow and VO answer 6 of 14) marks the rest `skipped`, which
leaves them out of scoring exactly as upstream's 6-question prediction files do.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from kinegraph.benchmarks.egodyn.loader import load_arrays
from kinegraph.benchmarks.egodyn.measured_clip import tcogmap_probe
from kinegraph.graphs.nodes import decode_frames, prediction, record_group_error, route_on_error
from kinegraph.graphs.state import GraphContext, GroupState
from kinegraph.tools.dense_flow import DenseFlowSpec, FlowMethod
from kinegraph.tools.probe_results import (
    flow_measurement,
    flow_result,
    gpu_flow_measurement,
    tcogmap_from_signals,
    tcogmap_vo_measurement,
    vo_from_signals,
    vo_measurement,
)
from kinegraph.types import Sample, Status

if TYPE_CHECKING:
    from kinegraph.tools.flow import FlowThresholds
    from kinegraph.tools.vo import VOSignals, VOThresholds

Answers = Mapping[str, str]


def answer_from(measurement: str) -> Callable[[GroupState], Any]:
    """Turn `measurements[measurement]["answers"]` into one prediction per sample."""

    async def answer(state: GroupState) -> dict[str, Any]:
        measured = state.get("measurements", {}).get(measurement, {})
        answers: Answers = measured.get("answers", {})
        trace = [{"node": f"measure_{measurement}", "output": measured.get("signals", {})}]
        results = []
        warnings = list(measured.get("warnings", []))
        for s in state["samples"]:
            label = answers.get(s.question_id or "")
            frames = state.get("frame_record")
            if label is None:
                results.append(
                    prediction(s, status=Status.skipped, trace=trace, frames=frames, warnings=warnings)
                )
            else:
                results.append(
                    prediction(s, raw=label, answer=label, trace=trace, frames=frames, warnings=warnings)
                )
        return {"results": results}

    return answer


def oracle_answers(sample: Sample) -> dict[str, Any]:
    """The oracle on the clip's kinematics arrays, or on its stored features when the layout has no arrays."""
    from kinegraph.benchmarks.egodyn.questions import load_question_bank
    from kinegraph.tools.oracle import label_clip, label_from_features

    arrays = load_arrays(sample)
    features = sample.context.get("features") or {}
    bank = load_question_bank()
    answers = (
        label_clip(arrays, bank, features=features)
        if arrays is not None
        else label_from_features(features, bank)
    )
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


def threaded_probe(name: str, measure: Callable[[Any], dict[str, Any]]) -> Callable[..., Any]:
    """Node: a CPU probe on the decoded frames, in a worker thread."""

    async def run_probe(state: GroupState) -> dict[str, Any]:
        return {"measurements": {name: await asyncio.to_thread(measure, state["frames"])}}

    return run_probe


def frame_probe_graph(name: str, probe: Callable[..., Any], num_frames: int) -> CompiledStateGraph:
    """decode the clip's frames once -> run the probe node -> answer what it determines."""
    graph = StateGraph(GroupState, context_schema=GraphContext)
    graph.add_node("decode_frames", decode_frames(num_frames))
    graph.add_node(f"measure_{name}", probe)
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


def vo_thresholds(overrides: Mapping[str, float] | None = None) -> VOThresholds:
    """The paper's VO thresholds with `overrides` (field: value); a ValueError names an unknown field."""
    from kinegraph.tools.vo import VOThresholds

    return _thresholds(VOThresholds, overrides, "VO")


def flow_thresholds(overrides: Mapping[str, float] | None = None) -> FlowThresholds:
    """The paper's flow deadzones with `overrides` (field: value); a ValueError names an unknown field."""
    from kinegraph.tools.flow import FlowThresholds

    return _thresholds(FlowThresholds, overrides, "flow")


def _thresholds(cls: Any, overrides: Mapping[str, float] | None, what: str) -> Any:
    fields = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(overrides or {}) - set(fields))
    if unknown:
        raise ValueError(f"no {what} threshold {unknown[0]!r} (thresholds: {', '.join(fields)})")
    return cls(**(overrides or {}))


def batched_flow_probe(spec: DenseFlowSpec, thresholds: FlowThresholds | None = None) -> Callable[..., Any]:
    """Node: dense flow of the clip through the run's tool-batching stage (pooled with other clips)."""

    async def measure(state: GroupState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        signals = await runtime.context.tools.flow_signals(state["frames"], spec)
        out = flow_result(signals, thresholds)
        out["signals"]["method"] = spec.method
        return {"measurements": {"gpu_flow": out}}

    return measure


# The builders' threshold defaults are the paper's (tools.vo.VOThresholds, tools.flow.FlowThresholds,
# spec/egodyn.md 3.1-3.2), literal here so listing the graphs imports no OpenCV; a test holds them equal.
def build_vo(
    num_frames: int = 10,
    yaw_deadzone_deg: float = 0.03,
    yaw_peak_deg: float = 0.15,
    stopped_px: float = 0.5,
    moving_px: float = 2.0,
    trend_px_per_pair: float = 0.3,
    heading_deg: float = 1.5,
    lateral_deg: float = 0.8,
    brake_drop_fraction: float = 0.4,
) -> CompiledStateGraph:
    """`egodyn.vo`: the paper's visual-odometry baseline (answers 6 questions); its Eqs. 14-19 thresholds
    are options (the paper's by default; others are a non-official ablation)."""
    thresholds = vo_thresholds(
        {
            "yaw_deadzone_deg": yaw_deadzone_deg,
            "yaw_peak_deg": yaw_peak_deg,
            "stopped_px": stopped_px,
            "moving_px": moving_px,
            "trend_px_per_pair": trend_px_per_pair,
            "heading_deg": heading_deg,
            "lateral_deg": lateral_deg,
            "brake_drop_fraction": brake_drop_fraction,
        }
    )
    return frame_probe_graph(
        "vo", threaded_probe("vo", partial(vo_measurement, thresholds=thresholds)), num_frames
    )


def build_flow(
    num_frames: int = 10,
    turn_px: float = 0.05,
    expansion_px: float = 0.2,
    lateral_px: float = 1.5,
    heading_px: float = 3.0,
    stopped_px: float = 0.3,
    moving_px: float = 1.5,
) -> CompiledStateGraph:
    """`egodyn.flow`: the paper's Farneback flow heuristic (answers 6 questions); its Eqs. 8-13 deadzones
    are options (the paper's by default; others are a non-official ablation)."""
    thresholds = flow_thresholds(
        {
            "turn_px": turn_px,
            "expansion_px": expansion_px,
            "lateral_px": lateral_px,
            "heading_px": heading_px,
            "stopped_px": stopped_px,
            "moving_px": moving_px,
        }
    )
    probe = threaded_probe("flow", partial(flow_measurement, thresholds=thresholds))
    return frame_probe_graph("flow", probe, num_frames)


def build_gpu_flow(
    num_frames: int = 10,
    method: FlowMethod = "horn_schunck",
    weights: str | None = None,
    batch_pairs: int | None = None,
    raft_preprocessing: Literal["upstream", "centred_edge"] = "upstream",
    thresholds: dict[str, float] | None = None,
) -> CompiledStateGraph:
    """`egodyn.gpu_flow`: dense flow in torch (Horn-Schunck, or RAFT from the user's torchvision
    checkpoint `weights`) feeding the flow mapping; clips of concurrent groups share batched calls of
    up to `batch_pairs` frame pairs (default 256 on CUDA, 8 on CPU). `raft_preprocessing`: EgoDyn's
    baseline input preparation (`upstream`, the RAFT row's) or the non-official `centred_edge`.
    `thresholds`: the flow deadzones to change (`egodyn.flow`'s names; the RAFT row keeps the paper's)."""
    spec = DenseFlowSpec(
        method=method, weights=weights, batch_pairs=batch_pairs, raft_preprocessing=raft_preprocessing
    )
    return frame_probe_graph("gpu_flow", batched_flow_probe(spec, flow_thresholds(thresholds)), num_frames)


PROBES: dict[str, Callable[[Any], dict[str, Any]]] = {
    "vo": vo_measurement,
    "flow": flow_measurement,
    "gpu_flow": gpu_flow_measurement,
    "tcogmap_vo": tcogmap_vo_measurement,
}
#: Probes that read the whole clip (every frame, its timestamps and camera), not the decoded frames.
CLIP_PROBES: dict[str, Callable[[Sample], dict[str, Any]]] = {"tcogmap": tcogmap_probe}
#: Probes that read the VO signals: run together, they share one VO pass over the frames.
FROM_VO_SIGNALS: dict[str, Callable[[VOSignals], dict[str, Any]]] = {
    "vo": vo_from_signals,
    "tcogmap_vo": tcogmap_from_signals,
}


def check_probes(probes: Sequence[str]) -> None:
    """ValueError naming the known probes when one is unknown or none is named (checked at build time)."""
    unknown = [p for p in probes if p not in PROBES and p not in CLIP_PROBES]
    if unknown or not probes:
        known = sorted({*PROBES, *CLIP_PROBES})
        raise ValueError(f"probes must name at least one of {known}, got {list(probes)}")


def measure_probes(
    names: Sequence[str],
    frames: Any,
    sample: Sample | None = None,
    vo: VOThresholds | None = None,
    flow: FlowThresholds | None = None,
) -> dict[str, dict[str, Any]]:
    """Run the named probes on one clip's frames (T, H, W, 3); VO runs once for all probes that read it.
    Clip probes (`CLIP_PROBES`) measure `sample`'s whole clip and need it. `vo` / `flow`: the mapping's
    thresholds (the paper's when None)."""
    unknown = [n for n in names if n not in PROBES and n not in CLIP_PROBES]
    if unknown:
        raise ValueError(f"unknown probe(s) {unknown}; known: {sorted({*PROBES, *CLIP_PROBES})}")
    if sample is None and any(n in CLIP_PROBES for n in names):
        raise ValueError(
            f"probe(s) {[n for n in names if n in CLIP_PROBES]} measure the whole clip: pass its sample"
        )
    shared = None
    if sum(n in FROM_VO_SIGNALS for n in names) > 1:
        from kinegraph.tools.vo import vo_signals

        shared = vo_signals(frames)
    out = {}
    for n in names:
        if n in CLIP_PROBES:
            out[n] = CLIP_PROBES[n](sample)  # type: ignore[arg-type]
        elif n == "vo":
            out[n] = vo_from_signals(shared, vo) if shared is not None else vo_measurement(frames, vo)
        elif n in ("flow", "gpu_flow"):
            out[n] = PROBES[n](frames, flow)  # type: ignore[call-arg]
        elif shared is not None and n in FROM_VO_SIGNALS:
            out[n] = FROM_VO_SIGNALS[n](shared)
        else:
            out[n] = PROBES[n](frames)
    return out
