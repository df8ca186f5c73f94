"""One graph invocation over one group of samples: what the local runner, the Ray worker and serve share.

Every sample of the group comes back as a Prediction: a crash of the graph, or a sample the graph left
without a result, becomes a `graph_error` prediction naming what happened, never a lost answer.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from kinegraph.agents.deferred_images import release
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


async def invoke_group(
    graph: Any, samples: Sequence[Sample], context: GraphContext, *, stamp: Mapping[str, Any] | None = None
) -> list[Prediction]:
    """Invoke the compiled graph on one group; one prediction per sample, in the samples' order.

    Predictions without frames get the frames the group looked at (the graph's `frame_record`); `stamp`
    (e.g. the run's graph and model) is set on every prediction in the same copy.
    """
    frames = None
    try:
        state = await graph.ainvoke(
            {"samples": list(samples), "measurements": {}, "results": []}, context=context
        )
        release(state.get("images") or [])  # the clip's encodings go now, not at the next collection
        results = {p.sample_id: p for p in state.get("results", [])}
        frames = state.get("frame_record")
        error = "the graph returned no result for this sample"
    except Exception as exc:  # noqa: BLE001 - one bad group must not end a run or a server
        log.warning("graph raised on group %s", samples[0].group if samples else "?", exc_info=True)
        results, error = {}, f"{type(exc).__name__}: {exc}"
    out = []
    for s in samples:
        p = results.get(s.id) or prediction(s, status=Status.graph_error, error=error)
        update = dict(stamp or {})
        if p.frames is None and frames is not None:
            update["frames"] = frames
        out.append(p.model_copy(update=update) if update else p)
    return out
