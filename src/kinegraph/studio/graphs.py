"""Every catalog graph for LangGraph Studio (`langgraph dev`, see langgraph.json), taking and giving JSON.

Each module attribute (`egodyn_oracle` for `egodyn.oracle`) is a thin outer graph: `read_input` checks
the JSON input against its family's schema (`studio.inputs`) and its files, then `run_graph` turns it
into `Sample`s (every referenced file opened by descriptor and copied into a private folder for the run,
a video asked about as its keyframes: `studio_samples`) and invokes the compiled catalog graph on them
as a subgraph, with a `GraphContext` built from configuration since Studio has no runner: the model
comes from the run's configurable `model` (and `base_url`, `roles`), else `$KINEGRAPH_MODEL` /
`$KINEGRAPH_BASE_URL`. Graphs without a model need none. The configurable `options` (`{name: value}`,
as `kinegraph run -O`) are checked by the graph's `GraphSpec` and the graph is compiled once per
distinct options.
`python -m kinegraph.studio.graphs` prints the langgraph.json these attributes make.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from typing_extensions import TypedDict  # pydantic (and so the Studio schemas) read only this on 3.11

from kinegraph.graphs import GraphSpec, graph_spec, graphs
from kinegraph.graphs.state import GraphContext
from kinegraph.media_limits import decoding_within
from kinegraph.paths import private_directory
from kinegraph.studio.inputs import (
    STUDIO_LIMITS,
    StudioInputError,
    StudioOutput,
    input_schema,
    read_samples,
)
from kinegraph.studio.keyframes import keyframe_samples
from kinegraph.types import Sample

MODEL_ENV = "KINEGRAPH_MODEL"
BASE_URL_ENV = "KINEGRAPH_BASE_URL"


class StudioState(TypedDict, total=False):
    """The outer graph's state: the JSON input, the checked samples, the JSON predictions."""

    samples: list[dict[str, Any]]
    media: dict[str, Any]
    checked: list[dict[str, Any]]  # the questions read_input checked (no media: its copies are gone)
    predictions: list[dict[str, Any]]


class StudioConfigError(ValueError):
    """The run's configuration cannot make the graph's backends (no model where one is needed)."""


def attribute_name(graph: str) -> str:
    """The module attribute (and Studio graph id) of a catalog graph: `egodyn.oracle` -> `egodyn_oracle`."""
    return graph.replace(".", "_")


def model_settings(config: RunnableConfig | None) -> dict[str, Any]:
    """`model`, `base_url` and `roles` of a run: its configurable first, then the environment."""
    configurable: Mapping[str, Any] = (config or {}).get("configurable") or {}
    roles = configurable.get("roles") or {}
    if not isinstance(roles, dict) or not all(isinstance(v, str) for v in roles.values()):
        raise StudioConfigError("configurable roles: expected an object of ROLE: PROVIDER:MODEL")
    return {
        "model": configurable.get("model") or os.environ.get(MODEL_ENV) or None,
        "base_url": configurable.get("base_url") or os.environ.get(BASE_URL_ENV) or None,
        "roles": roles,
    }


def graph_context(spec: GraphSpec, config: RunnableConfig | None) -> tuple[GraphContext, str | None]:
    """The runtime context of one Studio run and its model (None for a VLM-free graph); a one-line
    `StudioConfigError` when the graph needs a model that nothing configures."""
    from kinegraph.agents import get_backend
    from kinegraph.types import RoleModel

    if not spec.needs_model:
        return GraphContext(), None
    settings = model_settings(config)
    model, base_url = settings["model"], settings["base_url"]
    if model is None and not set(spec.model_roles) <= set(settings["roles"]):
        raise StudioConfigError(
            f"graph {spec.name} needs a model: set the configurable `model` or ${MODEL_ENV} to PROVIDER:MODEL"
        )
    named = {role: RoleModel(model=m, base_url=base_url) for role, m in settings["roles"].items()}
    try:
        spec.resolve_roles(model, named)
    except ValueError as exc:
        raise StudioConfigError(f"{exc} (in Studio: the configurable `roles`)") from None
    default = get_backend(model, base_url=base_url, cache=False) if model is not None else None
    roles = {role: get_backend(named[role].model, base_url=base_url, cache=False) for role in named}
    return GraphContext(backend=default, roles=roles), model


def graph_options(config: RunnableConfig | None) -> dict[str, Any]:
    """The builder options of a run: its configurable `options` object ({} when it has none)."""
    options = ((config or {}).get("configurable") or {}).get("options") or {}
    if not isinstance(options, dict):
        raise StudioConfigError("configurable options: expected an object of NAME: VALUE")
    return options


def compiled_graph(name: str, options: Mapping[str, Any]) -> CompiledStateGraph:
    """The catalog graph `name` built with `options`, compiled once per distinct options; a bad option
    is a one-line `StudioConfigError`, the message `kinegraph run -O` gives."""
    try:
        return _compiled(name, json.dumps(options, sort_keys=True))
    except (TypeError, ValueError) as exc:  # TypeError: a value JSON cannot hold (only from Python callers)
        raise StudioConfigError(str(exc)) from None


@functools.lru_cache(maxsize=256)
def _compiled(name: str, options_json: str) -> CompiledStateGraph:
    """`compiled_graph`'s cache, keyed by the options as JSON with sorted keys (failures are not kept)."""
    return graph_spec(name).build(json.loads(options_json))


def _given(state: StudioState) -> dict[str, Any]:
    """The input's own keys of the state (`samples`, `media`)."""
    return {key: state[key] for key in ("samples", "media") if key in state}  # type: ignore[literal-required]


def studio_samples(spec: GraphSpec, given: Mapping[str, Any], private: Path) -> list[Sample]:
    """The `Sample`s of one Studio input for `spec`: every referenced file opened by descriptor under the
    media root and copied into `private`, a video asked about as its keyframes (written there too)."""
    samples = read_samples(spec.family, given, None, private)
    return keyframe_samples(spec, samples, private / "keyframes")  # a video: its keyframes


@contextlib.asynccontextmanager
async def _private_directory_off_loop() -> AsyncIterator[Path]:
    """`private_directory`, made and removed in a worker thread: LangGraph's server refuses blocking file
    system calls on its event loop."""
    manager = private_directory(prefix="kinegraph-studio-")
    private = await asyncio.to_thread(manager.__enter__)
    try:
        yield private
    finally:
        await asyncio.to_thread(manager.__exit__, None, None, None)


def studio_graph(spec: GraphSpec) -> CompiledStateGraph:
    """The catalog graph `spec` behind JSON input and output, for Studio (built with default options
    here, so a broken builder fails the import, and with a run's own options when it gives some)."""
    compiled_graph(spec.name, {})

    def read_input(state: StudioState) -> dict[str, Any]:
        """Validate the JSON input and check its files (a sync node: it touches the file system); the
        checks read private copies of the files opened under the media root, removed afterwards."""
        with private_directory(prefix="kinegraph-studio-") as private:
            samples = read_samples(spec.family, _given(state), None, private)
        return {"checked": [s.model_dump(mode="json", exclude={"media"}) for s in samples]}

    async def run_graph(state: StudioState, config: RunnableConfig) -> dict[str, Any]:
        """Invoke the catalog graph on the samples; every sample comes back as a JSON prediction."""
        from kinegraph.run.invoke import invoke_group

        inner = await asyncio.to_thread(compiled_graph, spec.name, graph_options(config))
        context, model = await asyncio.to_thread(graph_context, spec, config)
        try:
            async with _private_directory_off_loop() as private:
                # the input's files opened again by descriptor: the graph decodes what was opened
                samples = await asyncio.to_thread(studio_samples, spec, _given(state), private)
                with decoding_within(STUDIO_LIMITS):  # serve's --max-frames and pixel limit while decoding
                    predictions = await invoke_group(
                        inner, samples, context, stamp={"graph": spec.name, "model": model}
                    )
        finally:
            for backend in {id(b): b for b in [context.backend, *context.roles.values()] if b}.values():
                await backend.aclose()  # type: ignore[attr-defined]
        return {"predictions": [p.model_dump(mode="json") for p in predictions]}

    graph = StateGraph(StudioState, input_schema=input_schema(spec.family), output_schema=StudioOutput)
    graph.add_node("read_input", read_input)
    graph.add_node("run_graph", run_graph)
    graph.add_edge(START, "read_input")
    graph.add_edge("read_input", "run_graph")
    graph.add_edge("run_graph", END)
    return graph.compile(name=spec.name)


def langgraph_config() -> dict[str, Any]:
    """The langgraph.json that serves every catalog graph from this module's attributes."""
    return {
        "dependencies": ["."],
        "python_version": "3.11",
        "graphs": {
            attribute_name(name): {
                "path": f"kinegraph.studio.graphs:{attribute_name(name)}",
                "description": graphs.get(name).description,
            }
            for name in graphs.names()
        },
    }


for _name in graphs.names():
    globals()[attribute_name(_name)] = studio_graph(graphs.get(_name))

__all__ = [
    "StudioConfigError",
    "StudioInputError",
    "attribute_name",
    "compiled_graph",
    "graph_context",
    "graph_options",
    "langgraph_config",
    "studio_graph",
]

if __name__ == "__main__":
    print(json.dumps(langgraph_config(), indent=2, ensure_ascii=False))
