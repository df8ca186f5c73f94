"""EgoDyn graphs on the *measured* ego trajectory: frames -> metric trajectory -> official kinematics.

`egodyn.measured` answers all 14 questions with the official oracle on the trajectory measured from the
clip's frames (no VLM, no ground-truth poses). `egodyn.measured_trajectory` gives a VLM that measured
trajectory in the chosen text encoding instead of the ground-truth one: what a car asking would have.
Every prediction's trace holds the trajectory, its per-pair confidence, the camera assumed and where it
came from; the frames used are the prediction's frame record.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from kinegraph.benchmarks.egodyn.measured_clip import decode_clip, measure_clip
from kinegraph.errors import DataError
from kinegraph.graphs.egodyn.builders import Encoding, trajectory_blocks, vlm_graph
from kinegraph.graphs.egodyn.tools import answer_from
from kinegraph.graphs.nodes import record_group_error, route_on_error
from kinegraph.graphs.state import GraphContext, GroupState
from kinegraph.tools.dense_flow import FLOW_METHODS, DenseFlowSpec

#: dense correspondences run at up to this width (RAFT's cost grows with the square of the pixels)
CORRESPONDENCE_WIDTH_PX = 640


async def _measure(
    state: GroupState,
    runtime: Runtime[GraphContext],
    options: dict,
    num_frames: int | None,
    flow: DenseFlowSpec | None = None,
    scene_camera: bool = False,
):
    """(measurement, None) or (None, one-line error) for the group's clip; with `flow`, the road
    correspondences come from that dense flow through the run's tool-batching stage; `scene_camera`:
    what the clip cannot show of its camera is taken from its scene-mates (`scene_clips`)."""
    sample = state["samples"][0]
    if sample.media.kind == "none":
        return None, "this sample has no frames or video to measure a trajectory from"
    runtime.context.stats.decodes += 1
    try:
        if flow is None:
            measured = await asyncio.to_thread(
                measure_clip, sample, options, num_frames, scene_camera=scene_camera
            )
            return measured, None
        decoded = await asyncio.to_thread(decode_clip, sample, num_frames)
        flows = await runtime.context.tools.flow_fields(decoded[0], flow)
        measured = await asyncio.to_thread(
            measure_clip, sample, options, num_frames, decoded, flows, scene_camera=scene_camera
        )
        return measured, None
    except (DataError, OSError, ValueError) as exc:
        return None, f"measuring the ego trajectory of {sample.group}: {exc}"


def correspondence_flow(correspondences: str, weights: str | None) -> DenseFlowSpec | None:
    """None for LK tracks, else the dense flow whose vectors serve as road correspondences."""
    if correspondences == "lk":
        if weights is not None:
            raise ValueError("weights apply to dense correspondences (correspondences=raft_small|raft_large)")
        return None
    if correspondences not in FLOW_METHODS:
        raise ValueError(
            f"correspondences must be 'lk' or one of {list(FLOW_METHODS)}, got {correspondences!r}"
        )
    return DenseFlowSpec(method=correspondences, weights=weights, max_width_px=CORRESPONDENCE_WIDTH_PX)  # type: ignore[arg-type]


def measure_trajectory(
    camera_options: dict[str, float | None],
    num_frames: int | None,
    flow: DenseFlowSpec | None = None,
    scene_camera: bool = False,
) -> Any:
    """Node: the clip's measured trajectory and its oracle answers, or the group's input error."""

    async def measure(state: GroupState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        out, error = await _measure(state, runtime, camera_options, num_frames, flow, scene_camera)
        if out is None:
            return {"error": error}
        return {"frame_record": out["record"], "measurements": {"measured": out["measured"]}}

    return measure


def encode_measured_trajectory(
    encoding: Encoding, num_points: int, camera_options: dict[str, float | None], scene_camera: bool = False
) -> Any:
    """Node: the measured trajectory as upstream's text encoding; a failed measurement fails the group
    (never a silent fall-back to the ground-truth trajectory or to no trajectory)."""

    async def encode(state: GroupState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        from kinegraph.tools.encoders import encode_trajectory as encode_text

        out, error = await _measure(state, runtime, camera_options, None, scene_camera=scene_camera)
        if out is None:
            raise DataError(error)
        text = encode_text(encoding, out["kinematics"], num_points=num_points)
        return {"measurements": {"trajectory": text, "measured": out["measured"]}}

    return encode


def build_measured(
    focal_px: float | None = None,
    camera_height_m: float | None = None,
    pitch_deg: float | None = None,
    num_frames: int | None = None,
    correspondences: str = "lk",
    weights: str | None = None,
    scene_camera: bool = True,
) -> CompiledStateGraph:
    """`egodyn.measured`: frames -> measured metric trajectory -> official kinematics and oracle (14 answers).

    Camera from the data when present, else `focal_px` / `camera_height_m` / `pitch_deg`, else the
    documented CARLA defaults (tools/camera_model.py). `num_frames=None` uses every frame of the clip.
    `correspondences`: "lk" (tracked road corners, CPU) or a dense flow (`raft_small`, `raft_large` from
    the user's torchvision checkpoint `weights`, or `horn_schunck`) run on `--device`, batched across clips.
    `scene_camera` (default): a clip without a camera takes the lens and mount height it cannot show from
    the other windows of its recording (the index's `scene`), at about 1.5x the time; false keeps them
    assumed (docs/ego-trajectory.md: a lens far from the assumed 90 deg read every straight clip's speed
    0.4x or 1.7x without it).
    """
    options = {"focal_px": focal_px, "camera_height_m": camera_height_m, "pitch_deg": pitch_deg}
    flow = correspondence_flow(correspondences, weights)
    graph = StateGraph(GroupState, context_schema=GraphContext)
    graph.add_node("measure_trajectory", measure_trajectory(options, num_frames, flow, scene_camera))
    graph.add_node("answer", answer_from("measured"))
    graph.add_node("record_group_error", record_group_error)
    graph.add_edge(START, "measure_trajectory")
    graph.add_conditional_edges(
        "measure_trajectory", route_on_error("answer"), ["answer", "record_group_error"]
    )
    graph.add_edge("answer", END)
    graph.add_edge("record_group_error", END)
    return graph.compile()


def build_measured_trajectory(
    encoding: Encoding = "summary",
    num_frames: int = 10,
    grouped: bool = False,
    max_side: int | None = None,
    focal_px: float | None = None,
    camera_height_m: float | None = None,
    pitch_deg: float | None = None,
    scene_camera: bool = True,
) -> CompiledStateGraph:
    """`egodyn.measured_trajectory`: `egodyn.trajectory` with the trajectory measured from every frame of
    the clip instead of the ground truth; the VLM still sees `num_frames` evenly spaced frames
    (`scene_camera` as for `egodyn.measured`)."""
    options = {"focal_px": focal_px, "camera_height_m": camera_height_m, "pitch_deg": pitch_deg}
    prelude = [
        ("measure_trajectory", encode_measured_trajectory(encoding, num_frames, options, scene_camera))
    ]
    return vlm_graph(
        num_frames=num_frames, grouped=grouped, max_side=max_side, blocks=trajectory_blocks, prelude=prelude
    )
