"""Run a graph over a benchmark with a model: bounded concurrency, resume, progress, run directory.

Samples are grouped by clip/video (`Sample.group`); each group is one graph invocation, so a clip's
frames are decoded once and shared by all its questions. Model calls share one run-wide limit
(`--concurrency`), and only as many groups are in flight as keep those calls busy (`clip_limit.py`):
that bounds memory. `--max-cost` reserves each request's worst-case cost before it is sent, so the run
stops before its budget is crossed, not after (`agents/spending.py`). Every finished sample is appended
to predictions.jsonl at once; a rerun into the same directory skips what is there. Ctrl-C or SIGTERM
stops cleanly and leaves a resumable directory; one process at a time writes a directory, and only the
run it holds is resumed there.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kinegraph.agents.protocol import Backend
from kinegraph.agents.spending import BudgetedBackend, SpendingLimit
from kinegraph.graphs.state import GraphContext
from kinegraph.run.clip_limit import ClipLimit
from kinegraph.run.invoke import group_samples, invoke_group
from kinegraph.run.plan import RunPlan, plan_run
from kinegraph.run.progress import RunProgress
from kinegraph.run.seeding import check_backend_seed
from kinegraph.run.setup import (
    build_graph,
    load_samples,
    make_backend,
    make_role_backends,
    role_limiters,
    tool_batches,
)
from kinegraph.run.signals import terminate_as_interrupt
from kinegraph.run.summary import RunSummary, finish_run, start_run
from kinegraph.rundir import PREDICTIONS, PredictionLog, check_resumable, lock_run_dir
from kinegraph.types import RunConfig, Sample, Status


async def run_async(
    config: RunConfig,
    *,
    samples: Sequence[Sample] | None = None,
    backend: Backend | None = None,
    show_progress: bool = True,
) -> RunSummary:
    """Run (or resume) `config`; returns the summary written to run.json. A `backend` given in process
    must have been built with the run's seed where its provider takes one (`get_backend(..., seed=)`)."""
    plan = plan_run(config, backend)  # a role the graph lacks or cannot fill: one line, before any call
    config = plan.config
    out_dir = Path(config.out_dir)
    samples = list(samples) if samples is not None else load_samples(plan)
    if not samples:
        raise ValueError("no samples to run")
    seen: set[str] = set()
    for s in samples:
        if s.id in seen:
            raise ValueError(f"duplicate sample id {s.id!r}: ids must be unique within a run")
        seen.add(s.id)
    graph = build_graph(plan)
    if plan.needs_default_model:
        if backend is not None:
            check_backend_seed(config, backend)
        backend = backend or make_backend(plan)
    else:
        backend = None
    roles = make_role_backends(plan)
    if config.max_cost_usd is not None:  # one budget over every role's calls
        limit = SpendingLimit(config.max_cost_usd)
        backend = BudgetedBackend(backend, limit) if backend is not None else None
        roles = {role: BudgetedBackend(b, limit) for role, b in roles.items()}
    context = GraphContext(
        backend=backend,
        limiter=asyncio.Semaphore(max(1, config.concurrency)),
        tools=tool_batches(config),
        roles=roles,
        limiters=role_limiters(config),
        model_roles=plan.graph.model_roles,
    )
    with lock_run_dir(out_dir):
        check_resumable(config)
        return await _run_locked(plan, samples, graph, context, show_progress)


async def _run_locked(
    plan: RunPlan, samples: list[Sample], graph: Any, context: GraphContext, show_progress: bool
) -> RunSummary:
    """The run itself, with the directory locked: resume, schedule, record the outcome in run.json."""
    config = plan.config
    log = PredictionLog(Path(config.out_dir) / PREDICTIONS).open(drop_errors=config.retry_errors)
    pending = [s for s in samples if s.id not in log.done]
    groups = group_samples(pending)
    run_info, t0 = start_run(plan), time.perf_counter()
    status, n_new = "completed", 0
    progress = RunProgress(total=len(samples), done=len(samples) - len(pending), enabled=show_progress)
    try:
        with progress, collect_garbage_rarely():
            n_new, status = await _schedule(graph, groups, context, config, log, progress)
    except (asyncio.CancelledError, KeyboardInterrupt):
        status = "interrupted"
        raise
    except Exception:
        status = "failed"
        raise
    finally:
        log.close()
        summary = finish_run(
            plan, samples, run_info, status, n_new, time.perf_counter() - t0, context, known=log.done
        )
    return summary


class _RareCollections:
    """Rarer garbage collections while at least one run is active (runs may overlap in one process).

    At thousands of questions a second CPython's default (a collection every 700 new objects) scans the
    run's live samples, predictions and graph state many times a second: on 14,000 questions that is
    seconds of stalls during which no request goes out. Objects that existed before the first run are
    frozen (never rescanned); cycles are still collected; the last run to end restores the thresholds.
    """

    def __init__(self, gen0_threshold: int = 50_000) -> None:
        self.gen0_threshold = gen0_threshold
        self.active = 0
        self.saved: tuple[int, int, int] | None = None

    @contextmanager
    def __call__(self) -> Iterator[None]:
        if self.active == 0:
            self.saved = gc.get_threshold()
            gc.freeze()
            gc.set_threshold(self.gen0_threshold, 20, 100)
        self.active += 1
        try:
            yield
        finally:
            self.active -= 1
            if self.active == 0 and self.saved is not None:
                gc.set_threshold(*self.saved)
                gc.unfreeze()


collect_garbage_rarely = _RareCollections()


async def _schedule(
    graph: Any,
    groups: list[list[Sample]],
    context: GraphContext,
    config: RunConfig,
    log: PredictionLog,
    progress: RunProgress,
) -> tuple[int, str]:
    """Keep enough groups in flight to fill `concurrency` model calls (`ClipLimit`); stop scheduling once
    the backend refused a request for the budget's sake (or the budget is spent)."""
    n_new, cost = 0, 0.0
    in_flight: set[asyncio.Task] = set()
    queue = iter(groups)
    clips = ClipLimit(config.concurrency, groups)
    stamp = {"graph": config.graph, "model": config.model}
    status = "completed"
    try:
        while True:
            while len(in_flight) < clips.limit and status == "completed":
                group = next(queue, None)
                if group is None:
                    break
                in_flight.add(asyncio.create_task(invoke_group(graph, group, context, stamp=stamp)))
            if not in_flight:
                break
            finished, in_flight = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
            for task in finished:
                predictions = task.result()
                n_new += log.append(predictions)
                clips.observe(predictions)
                context.stats.groups += 1
                cost += sum(p.usage.cost_usd for p in predictions)
                progress.advance(predictions, cost)
                if any(p.status == Status.budget_exceeded for p in predictions):
                    status = "budget_exceeded"
            if config.max_cost_usd is not None and cost >= config.max_cost_usd:
                status = "budget_exceeded"
    finally:
        for task in in_flight:
            task.cancel()
        if in_flight:
            await asyncio.gather(*in_flight, return_exceptions=True)
    return n_new, status


def run(config: RunConfig, **kwargs: Any) -> RunSummary:
    """Synchronous entry point (the CLI's), on uvloop's faster event loop where it is installed."""
    with terminate_as_interrupt(), asyncio.Runner(loop_factory=fast_event_loop_factory()) as runner:
        return runner.run(run_async(config, **kwargs))


def fast_event_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop (about twice asyncio's speed at thousands of requests) when importable, else None."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop
