"""The graph shape most benchmarks share, built once: frames -> prelude -> questions.

decode the group's frames once (with no prelude, a video sampled by count only when a request needs them)
-> encode them once (or, with `whole_video`, hand the clip's video file whole to a model that takes video
natively) -> optional prelude nodes (tools, text encodings) -> either every question as its own request
(concurrently, `answer_each`) or one grouped request; a decode failure (or a clip that cannot go whole)
records an input error for every sample of the group.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from kinegraph.graphs.nodes import (
    answer_each,
    decode_frames,
    encode_frames,
    record_group_error,
    route_on_error,
)
from kinegraph.graphs.state import GraphContext, GroupState

Node = Callable[..., Any]


def question_graph(
    answer: Node,
    *,
    answer_name: str = "answer_question",
    num_frames: int | None = None,
    max_side: int | None = None,
    prelude: Sequence[tuple[str, Node]] = (),
    frames: bool = True,
    grouped: bool = False,
    fps: float | None = None,
    whole_video: bool = False,
) -> CompiledStateGraph:
    """Compile the shape; `answer` is a node on one QuestionState, or on the GroupState if `grouped`.

    Frames are sampled `fps` a second, else `num_frames` evenly spaced, else all of them.
    """
    graph = StateGraph(GroupState, context_schema=GraphContext)
    steps: list[str] = []
    if frames:
        # with no prelude, nothing but the model sees the frames: a video is decoded when a request needs
        # it (never when the cache answers), and decoded frames are dropped once encoded
        only_sent = not prelude
        decode = decode_frames(num_frames, fps, on_demand=only_sent, max_side=max_side)
        graph.add_node("decode_frames", decode)
        graph.add_node("encode_frames", encode_frames(max_side, whole_video, release=only_sent))
        graph.add_node("record_group_error", record_group_error)
        graph.add_edge("record_group_error", END)
        steps = ["decode_frames", "encode_frames"]
    for name, node in prelude:
        graph.add_node(name, node)
        steps.append(name)
    graph.add_node(answer_name, answer if grouped else answer_each(answer))
    if steps:
        graph.add_edge(START, steps[0])
    chain = [*steps, answer_name] if steps else [START, answer_name]
    for a, b in zip(chain, chain[1:], strict=False):
        if a == "decode_frames" or (a == "encode_frames" and whole_video):
            graph.add_conditional_edges(a, route_on_error(b), [b, "record_group_error"])
        else:
            graph.add_edge(a, b)
    graph.add_edge(answer_name, END)
    return graph.compile()
