"""Non-official: EgoDyn's frame probes as functions the model may call (`egodyn.tool_calls`).

The probes run once per clip before any question is asked (`measure_ego_motion`, as in `egodyn.tools`);
a call only reveals what was measured. Running them up front keeps the group state plain data (no futures
or locks to share across the clip's 14 branches), makes every question of a clip see the same numbers,
and costs one probe pass per clip, small next to one model request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.graph.state import CompiledStateGraph

from kinegraph.agents.protocol import ToolSpec
from kinegraph.graphs.egodyn.builders import Encoding, probe_prelude, trajectory_blocks, vlm_graph
from kinegraph.graphs.egodyn.prompts import describe_probe
from kinegraph.graphs.egodyn.tools import check_probes
from kinegraph.graphs.tool_calls import MAX_TOOL_ROUNDS, Tool, ToolOffer

#: The function name the model sees for each probe.
TOOL_NAMES = {
    "vo": "visual_odometry",
    "flow": "optical_flow",
    "gpu_flow": "dense_optical_flow",
    "tcogmap": "ego_motion_summary",
    "tcogmap_vo": "ego_motion_summary_from_pixels",
}
DESCRIPTIONS = {
    "vo": "Visual odometry of this clip (KLT feature tracks + essential matrix, between consecutive "
    "frames): per-pair yaw in degrees (+ = left), per-pair median feature displacement in pixels "
    "(a speed proxy, no metric scale), the total heading change, and what these imply for the "
    "turn, speed-trend, heading-change, lateral-acceleration, stop-and-go and brake-then-turn questions.",
    "flow": "Dense optical flow of this clip (Farneback, between consecutive frames): per-pair turn, "
    "expansion and magnitude signals in pixels, and what these imply for the turn, speed-trend, "
    "heading-change, lateral-acceleration, stop-and-go and brake-then-turn questions.",
    "gpu_flow": "Dense optical flow of this clip (Horn-Schunck, between consecutive frames): per-pair "
    "turn, expansion and magnitude signals in pixels, and what these imply for the turn, speed-trend, "
    "heading-change, lateral-acceleration, stop-and-go and brake-then-turn questions.",
    "tcogmap": "TCogMap's one-line summary of the ego vehicle's motion in this clip (stopped, turning "
    "left or right, changing lane, starting, stopping, or moving forward at a constant speed), computed "
    "from the ego trajectory measured from the frames in metres and seconds (ground-plane visual "
    "odometry), with the start and end speed, net heading change, distance and peak kinematics it read.",
    "tcogmap_vo": "A one-line TCogMap-style summary of the ego vehicle's motion in this clip (stopped, "
    "turning left or right, starting, stopping, or moving forward at a constant speed), derived from "
    "visual odometry in pixels (no metric scale), with the net heading change and image motion it read.",
}
NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


def tool_spec(probe: str) -> ToolSpec:
    """The function a probe is offered as (no arguments: the clip is the one being asked about)."""
    return ToolSpec(name=TOOL_NAMES[probe], description=DESCRIPTIONS[probe], parameters=NO_ARGUMENTS)


def probe_tools(probes: Sequence[str], measured: Mapping[str, dict[str, Any]]) -> dict[str, Tool]:
    """The tool table of one clip: each probe's spec and a function revealing its measurement as text."""

    def reveal(probe: str) -> Any:
        return lambda arguments: describe_probe(probe, measured[probe])

    return {TOOL_NAMES[p]: (tool_spec(p), reveal(p)) for p in probes}


def probe_offer(probes: Sequence[str], max_rounds: int = MAX_TOOL_ROUNDS) -> ToolOffer:
    """What `egodyn.tool_calls` offers: the probes measured in `measurements["probes"]`."""
    check_probes(probes)
    if max_rounds < 1:
        raise ValueError(f"max_tool_rounds must be at least 1, got {max_rounds}")
    return ToolOffer(
        table=lambda measurements: probe_tools(probes, measurements["probes"]), max_rounds=max_rounds
    )


def build_tool_calls(
    probes: Sequence[str] = ("vo", "flow", "tcogmap"),
    num_frames: int = 10,
    encoding: Encoding | None = None,
    grouped: bool = False,
    max_side: int | None = None,
    max_tool_rounds: int = MAX_TOOL_ROUNDS,
    vo_thresholds: dict[str, float] | None = None,
    flow_thresholds: dict[str, float] | None = None,
) -> CompiledStateGraph:
    """`egodyn.tool_calls`: upstream's prompt, with the probes of `egodyn.tools` offered as functions the
    model may call, up to `max_tool_rounds` rounds (with `encoding`, the trajectory text is added too);
    `vo_thresholds` / `flow_thresholds` as on `egodyn.tools`."""
    return vlm_graph(
        num_frames=num_frames,
        grouped=grouped,
        max_side=max_side,
        blocks=trajectory_blocks,
        prelude=probe_prelude(probes, encoding, num_frames, vo_thresholds, flow_thresholds),
        tools=probe_offer(tuple(probes), max_tool_rounds),
    )
