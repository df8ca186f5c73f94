"""What a run needs before its first group: samples, the compiled graph, the model backend, GPU batching."""

from __future__ import annotations

from typing import Any

from kinegraph.agents.protocol import Backend
from kinegraph.data.check import preflight
from kinegraph.graphs import graph_spec
from kinegraph.graphs.tool_batches import ToolBatches
from kinegraph.subsets import select
from kinegraph.suites import suites
from kinegraph.types import RunConfig, Sample


def load_samples(config: RunConfig) -> list[Sample]:
    suite = suites.get(config.benchmark)
    if config.data is None:
        raise ValueError(f"--data is required: the {config.benchmark} files to run on")
    preflight(config.benchmark, config.data)  # missing files, a Hub cache root: one line, before any call
    samples = suite.load(config.data, **config.loader_options)
    if config.subset:
        samples = select(samples, config.subset, suite.subset_keys, config.benchmark)
    graph_spec(config.graph).check_fields(samples, config.data)  # a missing column: one line, before any call
    if config.limit is not None:
        samples = samples[: config.limit]
    return samples


def build_graph(config: RunConfig) -> tuple[Any, bool]:
    """The compiled graph and whether it needs a model; options the graph does not take, or of the wrong
    type, are refused in one line (see `GraphSpec.check_options`)."""
    spec = graph_spec(config.graph)
    return spec.build(config.options), spec.needs_model


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
