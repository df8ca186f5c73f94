"""Compiled shipped graphs as module attributes, for `langgraph dev` / LangGraph Studio (see langgraph.json).

Compiled without a checkpointer; the backend arrives in the runtime context (`GraphContext`).
"""

from __future__ import annotations

from kinegraph.graphs import egodyn, egodyn_calls, egodyn_tools, quantiphy, quantiphy_tools

egodyn_vision = egodyn.build_vision()
egodyn_trajectory = egodyn.build_trajectory()
egodyn_tools_graph = egodyn.build_tools()
egodyn_tool_calls = egodyn_calls.build_tool_calls()
egodyn_vo = egodyn_tools.build_vo()
egodyn_oracle = egodyn_tools.build_oracle()
quantiphy_zero_shot = quantiphy.build_zero_shot()
quantiphy_cot = quantiphy.build_cot()
quantiphy_tools_graph = quantiphy_tools.build_tools()
quantiphy_hybrid = quantiphy_tools.build_hybrid()
