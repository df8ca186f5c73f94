"""kinegraph: do deterministic physical tools make VLMs reason better about motion?

The public face, `import kinegraph as kg` (docs/python.md): `kg.run_graph` runs a graph over a benchmark's
files or a list of samples (also inside a notebook's running event loop), `kg.load_run` / `kg.runs_frame`
read runs as pandas frames, `kg.compare` puts runs side by side, and `kg.graph_spec` / `kg.describe` /
the graph building blocks compose new graphs. Names are imported on first use (`kinegraph --help` stays fast).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name -> the module that defines it (imported on first access)
_PUBLIC = {
    "run_graph": "kinegraph.api.running",
    "synth": "kinegraph.api.running",
    "load_run": "kinegraph.api.frames",
    "runs_frame": "kinegraph.api.frames",
    "Run": "kinegraph.api.frames",
    "compare": "kinegraph.report",
    "write_report": "kinegraph.report",
    "graph_spec": "kinegraph.graphs",
    "graph_names": "kinegraph.api.running",
    "describe": "kinegraph.listing",
    "get_backend": "kinegraph.agents.providers",
    "Sample": "kinegraph.types",
    "Prediction": "kinegraph.types",
    "GraphContext": "kinegraph.graphs.state",
    "GroupState": "kinegraph.graphs.state",
    "decode_frames": "kinegraph.graphs.nodes",
    "encode_frames": "kinegraph.graphs.nodes",
    "prediction": "kinegraph.graphs.nodes",
    "route_on_error": "kinegraph.graphs.nodes",
    "record_group_error": "kinegraph.graphs.nodes",
}

__all__ = [
    "__version__",
    "run_graph",
    "synth",
    "load_run",
    "runs_frame",
    "Run",
    "compare",
    "write_report",
    "graph_spec",
    "graph_names",
    "describe",
    "get_backend",
    "Sample",
    "Prediction",
    "GraphContext",
    "GroupState",
    "decode_frames",
    "encode_frames",
    "prediction",
    "route_on_error",
    "record_group_error",
]

if TYPE_CHECKING:
    from kinegraph.agents.providers import get_backend
    from kinegraph.api.frames import Run, load_run, runs_frame
    from kinegraph.api.running import graph_names, run_graph, synth
    from kinegraph.graphs import graph_spec
    from kinegraph.graphs.nodes import (
        decode_frames,
        encode_frames,
        prediction,
        record_group_error,
        route_on_error,
    )
    from kinegraph.graphs.state import GraphContext, GroupState
    from kinegraph.listing import describe
    from kinegraph.report import compare, write_report
    from kinegraph.types import Prediction, Sample


def __getattr__(name: str) -> Any:
    """A public name, imported from its module the first time it is used."""
    if name not in _PUBLIC:
        raise AttributeError(f"module 'kinegraph' has no attribute {name!r}")
    value = getattr(importlib.import_module(_PUBLIC[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
