"""Sweeps: benchmarks x graphs x models x options from one YAML file, one run directory per combination.

```yaml
benchmarks:                      # name -> its files (paths relative to this file)
  egodyn: {data: ./egodyn, limit: 280}
  quantiphy: {data: ./quantiphy, subset: {dimension: 2D}}   # as --subset; ids: a file beside this one
  tad: {data: ./tad, limit: 2, limit_per: task}   # as --limit-per: 2 scenes per task
graphs:                          # a name, or graph + options (+ benchmarks)
  - egodyn.vision
  - graph: egodyn.trajectory
    options: {encoding: [summary, timeseries]}   # a list is a grid axis: one run per value
models: [vllm:qwen2.5-vl-7b, {model: openai:gpt-4o}]   # a mapping may add its own base_url
# and model roles: {model: vllm:internvl3-8b, roles: {answerer: vllm:qwen2.5-14b-instruct-1m}}
options: {}                      # a grid applied to every graph (each graph's own options win)
run: {concurrency: 16, base_url: http://gpu-box:8000/v1, cache: ./cache.sqlite}
ray: {shard_groups: 2}           # used with --ray
pairs: first                     # the report, as `compare --pairs`: first | all | 2x2
```

A model entry's `options` are its backend options (as `run --model-option`: `{model: scripted:x,
options: {responses: [a, b]}}`). Its `roles` (a model spec, or `{model, base_url, options}`) go to the
graphs that have those roles; a role no graph of the sweep has, or a graph left without a role it
needs, is refused.
A registered graph runs on the benchmark its name starts with (`egodyn.vision` -> egodyn); a user graph
(`pkg.module:build`) on every benchmark unless it lists `benchmarks`. A VLM-free graph runs once, not
once per model. Pass a list-valued option as a one-element list of lists (`[[1, 2]]`).
Runs land in `OUT/<benchmark>/<graph>[__option=value...][__model]/`; rerunning resumes each of them.
`pairs` sets what each benchmark's report compares: every run with the first (`first`), also every
pair with Holm-adjusted p-values (`all`), or its four runs in file order as a 2x2 design (`2x2`).
"""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from kinegraph.errors import DataError
from kinegraph.graphs import graph_spec
from kinegraph.registry import UnknownEntryError
from kinegraph.report.compare import Pairs
from kinegraph.subsets import check_keys, resolve_id_files
from kinegraph.suites import suites
from kinegraph.types import RoleModel, RunConfig
from kinegraph.yaml_files import read_yaml

#: RunConfig fields a sweep's `run:` section may set (the rest come from the grid).
RUN_FIELDS = {"concurrency", "base_url", "cache", "use_cache", "max_cost_usd", "retry_errors", "seed"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BenchmarkEntry(_Strict):
    data: str
    limit: int | None = Field(default=None, ge=1)
    #: as `--limit-per`: `limit` groups per value of this subset key (a stratified limit)
    limit_per: str | None = None
    loader_options: dict[str, Any] = Field(default_factory=dict)
    #: as `--subset`: key -> a value or a list of values (`ids`: id files relative to the sweep file)
    subset: dict[str, list[str]] = Field(default_factory=dict)

    @field_validator("subset", mode="before")
    @classmethod
    def _subset_values(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        listed = {k: v if isinstance(v, list) else [v] for k, v in value.items()}
        # YAML reads a numeric id as a number; a value is compared as text
        return {k: [str(x) if type(x) is int else x for x in v] for k, v in listed.items()}


class GraphEntry(_Strict):
    graph: str
    options: dict[str, Any] = Field(default_factory=dict)
    benchmarks: list[str] | None = None


class ModelEntry(_Strict):
    model: str
    base_url: str | None = None
    #: backend options, as `run --model-option key=value`
    options: dict[str, Any] = Field(default_factory=dict)
    roles: dict[str, RoleModel] = Field(default_factory=dict)

    @field_validator("roles", mode="before")
    @classmethod
    def _role_specs(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        return {role: {"model": m} if isinstance(m, str) else m for role, m in value.items()}


class SweepSpec(_Strict):
    """A parsed sweep file (see the module docstring)."""

    benchmarks: dict[str, BenchmarkEntry] = Field(min_length=1)
    graphs: list[GraphEntry] = Field(min_length=1)
    models: list[ModelEntry] = Field(default_factory=list)
    options: dict[str, Any] = Field(default_factory=dict)
    run: dict[str, Any] = Field(default_factory=dict)
    ray: dict[str, Any] = Field(default_factory=dict)
    pairs: Pairs = "first"

    @field_validator("graphs", mode="before")
    @classmethod
    def _graph_names(cls, value: Any) -> Any:
        return (
            [{"graph": g} if isinstance(g, str) else g for g in value] if isinstance(value, list) else value
        )

    @field_validator("models", mode="before")
    @classmethod
    def _model_names(cls, value: Any) -> Any:
        return (
            [{"model": m} if isinstance(m, str) else m for m in value] if isinstance(value, list) else value
        )

    @field_validator("run")
    @classmethod
    def _run_fields(cls, value: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(value) - RUN_FIELDS)
        if unknown:
            raise ValueError(f"unknown run settings {unknown}; allowed: {sorted(RUN_FIELDS)}")
        return value


class PlannedRun(BaseModel):
    """One combination of the sweep: its name, benchmark and the run's config."""

    name: str
    benchmark: str
    config: RunConfig


def load_sweep(path: str | Path) -> SweepSpec:
    """Parse and check a sweep file; data and cache paths become relative to the file's folder."""
    path = Path(path)
    if not path.exists():
        raise DataError("sweep file not found", path=path)
    raw = read_yaml(path)
    if not isinstance(raw, dict):
        raise DataError("a sweep file is a mapping with benchmarks, graphs and models", path=path)
    try:
        spec = SweepSpec.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise DataError(first["msg"], path=path, field=field) from None
    base = path.parent
    for entry in spec.benchmarks.values():
        entry.data = str((base / entry.data).resolve())
        entry.subset = resolve_id_files(entry.subset, base)
    if spec.run.get("cache"):
        spec.run["cache"] = str((base / spec.run["cache"]).resolve())
    return spec


#: The most runs one sweep file may plan; a few hundred bytes of grid axes can otherwise name billions.
MAX_SWEEP_RUNS = 10_000


def option_grid(options: dict[str, Any]) -> list[dict[str, Any]]:
    """Every combination of the list-valued options (scalars are fixed): {a: [1, 2], b: x} -> 2 dicts.

    ValueError, before any combination is made, when there would be more than MAX_SWEEP_RUNS."""
    keys = sorted(options)
    axes = [v if isinstance(v, list) else [v] for v in (options[k] for k in keys)]
    n = math.prod(len(axis) for axis in axes)
    if n > MAX_SWEEP_RUNS:
        sizes = " x ".join(str(len(axis)) for axis in axes if len(axis) != 1)
        raise ValueError(f"the option grid has {n:,} combinations ({sizes}); the limit is {MAX_SWEEP_RUNS:,}")
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*axes)]


def run_name(
    graph: str, options: dict[str, Any], model: str | None, roles: dict[str, RoleModel] | None = None
) -> str:
    """A folder name for one combination: graph, option=value pairs, model, named roles; filesystem-safe."""
    parts = [graph, *(f"{k}={v}" for k, v in sorted(options.items()))]
    if model:
        parts.append(model)
    parts += [f"{role}={named.model}" for role, named in sorted((roles or {}).items())]
    return "__".join(re.sub(r"[^A-Za-z0-9._=+-]", "-", str(p)) for p in parts)


def graph_benchmarks(entry: GraphEntry, spec: SweepSpec, path: str | Path) -> list[str]:
    """The benchmarks a graph runs on: its own list, its name's family, or (user graphs) all of them."""
    if entry.benchmarks is not None:
        unknown = [b for b in entry.benchmarks if b not in spec.benchmarks]
        if unknown:
            raise DataError(
                f"{entry.graph}: benchmarks {unknown} are not in the sweep", path=path, field="graphs"
            )
        return entry.benchmarks
    if ":" in entry.graph:
        return list(spec.benchmarks)
    family = entry.graph.split(".", 1)[0]
    if family not in spec.benchmarks:
        raise DataError(
            f"{entry.graph} is a {family} graph but the sweep has no {family} benchmark",
            path=path,
            field="graphs",
        )
    return [family]


def check_subset(benchmark: str, entry: BenchmarkEntry, path: str | Path) -> None:
    """A subset key the benchmark does not declare is refused before the first run (values need the data)."""
    if not entry.subset:
        return
    try:
        check_keys(entry.subset, suites.get(benchmark).subset_keys, benchmark)
    except (UnknownEntryError, ValueError) as exc:
        raise DataError(str(exc), path=path, field=f"benchmarks.{benchmark}.subset") from None


def expand(spec: SweepSpec, out_dir: str | Path, path: str | Path = "<sweep>") -> list[PlannedRun]:
    """Every run of the sweep, in file order: graphs x option values x models, per benchmark."""
    out_dir = Path(out_dir)
    runs: list[PlannedRun] = []
    graph_roles = {r for entry in spec.graphs if ":" not in entry.graph for r in _roles_of(entry.graph)}
    for j, m in enumerate(spec.models):
        unknown = sorted(set(m.roles) - graph_roles)
        if unknown:
            raise DataError(
                f"no graph of the sweep has model role {unknown[0]!r}", path=path, field=f"models.{j}"
            )
    for i, entry in enumerate(spec.graphs):
        benchmarks = graph_benchmarks(entry, spec, path)
        try:
            graph = graph_spec(entry.graph)
            for options in option_grid({**spec.options, **entry.options}):
                graph.check_options(options)  # refused here, before the first run starts
        except (UnknownEntryError, ValueError) as exc:
            raise DataError(str(exc), path=path, field=f"graphs.{i}") from None
        if graph.needs_model and not spec.models:
            raise DataError(
                f"{entry.graph} needs a model and the sweep lists none", path=path, field="models"
            )
        models: list[ModelEntry | None] = list(spec.models) if graph.needs_model else [None]
        for benchmark in benchmarks:
            bench = spec.benchmarks[benchmark]
            check_subset(benchmark, bench, path)
            for options in option_grid({**spec.options, **entry.options}):
                for model in models:
                    roles = {
                        r: m for r, m in (model.roles if model else {}).items() if r in graph.model_roles
                    }
                    try:
                        graph.resolve_roles(model.model if model else None, roles)
                    except ValueError as exc:
                        raise DataError(str(exc), path=path, field=f"graphs.{i}") from None
                    name = run_name(entry.graph, options, model.model if model else None, roles)
                    settings = dict(spec.run)
                    if model is not None and model.base_url:
                        settings["base_url"] = model.base_url
                    try:
                        config = RunConfig(
                            benchmark=benchmark,
                            graph=entry.graph,
                            model=model.model if model else None,
                            data=bench.data,
                            out_dir=str(out_dir / benchmark / name),
                            limit=bench.limit,
                            limit_per=bench.limit_per,
                            subset=bench.subset,
                            options=options,
                            loader_options=bench.loader_options,
                            roles=roles,
                            model_options=model.options if model else {},
                            **settings,
                        )
                    except ValidationError as exc:
                        first = exc.errors()[0]
                        raise DataError(first["msg"], path=path, field=f"run.{first['loc'][0]}") from None
                    planned = PlannedRun(name=name, benchmark=benchmark, config=config)
                    if len(runs) >= MAX_SWEEP_RUNS:
                        raise DataError(
                            f"plans more than the limit of {MAX_SWEEP_RUNS:,} runs", path=path, field="graphs"
                        )
                    if model is not None and set(model.roles) - set(roles) and planned in runs:
                        continue  # model entries that differ only in roles this graph does not have
                    runs.append(planned)
    if spec.pairs == "2x2":
        for benchmark in spec.benchmarks:
            n = sum(r.benchmark == benchmark for r in runs)
            if n != 4:
                raise DataError(
                    f"pairs 2x2 needs 4 runs per benchmark (neither, A, B, both); {benchmark} has {n}",
                    path=path,
                    field="pairs",
                )
    seen: set[str] = set()
    for r in runs:
        if r.config.out_dir in seen:
            raise DataError(
                f"two combinations share the run directory {r.config.out_dir}", path=path, field="graphs"
            )
        seen.add(r.config.out_dir)
    return runs


def _roles_of(graph: str) -> tuple[str, ...]:
    """The model roles of a registered graph (none when the name is unknown: refused later, per entry)."""
    try:
        return graph_spec(graph).model_roles
    except (UnknownEntryError, ValueError):
        return ()
