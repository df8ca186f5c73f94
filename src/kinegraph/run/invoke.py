"""One graph invocation over one group of samples: what the local runner, the Ray worker and serve share.

Every sample of the group comes back as a Prediction: a crash of the graph, or a sample the graph left
without a result, becomes a `graph_error` prediction naming what happened, never a lost answer; a node
that raises a DataError (the group's data cannot be used, e.g. frames no probe can measure) makes
`input_error` predictions instead.

Usage is counted per model call (`agents/usage_meter.py`), whatever the graph writes down: calls the
predictions leave out (a user's builder that keeps one of two responses, a graph that raised after
calling) are added to the group's first prediction, with a trace entry saying so.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from kinegraph.agents.deferred_images import release
from kinegraph.agents.managed import ManagedBackend
from kinegraph.agents.usage_meter import UsageMeter, metering
from kinegraph.errors import DataError
from kinegraph.graphs.nodes import prediction
from kinegraph.graphs.state import GraphContext
from kinegraph.types import DEFAULT_ROLE, Prediction, Sample, Status, Usage

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
    meter = UsageMeter()
    try:
        with metering() as meter:
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
    return with_unreported_usage(out, meter, context)


_USAGE_FIELDS = tuple(Usage.model_fields)


def _managed(backend: Any) -> Any:
    """The `ManagedBackend` under a backend's wrappers (a budget), or None for one made elsewhere."""
    while backend is not None and not isinstance(backend, ManagedBackend):
        backend = getattr(backend, "inner", None)
    return backend


def with_unreported_usage(
    out: list[Prediction], meter: UsageMeter, context: GraphContext
) -> list[Prediction]:
    """`out` with the usage its calls had beyond what its predictions report, per backend, added to the
    first prediction (under the role that backend answers); a graph that reports more than it called is
    logged, never corrected."""
    role_of = {id(_managed(context.backend)): DEFAULT_ROLE}
    role_of.update({id(_managed(b)): role for role, b in context.roles.items()})
    reported: dict[int, Usage] = {}
    for p in out:
        for role, usage in (p.usage_by_role or {DEFAULT_ROLE: p.usage}).items():
            key = id(_managed(context.roles.get(role, context.backend)))
            reported[key] = reported.get(key, Usage()) + usage
    if not out:
        return out
    first = out[0]
    usage, by_role, missed = first.usage, dict(first.usage_by_role), {}
    for key, counted in meter.by_backend.items():
        told = reported.get(key, Usage())
        gap = {f: getattr(counted, f) - getattr(told, f) for f in _USAGE_FIELDS}
        if any(v < -1e-9 for v in gap.values()):
            log.warning("group %s reports more usage than its calls made: %s", first.group, gap)
        missing = Usage(**{f: max(v, 0) if f == "cost_usd" else max(int(v), 0) for f, v in gap.items()})
        if not any(getattr(missing, f) > 1e-12 for f in _USAGE_FIELDS):
            continue
        role = role_of.get(key, DEFAULT_ROLE)
        if by_role or role != DEFAULT_ROLE:
            by_role = by_role or {DEFAULT_ROLE: first.usage}
            by_role[role] = by_role.get(role, Usage()) + missing
        usage = usage + missing
        missed[role] = missing.model_dump()
    if not missed:
        return out
    note = {"node": "usage_meter", "unreported_usage": missed}
    out[0] = first.model_copy(
        update={"usage": usage, "usage_by_role": by_role, "trace": [*first.trace, note]}
    )
    return out
