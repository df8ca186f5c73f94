"""A new graph from shipped nodes in a few lines: VO measurements plus the timeseries trajectory, grouped.

Run it like any shipped graph:

    PYTHONPATH=examples kinegraph run egodyn --graph vo_plus_trajectory:build \\
        --data DATA --model vllm:MODEL --base-url URL --out runs/vo_traj
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from kinegraph.graphs.egodyn.builders import answer_clip, encode_trajectory, measure_ego_motion, tool_blocks
from kinegraph.graphs.nodes import decode_frames, encode_frames, record_group_error, route_on_error
from kinegraph.graphs.state import GraphContext, GroupState


def build(num_frames: int = 10):
    """decode -> encode -> VO -> trajectory text -> one grouped question list per clip."""
    graph = StateGraph(GroupState, context_schema=GraphContext)
    graph.add_node("decode_frames", decode_frames(num_frames))
    graph.add_node("encode_frames", encode_frames(max_side=448))
    graph.add_node("measure_ego_motion", measure_ego_motion(["vo"]))
    graph.add_node("encode_trajectory", encode_trajectory("timeseries", num_frames))
    graph.add_node("answer_clip", answer_clip(tool_blocks))
    graph.add_node("record_group_error", record_group_error)
    graph.add_edge(START, "decode_frames")
    graph.add_conditional_edges(
        "decode_frames", route_on_error("encode_frames"), ["encode_frames", "record_group_error"]
    )
    graph.add_edge("encode_frames", "measure_ego_motion")
    graph.add_edge("measure_ego_motion", "encode_trajectory")
    graph.add_edge("encode_trajectory", "answer_clip")
    graph.add_edge("answer_clip", END)
    graph.add_edge("record_group_error", END)
    return graph.compile()
