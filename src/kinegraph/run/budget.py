"""`kinegraph run --dry-run`: what a run would send and cost at most, before anything is sent.

The graph runs over every sample with a backend that sends nothing (`agents.estimate.EstimatingBackend`):
frames are decoded and encoded exactly as in the real run, so image and prompt sizes are the real ones.
Each model call chain is counted at its first request; a graph that calls tools may ask again after a
tool result, which the estimate cannot know.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

from kinegraph.agents.estimate import EstimatingBackend
from kinegraph.agents.pricing import PriceTable
from kinegraph.graphs.state import GraphContext
from kinegraph.run.invoke import group_samples, invoke_group
from kinegraph.run.plan import RunPlan, plan_run
from kinegraph.run.setup import build_graph, load_samples, tool_batches
from kinegraph.types import RunConfig


class RunEstimate(BaseModel):
    """Requests, estimated prompt tokens, the output-token allowance and the worst-case cost of a run."""

    dry_run: bool = True
    model: str | None
    questions: int
    requests: int
    input_tokens: int
    max_output_tokens: int
    worst_case_cost_usd: float
    max_cost_usd: float | None
    note: str = "first request of each model call; tool-calling graphs may ask again after a tool result"


async def estimate_run_async(config: RunConfig) -> RunEstimate:
    """Walk the run's graph over its samples without sending anything; see the module docstring."""
    plan = plan_run(config)
    config = plan.config
    samples = load_samples(plan)
    graph = build_graph(plan)
    backend = None
    if plan.needs_default_model:
        backend = _estimating(plan, config.model, config.model_options)  # type: ignore[arg-type]
    roles = {role: _estimating(plan, named.model, named.options) for role, named in config.roles.items()}
    context = GraphContext(
        backend=backend,
        limiter=asyncio.Semaphore(max(1, config.concurrency)),
        tools=tool_batches(config),
        roles=roles,  # type: ignore[arg-type]
        model_roles=plan.graph.model_roles,
    )
    groups: Any = iter(group_samples(samples))
    while batch := [g for _, g in zip(range(max(1, config.concurrency)), groups, strict=False)]:
        await asyncio.gather(*(invoke_group(graph, group, context) for group in batch))
    counted = [b for b in (backend, *roles.values()) if b is not None]
    return RunEstimate(
        model=config.model,
        questions=len(samples),
        requests=sum(b.requests for b in counted),
        input_tokens=sum(b.input_tokens for b in counted),
        max_output_tokens=sum(b.output_tokens for b in counted),
        worst_case_cost_usd=sum(b.worst_case_cost_usd for b in counted),
        max_cost_usd=config.max_cost_usd,
    )


def _estimating(plan: RunPlan, spec: str, options: dict[str, Any]) -> EstimatingBackend:
    """A backend for `spec` that counts what it would send (priced with the `prices` option's table)."""
    provider, model = plan.models[spec]
    return EstimatingBackend(provider, model, PriceTable.load(options.get("prices")))


def estimate_run(config: RunConfig) -> RunEstimate:
    """Synchronous `estimate_run_async` (the CLI's `--dry-run`)."""
    return asyncio.run(estimate_run_async(config))
