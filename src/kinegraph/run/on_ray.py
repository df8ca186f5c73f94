"""Run a graph over a benchmark on Ray: clip-aligned shards on Ray workers, one run directory.

The driver loads the samples, skips those already in predictions.jsonl, groups the rest by clip and
packs whole groups into shards. A pool of `ShardWorker` actors (graph and backend built once per actor)
runs the shards with the runner's own `invoke_group`; results stream back to the driver, which alone
appends to predictions.jsonl and merges the workers' new cache rows. Scoring, the official export and
run.json are the single-process runner's, so a Ray run and a local run leave the same directory.
"""

from __future__ import annotations

import math
import sys
import time
import uuid
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from kinegraph.agents.cache import ResponseCache, resolve_cache_path
from kinegraph.agents.protocol import GenerateResponse
from kinegraph.graphs import GraphSpec
from kinegraph.graphs.state import GraphContext
from kinegraph.run.invoke import group_samples
from kinegraph.run.plan import RunPlan, plan_run
from kinegraph.run.progress import RunProgress
from kinegraph.run.ray_address import probe_address
from kinegraph.run.ray_worker import RunSetup, ShardResult, actor_class, per_worker_concurrency
from kinegraph.run.setup import build_graph, load_samples
from kinegraph.run.signals import terminate_as_interrupt
from kinegraph.run.summary import RunSummary, finish_run, start_run
from kinegraph.rundir import PREDICTIONS, PredictionLog, check_resumable, lock_run_dir
from kinegraph.types import RunConfig, Sample, Status

INSTALL_HINT = "Ray is not installed: pip install 'kinegraph[ray]' (or pip install ray)"


class RayOptions(BaseModel):
    """How a run uses Ray.

    `address`: None starts a local instance (`local_cpus` CPUs, default all); "auto" joins the cluster
    started on this machine with `ray start`; "HOST:PORT" or "ray://HOST:10001" joins that cluster.
    `workers`: actors to start (default: as many as the cluster's CPUs or GPUs allow, at most one per
    shard; for API-bound graphs at most `--concurrency`). `shard_groups`: clips per task.
    `num_cpus`/`num_gpus`: resources per worker (default 1 CPU; 1 GPU for a local `transformers` model
    or a builder marked `needs_gpu`, when the cluster has GPUs). `in_flight`: shards queued per worker.
    """

    address: str | None = None
    local_cpus: int | None = None
    workers: int | None = Field(default=None, ge=1)
    shard_groups: int = Field(default=1, ge=1)
    num_cpus: float | None = Field(default=None, ge=0)
    num_gpus: float | None = Field(default=None, ge=0)
    in_flight: int = Field(default=2, ge=1)
    runtime_env: dict[str, Any] | None = None


@contextmanager
def ray_session(options: RayOptions) -> Iterator[Any]:
    """Yield the `ray` module, connected; reuse a session already open in this process, else start one
    (and shut it down afterwards)."""
    try:
        import ray
    except ImportError as exc:
        raise ValueError(INSTALL_HINT) from exc
    if ray.is_initialized():
        yield ray
        return
    probe_address(options.address)  # nothing listening: refused now, not after Ray's minutes of retries
    kwargs: dict[str, Any] = {"runtime_env": options.runtime_env, "logging_level": "WARNING"}
    if options.address is None:
        kwargs.update(num_cpus=options.local_cpus, include_dashboard=False)
    else:
        kwargs["address"] = options.address
    try:
        ray.init(**kwargs)
    except ConnectionError as exc:  # no cluster at that address: a mistake on the command line
        reason = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise ValueError(f"--ray {options.address or 'local'}: {reason}") from None
    try:
        yield ray
    finally:
        release_workers()
        ray.shutdown()


def session_open() -> bool:
    """Whether this process already has a Ray session (`ray_session` then reuses it, whatever the address)."""
    ray = sys.modules.get("ray")  # never imported: no session, and none is started just to ask
    return ray is not None and ray.is_initialized()


def shard_groups(groups: Sequence[list[Sample]], per_shard: int) -> list[list[Sample]]:
    """Whole groups (clips) packed `per_shard` at a time, in order: a clip never spans two shards."""
    return [[s for g in groups[i : i + per_shard] for s in g] for i in range(0, len(groups), per_shard)]


def worker_resources(
    config: RunConfig, spec: GraphSpec, options: RayOptions, cluster: dict[str, float]
) -> dict[str, float]:
    """Resources of one worker: CPU for API-bound and CPU tool graphs, GPU for local models and GPU tools."""
    local_model = spec.needs_model and (config.model or "").startswith("transformers:")
    wants_gpu = local_model or spec.needs_gpu
    gpus = cluster.get("GPU", 0.0)
    if options.num_gpus is not None:
        if options.num_gpus > gpus:
            raise ValueError(f"--ray-gpus {options.num_gpus:g} per worker, but the cluster has {gpus:g} GPUs")
        num_gpus = options.num_gpus
    else:  # GPU tools and local models also run on CPU: ask for a GPU only where there is one
        num_gpus = 1.0 if wants_gpu and gpus >= 1 else 0.0
    num_cpus = 1.0 if options.num_cpus is None else options.num_cpus
    if num_cpus > cluster.get("CPU", 0.0):
        raise ValueError(
            f"--ray-cpus {num_cpus:g} per worker, but the cluster has {cluster.get('CPU', 0):g} CPUs"
        )
    return {"num_cpus": num_cpus, "num_gpus": num_gpus}


def worker_count(
    resources: dict[str, float],
    cluster: dict[str, float],
    n_shards: int,
    api_bound: bool,
    config: RunConfig,
    requested: int | None = None,
) -> int:
    """As many workers as the cluster's resources hold (at most one per shard; API-bound: `concurrency`).

    A `requested` count beyond what the cluster holds is an error: the extra workers would never start,
    and the shards queued on them would never run.
    """
    fits = []
    if resources["num_gpus"] > 0:
        fits.append(math.floor(cluster.get("GPU", 0.0) / resources["num_gpus"]))
    if resources["num_cpus"] > 0:
        fits.append(math.floor(cluster.get("CPU", 0.0) / resources["num_cpus"]))
    capacity = min(fits) if fits else n_shards
    if requested is not None:
        if requested > capacity:
            raise ValueError(
                f"--ray-workers {requested}: the cluster holds {capacity} workers of {resources} "
                f"(it has {cluster.get('CPU', 0):g} CPUs, {cluster.get('GPU', 0):g} GPUs)"
            )
        return max(1, min(requested, n_shards))
    if api_bound:  # model calls are I/O: more actors than concurrent calls would only idle
        capacity = min(capacity, max(1, config.concurrency))
    return max(1, min(capacity, n_shards))


def cache_snapshot(plan: RunPlan) -> tuple[ResponseCache | None, dict[str, str]]:
    """The driver's response cache (None when off or not needed) and its rows for the run's models
    (each model that fills a role of the graph)."""
    config = plan.config
    if not config.use_cache or not plan.models:
        return None, {}
    path = resolve_cache_path(config.cache)
    if path is None:
        return None, {}
    cache = ResponseCache(path)
    rows: dict[str, str] = {}
    for provider, model in sorted(plan.models.values()):
        rows.update(cache.rows_for(provider, model))
    return cache, rows


def run_on_ray(
    config: RunConfig,
    options: RayOptions | None = None,
    *,
    samples: Sequence[Sample] | None = None,
    show_progress: bool = True,
) -> RunSummary:
    """Run (or resume) `config` on Ray; the same run directory, predictions and metrics as `runner.run`."""
    options = options or RayOptions()
    plan = plan_run(config)  # roles the graph lacks or cannot fill are refused here
    config = plan.config
    out_dir = Path(config.out_dir)
    samples = list(samples) if samples is not None else load_samples(plan)
    if not samples:
        raise ValueError("no samples to run")
    build_graph(plan)  # options are refused here, before any worker starts
    if not session_open():  # a mistyped address leaves no run directory behind
        probe_address(options.address)
    with terminate_as_interrupt(), lock_run_dir(out_dir):
        check_resumable(config)
        return _run_locked(plan, options, samples, show_progress)


def _run_locked(plan: RunPlan, options: RayOptions, samples: list[Sample], show_progress: bool) -> RunSummary:
    """The Ray run with the directory locked: resume, drive the workers, record the outcome in run.json."""
    config = plan.config
    log = PredictionLog(Path(config.out_dir) / PREDICTIONS).open(drop_errors=config.retry_errors)
    pending = [s for s in samples if s.id not in log.done]
    shards = shard_groups(group_samples(pending), options.shard_groups)
    context = GraphContext()  # carries the counters finish_run reports (groups, decodes)
    progress = RunProgress(total=len(samples), done=len(samples) - len(pending), enabled=show_progress)
    try:
        # a cluster that cannot be joined is refused before run.json says the run started
        session = ray_session(options) if shards else nullcontext()
        with session as ray:
            ray_info = {"address": options.address or "local", "shards": len(shards)}
            run_info = start_run(plan, ray=ray_info)
            status, n_new, t0 = "completed", 0, time.perf_counter()
            try:
                if shards:
                    with progress:
                        n_new, status = _drive(ray, plan, options, shards, log, progress, context, run_info)
            except KeyboardInterrupt:
                status = "interrupted"
                raise
            except Exception:
                status = "failed"
                raise
            finally:
                elapsed_s = time.perf_counter() - t0
                summary = finish_run(plan, samples, run_info, status, n_new, elapsed_s, context)
    finally:
        log.close()
    return summary


#: The workers of this process's Ray session, kept between runs (a sweep starts its workers once).
_pool: dict[str, Any] = {"key": None, "workers": []}


def acquire_workers(ray: Any, resources: dict[str, float], n: int) -> list[Any]:
    """`n` workers with `resources`, reusing those of an earlier run of this session when they match."""
    context = ray.get_runtime_context()
    key = (context.get_node_id(), context.get_job_id(), tuple(sorted(resources.items())))
    if _pool["key"] != key:
        release_workers()
        _pool["key"] = key
    workers: list[Any] = _pool["workers"]
    for extra in workers[n:]:
        ray.kill(extra)
    del workers[n:]
    # a worker lost with its node is restarted and its shard rerun; the driver drops duplicate samples
    actor = actor_class({**resources, "max_restarts": 2, "max_task_retries": 2})
    workers += [actor.remote() for _ in range(n - len(workers))]
    return list(workers)


def release_workers() -> None:
    """Stop the kept workers (their CPUs and GPUs go back to the cluster)."""
    workers, _pool["workers"], _pool["key"] = _pool["workers"], [], None
    if not workers:
        return
    import ray

    for w in workers:
        try:
            ray.kill(w)
        except Exception:  # noqa: BLE001 - the session they lived in may be gone already
            continue


def _drive(
    ray: Any,
    plan: RunPlan,
    options: RayOptions,
    shards: list[list[Sample]],
    log: PredictionLog,
    progress: RunProgress,
    context: GraphContext,
    run_info: dict[str, Any],
) -> tuple[int, str]:
    """Start the workers, keep `in_flight` shards queued on each, and append results as they arrive."""
    config, spec = plan.config, plan.graph
    needs_model = spec.needs_model
    cluster = ray.cluster_resources()
    resources = worker_resources(config, spec, options, cluster)
    api_bound = needs_model and resources["num_gpus"] == 0
    n_workers = worker_count(resources, cluster, len(shards), api_bound, config, options.workers)
    # model graphs split the run-wide call limit; tool graphs run one clip at a time per reserved CPU/GPU
    concurrency = per_worker_concurrency(config.concurrency, n_workers) if needs_model else 1
    cache, rows = cache_snapshot(plan) if needs_model else (None, {})
    run_info["ray"].update(workers=n_workers, resources=resources, per_worker_concurrency=concurrency)
    # each worker reserves against its own share of the budget, so together they never cross it
    budget = None if config.max_cost_usd is None or not needs_model else config.max_cost_usd / n_workers
    setup = RunSetup(uuid.uuid4().hex, config, concurrency, [ray.put(rows)], budget_usd=budget)
    workers = acquire_workers(ray, resources, n_workers)
    queue, in_flight = deque(shards), {}
    n_new, cost, status, finished = 0, 0.0, "completed", False

    def submit(worker: int) -> None:
        if queue and status == "completed":
            in_flight[workers[worker].run_shard.remote(setup, queue.popleft())] = worker

    try:
        for w in range(n_workers):
            for _ in range(options.in_flight):
                submit(w)
        while in_flight:
            done, _ = ray.wait(list(in_flight), num_returns=1)
            worker = in_flight.pop(done[0])
            result: ShardResult = ray.get(done[0])
            n_new += log.append(result.predictions)
            if cache is not None:
                for key, provider, model, raw in result.cache_rows:
                    cache.put(key, provider, model, GenerateResponse.model_validate_json(raw))
            context.stats.groups += result.groups
            context.stats.decodes += result.decodes
            context.stats.tool_calls += result.tool_calls
            cost += sum(p.usage.cost_usd for p in result.predictions)
            progress.advance(result.predictions, cost)
            refused = any(p.status == Status.budget_exceeded for p in result.predictions)
            if refused or (config.max_cost_usd is not None and cost >= config.max_cost_usd):
                status = "budget_exceeded"
            submit(worker)
        finished = True
    finally:
        if not finished:  # interrupted or failed: what the workers still run is abandoned
            release_workers()
    return n_new, status
