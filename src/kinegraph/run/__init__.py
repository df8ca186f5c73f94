"""Running a graph over a benchmark: locally on asyncio or on Ray, into one run directory.

`execute(config)` runs (or resumes) a run in this process; `execute(config, ray=RayOptions(...))` spreads
it over a Ray cluster. Both leave the same run directory (see `kinegraph.rundir`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kinegraph.run.local import run as run_locally
from kinegraph.run.summary import RunSummary
from kinegraph.types import RunConfig

if TYPE_CHECKING:
    from kinegraph.run.on_ray import RayOptions


def execute(
    config: RunConfig, ray: RayOptions | None = None, *, show_progress: bool = True, **local: Any
) -> RunSummary:
    """Run or resume `config`: in this process, or on Ray when `ray` options are given (Ray is imported
    only then). `local` (samples=, backend=) is for in-process runs only. The run's seed fills the
    graph's `seed` option first (`run.plan.plan_run`), so run.json records it either way."""
    if ray is None:
        return run_locally(config, show_progress=show_progress, **local)
    if local:
        raise ValueError(f"options for in-process runs only, not on Ray: {', '.join(sorted(local))}")
    from kinegraph.run.on_ray import run_on_ray

    return run_on_ray(config, ray, show_progress=show_progress)


__all__ = ["RunSummary", "execute"]
