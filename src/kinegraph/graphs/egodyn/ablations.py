"""EgoDyn-Bench's vision ablations (paper Table 3, rows 2-4): no frames, frame I_0 only, shuffled frames.

Each is `egodyn.vision` with one change to what the model sees; the prompt (upstream's `build_prompt`,
whose first line follows the number of images sent) and the official parser are the same.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from kinegraph.graphs.egodyn.builders import answer_clip, answer_question, no_blocks, vlm_graph
from kinegraph.graphs.nodes import (
    Node,
    answer_each,
    decode_frames,
    encode_frames,
    record_group_error,
    route_on_error,
)
from kinegraph.graphs.shapes import question_graph
from kinegraph.graphs.state import GraphContext, GroupState, QuestionState
from kinegraph.types import FrameRecord, Media

#: upstream's `--shuffle_seed` default
SHUFFLE_SEED = 42


def build_blind(grouped: bool = False) -> CompiledStateGraph:
    """`egodyn.blind`: the question alone, no frames and no trajectory (Table 3 row 2, O = {}; upstream
    `--no_images --trajectory_mode none`)."""
    return vlm_graph(num_frames=0, grouped=grouped, max_side=None, blocks=no_blocks, frames=False)


def first_frame_media(media: Media) -> Media:
    """`media` narrowed to its first frame I_0: index 0 of the clip, or the first of the data's indices."""
    if media.kind == "none":
        return media
    first = media.frame_indices[0] if media.frame_indices else 0
    # timestamps are aligned with the data's indices, or with every frame: either way I_0's comes first
    times = media.timestamps_s[:1] if media.timestamps_s else None
    return media.model_copy(update={"frame_indices": [first], "timestamps_s": times})


def decode_first_frame() -> Node:
    """Decode only I_0 of the group's clip (`decode_frames` on the clip narrowed to its first frame)."""
    decode = decode_frames(None)

    async def first(state: GroupState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        head, *rest = state["samples"]
        narrowed = head.model_copy(update={"media": first_frame_media(head.media)})
        return await decode({**state, "samples": [narrowed, *rest]}, runtime)

    return first


def build_static_first(grouped: bool = False, max_side: int | None = None) -> CompiledStateGraph:
    """`egodyn.static_first`: the clip's first frame I_0 alone (Table 3 row 3, O = {I_0}).

    Upstream's `--num_frames 1` would send the middle frame instead (`egodyn.vision -O num_frames=1` keeps
    that); the paper's footnote names I_0, so this graph decodes frame 0 and sends it once, with upstream's
    one-image prompt line.
    """
    answer_name = "answer_clip" if grouped else "answer_question"
    graph = StateGraph(GroupState, context_schema=GraphContext)
    graph.add_node("decode_first_frame", decode_first_frame())
    graph.add_node("encode_frames", encode_frames(max_side))
    graph.add_node("record_group_error", record_group_error)
    answer = answer_clip(no_blocks) if grouped else answer_each(answer_question(no_blocks))
    graph.add_node(answer_name, answer)
    graph.add_edge(START, "decode_first_frame")
    graph.add_conditional_edges(
        "decode_first_frame", route_on_error("encode_frames"), ["encode_frames", "record_group_error"]
    )
    graph.add_edge("encode_frames", answer_name)
    graph.add_edge(answer_name, END)
    graph.add_edge("record_group_error", END)
    return graph.compile()


def frame_order(seed: int, clip_id: str, n_frames: int) -> list[int]:
    """The clip's shuffled positions: `random.Random.shuffle` as upstream, seeded by (seed, clip id)."""
    order = list(range(n_frames))
    random.Random(f"{seed}:{clip_id}").shuffle(order)
    return order


def shuffle_frames(seed: int) -> Node:
    """Put the clip's encoded frames (and their record) in the clip's seeded random order.

    Upstream draws every permutation from one `random.Random(seed)` in the order it reaches the requests,
    which a concurrent, resumable run cannot replay; here each clip's order depends on the seed and the
    clip id only, so it is the same for all the clip's questions, on resume and on Ray.
    """

    async def shuffle(state: GroupState) -> dict[str, Any]:
        images, record = state["images"], state["frame_record"]
        order = frame_order(seed, state["samples"][0].group, len(images))
        shuffled = FrameRecord(
            indices=[record.indices[i] for i in order],
            timestamps_s=[record.timestamps_s[i] for i in order] if record.timestamps_s else [],
            source=record.source,
        )
        step = {"node": "shuffle_frames", "seed": seed, "order": order, "indices": shuffled.indices}
        return {
            "images": [images[i] for i in order],
            "frame_record": shuffled,
            "measurements": {"shuffle": step},
        }

    return shuffle


def traced_shuffle(answer: Callable[..., Any]) -> Callable[..., Any]:
    """`answer`, with the shuffle step (seed, order) first in the trace of every prediction it returns."""

    async def traced(state: QuestionState | GroupState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        out = await answer(state, runtime)
        step = state.get("measurements", {}).get("shuffle")
        if step is None:
            return out
        return {"results": [p.model_copy(update={"trace": [step, *p.trace]}) for p in out["results"]]}

    return traced


def build_shuffled(
    num_frames: int = 10, seed: int = SHUFFLE_SEED, grouped: bool = False, max_side: int | None = None
) -> CompiledStateGraph:
    """`egodyn.shuffled`: the clip's `num_frames` frames in a seeded random order (Table 3 row 4,
    upstream `--shuffle_frames --shuffle_seed 42`); the prompt still says "evenly spaced moments"."""
    answer = answer_clip(no_blocks) if grouped else answer_question(no_blocks)
    return question_graph(
        traced_shuffle(answer),
        answer_name="answer_clip" if grouped else "answer_question",
        num_frames=num_frames,
        max_side=max_side,
        prelude=[("shuffle_frames", shuffle_frames(seed))],
        grouped=grouped,
    )
