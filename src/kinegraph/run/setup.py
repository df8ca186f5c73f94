"""What a run needs before its first group: samples, the compiled graph, the model backend, GPU batching."""

from __future__ import annotations

import asyncio
from typing import Any

from kinegraph.agents.protocol import Backend
from kinegraph.data.check import preflight
from kinegraph.errors import UsageError
from kinegraph.graphs import graphs
from kinegraph.graphs.tool_batches import ToolBatches
from kinegraph.run.plan import RunPlan
from kinegraph.run.seeding import backend_options
from kinegraph.subsets import first_groups_per, select
from kinegraph.types import RunConfig, Sample


def load_samples(plan: RunPlan) -> list[Sample]:
    """The run's samples: the suite's loader on `--data`, then `--subset`, `--limit` and `--limit-per`."""
    config, suite = plan.config, plan.suite
    if config.data is None:
        raise ValueError(f"--data is required: the {config.benchmark} files to run on")
    preflight(config.benchmark, config.data)  # missing files, a Hub cache root: one line, before any call
    samples = suite.load(config.data, **config.loader_options)
    if config.subset:
        samples = select(samples, config.subset, suite.subset_keys, config.benchmark)
    plan.graph.check_fields(samples, config.data)  # a missing column: one line, before any call
    if config.limit_per is not None and config.limit is None:
        raise UsageError(f"--limit-per {config.limit_per} needs --limit N: N groups per {config.limit_per}")
    if config.limit is not None and config.limit_per is not None:
        samples = first_groups_per(
            samples, config.limit, config.limit_per, suite.subset_keys, config.benchmark
        )
    elif config.limit is not None:
        samples = samples[: config.limit]
    return samples


def build_graph(plan: RunPlan) -> Any:
    """The compiled graph; options the graph does not take, or of the wrong type, are refused in one line
    (see `GraphSpec.check_options`), and so is `video=native` for a model that takes no video or a graph
    that sends none (`check_video_input`)."""
    check_video_input(plan)
    return plan.graph.build(plan.config.options)


def check_video_input(plan: RunPlan) -> None:
    """A model asked to take video whole (`video=native`) must be one that can, under a graph that sends
    a video; otherwise a ValueError in one line, before any call."""
    from kinegraph.agents.video import NATIVE_VIDEO_PROVIDERS, video_input

    config, spec = plan.config, plan.graph
    asked = [(plan.default_model, config.model_options.get("video"))]
    asked += [(named.model, named.options.get("video")) for named in config.roles.values()]
    for model, video in asked:
        if video is None or model is None:
            continue
        provider = plan.provider(model)
        if video_input(model, str(video), native=provider in NATIVE_VIDEO_PROVIDERS) == "native":
            if not spec.takes_video:
                takers = ", ".join(n for n in graphs.names() if graphs.get(n).takes_video)
                raise ValueError(
                    f"graph {spec.name} sends frames, not a video, so {model} cannot take it whole "
                    f"(video=native works with: {takers})"
                )


def tool_batches(config: RunConfig) -> ToolBatches:
    """The run's GPU-tool batching stage on `config.device`; a CUDA device that is absent is refused."""
    if config.device.startswith("cuda"):
        from kinegraph.tools.gpu_flow import resolve_device

        resolve_device(config.device)
    return ToolBatches(config.device)


def make_backend(plan: RunPlan, cache: Any = None) -> Backend:
    """The backend of `--model` (`cache`: the run's response cache unless given, False for none), sending
    the run's seed where its provider takes one."""
    from kinegraph.agents import get_backend

    config = plan.config
    if cache is None:
        cache = config.cache if config.use_cache else False
    model: str = config.model  # type: ignore[assignment]
    return get_backend(
        model, base_url=config.base_url, cache=cache, **backend_options(plan, model, config.model_options)
    )


def make_role_backends(plan: RunPlan, cache: Any = None) -> dict[str, Backend]:
    """One backend per role named with `--role`, each with its own options (and the run's seed), limits
    and usage; they share the run's response cache (its key holds the provider and model, so each role
    has its own entries)."""
    from kinegraph.agents import get_backend

    config = plan.config
    if cache is None:
        cache = config.cache if config.use_cache else False
    return {
        role: get_backend(
            named.model,
            base_url=named.base_url,
            cache=cache,
            **backend_options(plan, named.model, named.options),
        )
        for role, named in config.roles.items()
    }


def role_limiters(config: RunConfig) -> dict[str, asyncio.Semaphore]:
    """A call limit of `--concurrency` for each named role, so one role's calls never queue behind
    another's (the default backend keeps the run-wide one)."""
    return {role: asyncio.Semaphore(max(1, config.concurrency)) for role in config.roles}
