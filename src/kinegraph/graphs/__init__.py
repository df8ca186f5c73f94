"""LangGraph graphs, one module per benchmark family, and a registry of named graph builders.

`graphs.get(name)` returns a builder `build(**options) -> CompiledStateGraph`; a user's own graph is
`package.module:build` (see `resolve_builder`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kinegraph.registry import Registry, import_object

graphs: Registry = Registry("graph")
for _name, _target in {
    "egodyn.vision": "kinegraph.graphs.egodyn:build_vision",
    "egodyn.trajectory": "kinegraph.graphs.egodyn:build_trajectory",
    "egodyn.text_only": "kinegraph.graphs.egodyn:build_text_only",
    "egodyn.oracle": "kinegraph.graphs.egodyn_tools:build_oracle",
    "egodyn.vo": "kinegraph.graphs.egodyn_tools:build_vo",
    "egodyn.flow": "kinegraph.graphs.egodyn_tools:build_flow",
    "egodyn.gpu_flow": "kinegraph.graphs.egodyn_tools:build_gpu_flow",
    "egodyn.tools": "kinegraph.graphs.egodyn:build_tools",
    "egodyn.measured": "kinegraph.graphs.egodyn_measured:build_measured",
    "egodyn.measured_trajectory": "kinegraph.graphs.egodyn_measured:build_measured_trajectory",
    "egodyn.tool_calls": "kinegraph.graphs.egodyn_calls:build_tool_calls",
    "quantiphy.zero_shot": "kinegraph.graphs.quantiphy:build_zero_shot",
    "quantiphy.prior_only": "kinegraph.graphs.quantiphy:build_prior_only",
    "quantiphy.counterfactual": "kinegraph.graphs.quantiphy:build_counterfactual",
    "quantiphy.cot": "kinegraph.graphs.quantiphy:build_cot",
    "quantiphy.oracle_tracks": "kinegraph.graphs.quantiphy_tools:build_oracle_tracks",
    "quantiphy.tracker": "kinegraph.graphs.quantiphy_tools:build_tracker",
    "quantiphy.tools": "kinegraph.graphs.quantiphy_tools:build_tools",
    "quantiphy.hybrid": "kinegraph.graphs.quantiphy_tools:build_hybrid",
    "tad.baseline": "kinegraph.graphs.tad:build_baseline",
    "tad.blind": "kinegraph.graphs.tad:build_blind",
    "tad.ego_pose": "kinegraph.graphs.tad:build_ego_pose",
    "tad.tcogmap": "kinegraph.graphs.tad:build_tcogmap",
    "tad.tcogmap_only": "kinegraph.graphs.tad:build_tcogmap_only",
    "tad.scene_cot": "kinegraph.graphs.tad:build_scene_cot",
    "stsbench.baseline": "kinegraph.graphs.stsbench:build_baseline",
    "stsbench.tcogmap": "kinegraph.graphs.stsbench:build_tcogmap",
    "dsi.baseline": "kinegraph.graphs.dsi:build_baseline",
    "dsi.tools": "kinegraph.graphs.dsi:build_tools",
    "autodridm.baseline": "kinegraph.graphs.autodridm:build_baseline",
    "autodridm.tools": "kinegraph.graphs.autodridm:build_tools",
}.items():
    graphs.register(_name, _target)


def resolve_builder(name: str) -> Callable[..., Any]:
    """A registered graph name, or `package.module:build` for a user's own builder."""
    if name in graphs:
        return graphs.get(name)
    if ":" in name:
        return import_object(name)  # type: ignore[return-value]
    return graphs.get(name)  # raises with the list of known graphs


__all__ = ["graphs", "resolve_builder"]
