"""`kg.run_graph(...)`: run a graph over a benchmark's files or over samples from Python, notebooks included.

A notebook (Jupyter, IPython with autoawait) already runs an event loop in its thread, and a loop cannot
be started inside a running one; there the run goes on its own loop in a worker thread, and the call
returns when it is finished, as it does in a plain interpreter.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from kinegraph.api.frames import Run
from kinegraph.types import RunConfig, Sample


def run_graph(
    benchmark: str,
    graph: str,
    *,
    out: str | Path,
    data: str | Path | None = None,
    samples: Sequence[Sample] | None = None,
    model: str | None = None,
    options: dict[str, Any] | None = None,
    limit: int | None = None,
    backend: Any = None,
    progress: bool = False,
    **config: Any,
) -> Run:
    """Run (or resume) `graph` over `data` (the benchmark's files) or over `samples`, into `out`.

    `model` is PROVIDER:MODEL (`reader:text` needs no key or server); `options` are the graph's options;
    other `config` keys are `RunConfig`'s (concurrency, base_url, seed, max_cost_usd, ...). `backend`, an
    in-process backend object, stands in for `model`. Returns the finished run, read back."""
    if (data is None) == (samples is None):
        raise ValueError("give exactly one of data= (the benchmark's files) or samples= (a list of Sample)")
    run_config = RunConfig(
        benchmark=benchmark,
        graph=graph,
        out_dir=str(out),
        data=str(data) if data is not None else None,
        model=model,
        options=options or {},
        limit=limit,
        **config,
    )
    local: dict[str, Any] = {"show_progress": progress}
    if samples is not None:
        local["samples"] = list(samples)[:limit] if limit is not None else list(samples)
    if backend is not None:
        local["backend"] = backend
    _call_outside_any_loop(_execute, run_config, local)
    return Run(out)


def _execute(config: RunConfig, local: dict[str, Any]) -> None:
    from kinegraph.run import execute

    execute(config, **local)


def _call_outside_any_loop(fn: Any, *args: Any) -> Any:
    """`fn(*args)` here when no event loop runs in this thread, else in a worker thread (its own loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return fn(*args)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="kinegraph-run") as pool:
        return pool.submit(fn, *args).result()


def synth(world: str, out: str | Path, n: int = 2, seed: int = 0) -> Path:
    """Write a synthetic world with known physics in a benchmark's official format (`kinegraph synth`)."""
    from kinegraph.suites import synthetic_generator

    return Path(synthetic_generator(world)(Path(out), n=n, seed=seed))


def graph_names() -> list[str]:
    """Every registered graph's name (`kg.describe(name)` says what one does and takes)."""
    from kinegraph.graphs import graphs

    return graphs.names()
