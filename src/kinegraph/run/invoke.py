"""One graph invocation over one group of samples: what the local runner, the Ray worker and serve share.

Every sample of the group comes back as a Prediction: a crash of the graph, or a sample the graph left
without a result, becomes a `graph_error` prediction naming what happened, never a lost answer; a node
that raises a DataError (the group's data cannot be used, e.g. frames no probe can measure) makes
`input_error` predictions instead.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from kinegraph.agents.deferred_images import release
from kinegraph.errors import DataError
from kinegraph.graphs.nodes import prediction
from kinegraph.graphs.state import GraphContext
from kinegraph.types import Prediction, Sample, Status

log = logging.getLogger(__name__)


def group_samples(samples: Sequence[Sample]) -> list[list[Sample]]:
    """Samples grouped by clip/video, in order of first appearance."""
    groups: dict[str, list[Sample]] = {}
    for s in samples:
        groups.setdefault(s.group, []).append(s)
    return list(groups.values())


OnUpdate = Callable[[str, Any], Awaitable[None]]


async def _final_state(
    graph: Any, state: dict[str, Any], context: GraphContext, on_update: OnUpdate | None
) -> Any:
    """The graph's final state; with `on_update`, each node's update is passed on as it finishes."""
    if on_update is None:
        return await graph.ainvoke(state, context=context)
    final: Any = {}
    async for mode, chunk in graph.astream(state, context=context, stream_mode=["updates", "values"]):
        if mode == "values":
            final = chunk
            continue
        for node, update in (chunk or {}).items():
            await on_update(node, update)
    return final


async def invoke_group(
    graph: Any,
    samples: Sequence[Sample],
    context: GraphContext,
    *,
    stamp: Mapping[str, Any] | None = None,
    on_update: OnUpdate | None = None,
) -> list[Prediction]:
    """Invoke the compiled graph on one group; one prediction per sample, in the samples' order.

    Predictions without frames get the frames the group looked at (the graph's `frame_record`); `stamp`
    (e.g. the run's graph and model) is set on every prediction in the same copy. `on_update(node,
    update)` is awaited with each node's state update as it finishes (LangGraph's "updates" stream).
    """
    frames, status = None, Status.graph_error
    try:
        state = await _final_state(
            graph, {"samples": list(samples), "measurements": {}, "results": []}, context, on_update
        )
        release(state.get("images") or [])  # the clip's encodings go now, not at the next collection
        results = {p.sample_id: p for p in state.get("results", [])}
        frames = state.get("frame_record")
        error = "the graph returned no result for this sample"
    except Exception as exc:  # noqa: BLE001 - one bad group must not end a run or a server
        log.warning("graph raised on group %s", samples[0].group if samples else "?", exc_info=True)
        if isinstance(exc, DataError):
            results, error, status = {}, str(exc), Status.input_error
        else:
            results, error = {}, f"{type(exc).__name__}: {exc}"
    out = []
    for s in samples:
        p = results.get(s.id) or prediction(s, status=status, error=error)
        update = dict(stamp or {})
        if p.frames is None and frames is not None:
            update["frames"] = frames
        out.append(p.model_copy(update=update) if update else p)
    return out
