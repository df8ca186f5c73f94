"""A run resolved once: its graph's spec, its suite, the model filling each of the graph's roles and every
model spec parsed, built from the `RunConfig` before anything else and passed to every stage after it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from kinegraph.agents.protocol import Backend
from kinegraph.agents.providers import parse_model_spec
from kinegraph.graphs import GraphSpec, graph_spec
from kinegraph.suites import Suite, suites
from kinegraph.types import RunConfig


@dataclass(frozen=True)
class RunPlan:
    """What a run is: the config (the run's seed in the graph's options), the graph, the benchmark's suite,
    `role_models` (role -> `PROVIDER:MODEL` filling it) and `models` (each spec -> provider, model)."""

    config: RunConfig
    graph: GraphSpec
    suite: Suite
    role_models: Mapping[str, str]
    models: Mapping[str, tuple[str, str]]

    @property
    def default_model(self) -> str | None:
        """The model of the roles no `--role` names (`--model`, or the backend given in process); None
        when every role has its own or the graph runs no model."""
        return next((m for role, m in self.role_models.items() if role not in self.config.roles), None)

    @property
    def needs_default_model(self) -> bool:
        """Whether some role runs on `--model` (no `--role` names its own)."""
        return self.default_model is not None

    def provider(self, spec: str) -> str:
        """The provider of one of the run's model specs."""
        return self.models[spec][0]


def plan_run(config: RunConfig, default: Backend | None = None) -> RunPlan:
    """The plan of `config`; `default`, a backend given in process, stands for `--model`. An unknown graph
    or benchmark, a malformed model spec, or a role the graph lacks or cannot fill is refused in one line."""
    graph = graph_spec(config.graph)
    suite = suites.get(config.benchmark)
    config = with_run_seed(config, graph)
    model = config.model if default is None else f"{default.provider}:{default.model}"
    role_models = graph.resolve_roles(model, config.roles)
    specs = {*role_models.values(), *(named.model for named in config.roles.values())}
    models = {spec: parse_model_spec(spec) for spec in sorted(specs)}
    return RunPlan(config, graph, suite, MappingProxyType(role_models), MappingProxyType(models))


def with_run_seed(config: RunConfig, graph: GraphSpec) -> RunConfig:
    """`config` with the graph's `seed` option set to the run's seed when the graph takes one, the run has
    a seed and `-O seed=` did not set it (an explicit option wins)."""
    if config.seed is None or "seed" in config.options or not takes_seed(graph):
        return config
    return config.model_copy(update={"options": {**config.options, "seed": config.seed}})


def takes_seed(graph: GraphSpec) -> bool:
    """Whether the graph's builder has a `seed` option."""
    return any(option.name == "seed" for option in graph.options)
