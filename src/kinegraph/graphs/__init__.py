"""LangGraph graphs, one package per benchmark family, and the registry of graphs (`GraphSpec` entries).

`graph_spec(name)` gives a registered graph's spec, or a user's own builder's for `package.module:build`;
`spec.build(options)` checks the options against the builder's signature and compiles the graph.
"""

from __future__ import annotations

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


__all__ = ["GraphSpec", "OptionSpec", "graph_spec", "graphs"]
