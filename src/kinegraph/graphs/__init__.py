"""LangGraph graphs, one module per benchmark family, and the registry of graphs (`GraphSpec` entries).

`graph_spec(name)` gives a registered graph's spec, or a user's own builder's for `package.module:build`;
`spec.build(options)` checks the options against the builder's signature and compiles the graph.
"""

from __future__ import annotations

import inspect
from typing import Any

from kinegraph.graphs.catalog import SHIPPED
from kinegraph.graphs.spec import GraphSpec, OptionSpec, user_graph_spec
from kinegraph.registry import Registry

graphs: Registry[GraphSpec] = Registry("graph")
for _spec in SHIPPED:
    graphs.register(_spec.name, _spec)


def graph_spec(name: str) -> GraphSpec:
    """A registered graph's spec, or a user's builder's for `package.module:build`."""
    if name in graphs:
        return graphs.get(name)
    if ":" in name:
        return user_graph_spec(name)
    return graphs.get(name)  # raises with the list of known graphs


class _FlaggedBuilder:
    """A builder as `resolve_builder` gave it before specs: callable with its signature, the spec's
    `needs_model` / `needs_gpu` / `needs_trajectory` as attributes."""

    def __init__(self, spec: GraphSpec) -> None:
        self._builder = spec.builder
        self.__signature__ = inspect.signature(self._builder)
        self.needs_model = spec.needs_model
        self.needs_gpu = spec.needs_gpu
        self.needs_trajectory = spec.needs_trajectory

    def __call__(self, **options: Any) -> Any:
        return self._builder(**options)


def resolve_builder(name: str) -> Any:
    """Deprecated for `graph_spec`: the builder of `name`, with its spec's flags as attributes, for the
    callers (runner, Ray, sweeps) that still read them with `getattr`."""
    return _FlaggedBuilder(graph_spec(name))


__all__ = ["GraphSpec", "OptionSpec", "graph_spec", "graphs", "resolve_builder"]
