"""The Ray side of a distributed run: a worker that runs clip-aligned shards through the run's graph.

One `ShardWorker` per Ray actor. It answers `run_shard(setup, samples)` with the shard's predictions,
produced by the same `invoke_group` the single-process runner and serve use. The compiled graph and the
backend are built when a run's first shard arrives and kept while the graph, model and options stay the
same (a local `transformers` model is loaded once per worker, not per sample or per run).

Response cache: every worker starts from a snapshot of the driver's cache (this model's rows) held in
memory, and returns the responses it added with each shard; the driver merges them into its SQLite
file. SQLite never has to work over a network filesystem, and the driver stays the only writer.
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kinegraph.agents.protocol import GenerateResponse
from kinegraph.agents.spending import BudgetedBackend, SpendingLimit
from kinegraph.graphs.state import GraphContext
from kinegraph.run.invoke import group_samples, invoke_group
from kinegraph.run.plan import RunPlan, plan_run
from kinegraph.run.setup import build_graph, make_backend, make_role_backends, tool_batches
from kinegraph.types import Prediction, RunConfig, Sample

#: A cache row as it travels between workers and the driver: (key, provider, model, response JSON).
CacheRow = tuple[str, str, str, str]


class SnapshotCache:
    """An in-memory response cache seeded with the driver's rows; remembers what it adds until drained.

    Duck-types the `ResponseCache` interface `ManagedBackend` uses (`get`, `put`, `aget`, `aput`, `path`).
    """

    def __init__(self, rows: dict[str, str]) -> None:
        self.path = Path("<driver cache snapshot>")
        self._rows = dict(rows)
        self._added: list[CacheRow] = []

    def get(self, key: str) -> GenerateResponse | None:
        """The stored response, or None; a row that does not parse is a miss, as in `ResponseCache`."""
        raw = self._rows.get(key)
        if raw is None:
            return None
        try:
            return GenerateResponse.model_validate_json(raw)
        except ValueError:  # pydantic's ValidationError is a ValueError
            return None

    def put(self, key: str, provider: str, model: str, response: GenerateResponse) -> None:
        raw = response.model_dump_json()
        self._rows[key] = raw
        self._added.append((key, provider, model, raw))

    async def aget(self, key: str) -> GenerateResponse | None:
        """`get`: memory takes no lock, so the event loop runs it directly."""
        return self.get(key)

    async def aput(self, key: str, provider: str, model: str, response: GenerateResponse) -> None:
        """`put`, as `aget`."""
        self.put(key, provider, model, response)

    def drain(self) -> list[CacheRow]:
        """The rows added since the last drain (they go back to the driver with a shard's predictions)."""
        added, self._added = self._added, []
        return added

    def __len__(self) -> int:
        return len(self._rows)


@dataclass
class ShardResult:
    """What one shard sends back: its predictions, new cache rows and counters."""

    predictions: list[Prediction]
    cache_rows: list[CacheRow] = field(default_factory=list)
    groups: int = 0
    decodes: int = 0
    tool_calls: int = 0
    compute_s: float = 0.0


@dataclass(frozen=True)
class RunSetup:
    """What a worker needs to run a run's shards. `cache_rows` holds one Ray reference to the driver's
    snapshot (in a list, so Ray passes the reference instead of the rows with every shard)."""

    run_id: str
    config: RunConfig
    concurrency: int
    cache_rows: list[Any] = field(default_factory=list)
    budget_usd: float | None = None  # this worker's share of --max-cost, reserved before each request

    def graph_key(self) -> str:
        """What the compiled graph and backend depend on: unchanged, a worker keeps its loaded model."""
        keep = {"graph", "model", "base_url", "options", "use_cache", "roles"}
        return self.config.model_dump_json(include=keep)


def per_worker_concurrency(concurrency: int, workers: int) -> int:
    """Each worker's share of the run-wide limit on model calls, so the cluster total stays `concurrency`."""
    return max(1, math.ceil(max(1, concurrency) / max(1, workers)))


class ShardWorker:
    """A Ray actor that runs shards of whole groups (clips). It builds the graph and backend when a run's
    first shard arrives and keeps them while later runs use the same graph, model and options, so a
    local model is loaded once per worker, and a sweep reuses its workers."""

    def __init__(self) -> None:
        self.run_id: str | None = None
        self.graph_key: str | None = None
        self.plan: RunPlan | None = None
        self.graph: Any = None
        self.backend: Any = None
        self.roles: dict[str, Any] = {}
        self.run_backend: Any = None  # this run's default backend, behind its spending limit if it has one
        self.run_roles: dict[str, Any] = {}  # this run's role backends, behind the same limit
        self.cache: SnapshotCache | None = None
        self._lock: asyncio.Lock | None = None
        self._limiter = asyncio.Semaphore(1)
        self._role_limiters: dict[str, asyncio.Semaphore] = {}
        self._groups = asyncio.Semaphore(1)

    async def _prepare(self, setup: RunSetup) -> None:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if setup.run_id == self.run_id:
                return
            if setup.graph_key() != self.graph_key:
                self.graph = self.backend = None  # release the previous model before loading the next
                self.roles = {}
                self.plan = plan_run(setup.config)
                self.graph, self.backend, self.roles = build_graph_and_backend(self.plan)
                self.graph_key = setup.graph_key()
            self.cache = None
            backends = [b for b in (self.backend, *self.roles.values()) if b is not None]
            if setup.config.use_cache and any(getattr(b.inner, "cacheable", True) for b in backends):
                rows = await setup.cache_rows[0] if setup.cache_rows else {}
                self.cache = SnapshotCache(rows)
            for backend in backends:
                backend.cache = self.cache if getattr(backend.inner, "cacheable", True) else None
            self._role_limiters = {role: asyncio.Semaphore(setup.concurrency) for role in self.roles}
            self.run_backend, self.run_roles = self.backend, dict(self.roles)
            if setup.budget_usd is not None:  # one limit per worker, shared by every role of the run
                limit = SpendingLimit(setup.budget_usd)
                if self.backend is not None:
                    self.run_backend = BudgetedBackend(self.backend, limit)
                self.run_roles = {role: BudgetedBackend(b, limit) for role, b in self.roles.items()}
            self._limiter = asyncio.Semaphore(setup.concurrency)
            self._groups = asyncio.Semaphore(setup.concurrency)
            self.run_id = setup.run_id

    async def run_shard(self, setup: RunSetup, samples: list[Sample]) -> ShardResult:
        """Run every group (clip) of `samples`; up to `concurrency` groups of this worker run at once."""
        await self._prepare(setup)
        groups_sem, config = self._groups, setup.config
        context = GraphContext(
            backend=self.run_backend,
            limiter=self._limiter,
            tools=tool_batches(config),
            roles=self.run_roles,
            limiters=self._role_limiters,
            model_roles=self.plan.graph.model_roles if self.plan is not None else (),
        )
        start = time.perf_counter()
        stamp = {"graph": config.graph, "model": config.model}

        async def one(group: list[Sample]) -> list[Prediction]:
            async with groups_sem:
                return await invoke_group(self.graph, group, context, stamp=stamp)

        groups = group_samples(samples)
        results = await asyncio.gather(*(one(g) for g in groups))
        return ShardResult(
            predictions=[p for group in results for p in group],
            cache_rows=self.cache.drain() if self.cache is not None else [],
            groups=len(groups),
            decodes=context.stats.decodes,
            tool_calls=context.tools.calls(),
            compute_s=time.perf_counter() - start,
        )

    def ping(self) -> float:
        """A no-op round trip, for measuring Ray's per-call overhead."""
        return time.perf_counter()


def build_graph_and_backend(plan: RunPlan) -> tuple[Any, Any, dict[str, Any]]:
    """The compiled graph, the default backend when a role runs on `--model` (else None), and the
    backends of the named roles; all uncached (workers cache in memory)."""
    default = make_backend(plan, cache=False) if plan.needs_default_model else None
    return build_graph(plan), default, make_role_backends(plan, cache=False)


def actor_class(options: dict[str, Any]) -> Any:
    """`ShardWorker` as a Ray actor class with the given resources (imports Ray lazily)."""
    import ray

    return ray.remote(ShardWorker).options(**options)
