"""Run a graph over a benchmark with a model: bounded concurrency, resume, progress, run directory.

Samples are grouped by clip/video (`Sample.group`); each group is one graph invocation, so a clip's
frames are decoded once and shared by all its questions. Model calls share one run-wide limit
(`--concurrency`). Every finished sample is appended to predictions.jsonl at once; a rerun into the
same directory skips what is there. Ctrl-C stops cleanly and leaves a resumable directory.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from kinegraph.agents.protocol import Backend
from kinegraph.graphs import resolve_builder
from kinegraph.graphs.nodes import prediction
from kinegraph.graphs.state import GraphContext
from kinegraph.graphs.tool_batches import ToolBatches
from kinegraph.progress import RunProgress
from kinegraph.rundir import (
    METRICS,
    OFFICIAL,
    PREDICTIONS,
    RUN_JSON,
    PredictionLog,
    git_sha,
    now,
    read_json,
    read_predictions,
    versions,
    write_json,
)
from kinegraph.suites import suites
from kinegraph.types import FAILED_STATUSES, Prediction, RunConfig, Sample, Status, Usage


class RunSummary(BaseModel):
    out_dir: str
    status: str
    n_samples: int
    n_predictions: int
    n_new: int
    status_counts: dict[str, int] = Field(default_factory=dict)
    usage: Usage = Field(default_factory=Usage)
    elapsed_s: float = 0.0
    groups: int = 0
    decodes: int = 0
    tool_calls: int = 0  # batched GPU-tool calls; fewer than the clips measured = clips shared calls
    metrics: dict[str, Any] | None = None
    headline: dict[str, float | None] | None = None


def group_samples(samples: Sequence[Sample]) -> list[list[Sample]]:
    """Samples grouped by clip/video, in order of first appearance."""
    groups: dict[str, list[Sample]] = {}
    for s in samples:
        groups.setdefault(s.group, []).append(s)
    return list(groups.values())


def load_samples(config: RunConfig) -> list[Sample]:
    suite = suites.get(config.benchmark)
    if config.data is None:
        raise ValueError(f"--data is required: the {config.benchmark} files to run on")
    samples = suite.load(config.data, **config.loader_options)
    if config.limit is not None:
        samples = samples[: config.limit]
    return samples


def build_graph(config: RunConfig) -> tuple[Any, bool]:
    """The compiled graph and whether it needs a model (VLM-free builders set `needs_model = False`).
    An option the builder does not take is refused in one line that lists the ones it does."""
    builder = resolve_builder(config.graph)
    accepted = [
        p.name
        for p in inspect.signature(builder).parameters.values()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    unknown = sorted(set(config.options) - set(accepted))
    if unknown:
        raise ValueError(
            f"graph {config.graph} has no option {', '.join(map(repr, unknown))} "
            f"(options: {', '.join(accepted) or 'none'})"
        )
    return builder(**config.options), getattr(builder, "needs_model", True)


def tool_batches(config: RunConfig) -> ToolBatches:
    """The run's GPU-tool batching stage on `config.device`; a CUDA device that is absent is refused."""
    if config.device.startswith("cuda"):
        from kinegraph.tools.gpu_flow import resolve_device

        resolve_device(config.device)
    return ToolBatches(config.device)


def make_backend(config: RunConfig) -> Backend:
    from kinegraph.agents import get_backend

    cache: Any = config.cache if config.use_cache else False
    return get_backend(
        config.model,  # type: ignore[arg-type]
        base_url=config.base_url,
        cache=cache,
        **config.model_options,
    )


async def _run_group(
    graph: Any, samples: list[Sample], context: GraphContext, config: RunConfig
) -> list[Prediction]:
    """Invoke the graph on one group; a crash or a missing answer becomes a graph_error prediction."""
    frames = None
    try:
        state = await graph.ainvoke({"samples": samples, "measurements": {}, "results": []}, context=context)
        results = {p.sample_id: p for p in state.get("results", [])}
        frames = state.get("frame_record")
        error = "the graph returned no result for this sample"
    except Exception as exc:  # noqa: BLE001 - one bad group must not end the run
        results, error = {}, f"{type(exc).__name__}: {exc}"
    out = []
    for s in samples:
        p = results.get(s.id) or prediction(s, status=Status.graph_error, error=error)
        update: dict[str, Any] = {"graph": config.graph, "model": config.model}
        if p.frames is None and frames is not None:
            update["frames"] = frames  # every prediction records the frames its group looked at
        out.append(p.model_copy(update=update))
    return out


def start_run(config: RunConfig, **extra: Any) -> dict[str, Any]:
    """Write run.json's opening state; a resumed run keeps its first start time and counts sessions."""
    out_dir = Path(config.out_dir)
    previous = read_json(out_dir / RUN_JSON) or {}
    started = now()
    run_info = {
        "config": config.model_dump(),
        "versions": versions(),
        "git_sha": git_sha(),
        "started_at": previous.get("started_at", started),
        "session_started_at": started,
        "sessions": previous.get("sessions", 0) + 1,
        "status": "running",
        **extra,
    }
    write_json(out_dir / RUN_JSON, run_info)
    return run_info


async def run_async(
    config: RunConfig,
    *,
    samples: Sequence[Sample] | None = None,
    backend: Backend | None = None,
    show_progress: bool = True,
) -> RunSummary:
    """Run (or resume) `config`; returns the summary written to run.json."""
    out_dir = Path(config.out_dir)
    samples = list(samples) if samples is not None else load_samples(config)
    if not samples:
        raise ValueError("no samples to run")
    seen: set[str] = set()
    for s in samples:
        if s.id in seen:
            raise ValueError(f"duplicate sample id {s.id!r}: ids must be unique within a run")
        seen.add(s.id)
    graph, needs_model = build_graph(config)
    if needs_model and backend is None:
        if config.model is None:
            raise ValueError(f"graph {config.graph!r} needs a model: pass --model PROVIDER:MODEL")
        backend = make_backend(config)
    log = PredictionLog(out_dir / PREDICTIONS).open(drop_errors=config.retry_errors)
    pending = [s for s in samples if s.id not in log.done]
    groups = group_samples(pending)
    context = GraphContext(
        backend=backend if needs_model else None,
        limiter=asyncio.Semaphore(max(1, config.concurrency)),
        tools=tool_batches(config),
    )
    run_info, t0 = start_run(config), time.perf_counter()
    status, n_new = "completed", 0
    progress = RunProgress(total=len(samples), done=len(samples) - len(pending), enabled=show_progress)
    try:
        with progress, collect_garbage_rarely():
            n_new, status = await _schedule(graph, groups, context, config, log, progress)
    except (asyncio.CancelledError, KeyboardInterrupt):
        status = "interrupted"
        raise
    finally:
        log.close()
        summary = _finish(
            config, samples, run_info, status, n_new, time.perf_counter() - t0, context, known=log.done
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
    """Keep up to `concurrency` groups in flight; stop scheduling when the cost budget is spent."""
    n_new, cost = 0, 0.0
    in_flight: set[asyncio.Task] = set()
    queue = iter(groups)
    limit = max(1, config.concurrency)
    status = "completed"
    try:
        while True:
            while len(in_flight) < limit and status == "completed":
                group = next(queue, None)
                if group is None:
                    break
                in_flight.add(asyncio.create_task(_run_group(graph, group, context, config)))
            if not in_flight:
                break
            finished, in_flight = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
            for task in finished:
                predictions = task.result()
                n_new += log.append(predictions)
                context.stats.groups += 1
                cost += sum(p.usage.cost_usd for p in predictions)
                progress.advance(predictions, cost)
            if config.max_cost_usd is not None and cost >= config.max_cost_usd:
                status = "budget_exceeded"
    finally:
        for task in in_flight:
            task.cancel()
        if in_flight:
            await asyncio.gather(*in_flight, return_exceptions=True)
    return n_new, status


def _finish(
    config: RunConfig,
    samples: Sequence[Sample],
    run_info: dict[str, Any],
    status: str,
    n_new: int,
    elapsed_s: float,
    context: GraphContext,
    known: Mapping[str, Prediction] | None = None,
) -> RunSummary:
    """Score what is there, export the official files, and write run.json with totals.

    `known` is the log already in memory (everything in predictions.jsonl); without it the file is read.
    """
    out_dir = Path(config.out_dir)
    ids = {s.id for s in samples}
    everything = known.values() if known is not None else read_predictions(out_dir / PREDICTIONS)
    predictions = [p for p in everything if p.sample_id in ids]
    usage = Usage()
    for p in predictions:
        usage = usage + p.usage
    summary = RunSummary(
        out_dir=str(out_dir),
        status=status,
        n_samples=len(samples),
        n_predictions=len(predictions),
        n_new=n_new,
        status_counts=dict(Counter(str(p.status) for p in predictions)),
        usage=usage,
        elapsed_s=elapsed_s,
        groups=context.stats.groups,
        decodes=context.stats.decodes,
        tool_calls=context.stats.tool_calls + context.tools.calls(),
    )
    if predictions:
        suite = suites.get(config.benchmark)
        metrics = suite.score(samples, predictions)
        write_json(out_dir / METRICS, metrics)
        suite.export(samples, predictions, out_dir / OFFICIAL)
        summary.metrics, summary.headline = metrics, suite.headline(metrics)
    latencies = [p.latency_s for p in predictions if p.latency_s]
    n_failed = sum(p.status in FAILED_STATUSES for p in predictions)
    write_json(
        out_dir / RUN_JSON,
        {
            **run_info,
            "status": status,
            "ended_at": now(),
            "totals": {
                **summary.model_dump(exclude={"metrics", "out_dir"}),
                "error_rate": n_failed / max(1, len(predictions)),
                "latency_s_mean": statistics.fmean(latencies) if latencies else None,
                "latency_s_p50": statistics.median(latencies) if latencies else None,
                "decodes_per_group": context.stats.decodes / max(1, context.stats.groups),
            },
        },
    )
    return summary


def run(config: RunConfig, **kwargs: Any) -> RunSummary:
    """Synchronous entry point (the CLI's), on uvloop's faster event loop where it is installed."""
    with asyncio.Runner(loop_factory=fast_event_loop_factory()) as runner:
        return runner.run(run_async(config, **kwargs))


def fast_event_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop (about twice asyncio's speed at thousands of requests) when importable, else None."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop
