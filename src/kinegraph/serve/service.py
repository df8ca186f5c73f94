"""Answer one question with one served graph: validate options, build the sample, run, map the outcome.

A request is a group of one sample; the graph runs exactly as in `kinegraph run` (same nodes, prompts and
official parser), with the app-wide backend and model-call limit in the runtime context. Compiled graphs
are kept per (graph, options).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import tempfile
import time
import typing
import uuid
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from kinegraph.graphs import graphs, resolve_builder
from kinegraph.graphs.state import GraphContext
from kinegraph.run.invoke import invoke_group
from kinegraph.serve.errors import ServeError
from kinegraph.serve.inputs import Uploads, build_media, trajectory_context
from kinegraph.serve.schemas import GraphInfo, GraphOption, QARequest, QAResponse
from kinegraph.serve.settings import ServeSettings
from kinegraph.types import FrameRecord, Prediction, Sample, Status

log = logging.getLogger("kinegraph.serve")

# Graphs that read the ego trajectory: without one they would answer from an all-zero summary.
COMPILED_CACHE_SIZE = 64
FRAME_OPTIONS = ("num_frames",)

_STATUS_HTTP = {
    Status.input_error: (422, "invalid_request_error"),
    Status.api_error: (502, "model_error"),
    Status.budget_exceeded: (502, "model_error"),
    Status.timeout: (504, "timeout"),
}


class ServedGraph:
    """A builder, its option types and what it needs."""

    def __init__(self, name: str, builder: Callable[..., Any]) -> None:
        self.name = name
        self.builder = builder
        self.needs_model: bool = getattr(builder, "needs_model", True)
        self.needs_trajectory: bool = getattr(builder, "needs_trajectory", False)
        try:
            hints = typing.get_type_hints(builder)
        except (NameError, TypeError):  # annotations that do not resolve: options go untyped
            hints = {}
        self.parameters = {
            p.name: (hints.get(p.name, Any), p.default)
            for p in inspect.signature(builder).parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        }

    def info(self, has_model: bool) -> GraphInfo:
        doc = inspect.getdoc(self.builder) or ""
        options = [
            GraphOption(name=n, type=_type_name(t), default=_json_default(d))
            for n, (t, d) in self.parameters.items()
        ]
        return GraphInfo(
            name=self.name,
            description=doc.splitlines()[0] if doc else "",
            needs_model=self.needs_model,
            needs_trajectory=self.needs_trajectory,
            available=has_model or not self.needs_model,
            options=options,
        )

    def validate_options(self, options: dict[str, Any], max_frames: int) -> dict[str, Any]:
        """Options typed by the builder's annotations; integers must be >= 1, frame counts <= max_frames."""
        out = {}
        for name, value in options.items():
            if name not in self.parameters:
                known = ", ".join(self.parameters) or "none"
                raise ServeError(422, f"graph_options: {self.name} has no option {name!r} (options: {known})")
            try:
                out[name] = TypeAdapter(self.parameters[name][0]).validate_python(value, strict=True)
            except (ValidationError, TypeError):
                expected = _type_name(self.parameters[name][0])
                raise ServeError(422, f"graph_options.{name}: expected {expected}, got {value!r}") from None
            if isinstance(out[name], int) and not isinstance(out[name], bool):
                if out[name] < 1 or (name in FRAME_OPTIONS and out[name] > max_frames):
                    upper = max_frames if name in FRAME_OPTIONS else "any"
                    raise ServeError(422, f"graph_options.{name}: must be between 1 and {upper}")
        return out


def _json_default(value: Any) -> Any:
    if value is inspect.Parameter.empty:
        return None
    return value if isinstance(value, bool | int | float | str | type(None)) else repr(value)


def _type_name(annotation: Any) -> str:
    return annotation.__name__ if isinstance(annotation, type) else str(annotation).replace("typing.", "")


class QAService:
    """The served graphs, the backend, and the compiled-graph cache of one app."""

    def __init__(self, settings: ServeSettings, backend: Any = None) -> None:
        self.settings = settings
        names = settings.graphs or tuple(graphs.names())
        self.graphs = {name: ServedGraph(name, resolve_builder(name)) for name in names}
        if settings.default_graph not in self.graphs:
            raise ValueError(f"default graph {settings.default_graph!r} is not served ({', '.join(names)})")
        if backend is None and settings.model is not None:
            from kinegraph.agents import get_backend

            backend = get_backend(settings.model, base_url=settings.base_url, cache=settings.cache or False)
        self.backend = backend
        self._compiled: OrderedDict[tuple, Any] = OrderedDict()
        self._model_slots: asyncio.Semaphore | None = None

    def graph_infos(self) -> list[GraphInfo]:
        return [g.info(self.backend is not None) for g in self.graphs.values()]

    def served(self, name: str | None) -> ServedGraph:
        name = name or self.settings.default_graph
        if name not in self.graphs:
            raise ServeError(404, f"unknown graph {name!r}; served: {', '.join(self.graphs)}", "not_found")
        graph = self.graphs[name]
        if graph.needs_model and self.backend is None:
            raise ServeError(
                503, f"graph {name!r} needs a model; start the server with --model", "service_unavailable"
            )
        return graph

    def compiled(self, graph: ServedGraph, options: dict[str, Any]) -> Any:
        key = (graph.name, tuple(sorted(options.items())))
        if key in self._compiled:
            self._compiled.move_to_end(key)
            return self._compiled[key]
        try:
            compiled = graph.builder(**options)
        except (TypeError, ValueError) as exc:
            raise ServeError(422, f"graph_options: {exc}") from None
        self._compiled[key] = compiled
        if len(self._compiled) > COMPILED_CACHE_SIZE:
            self._compiled.popitem(last=False)
        return compiled

    async def answer(self, request: QARequest, uploads: Uploads | None = None) -> QAResponse:
        """Run the request's graph on its inputs within the request timeout."""
        start = time.perf_counter()
        graph = self.served(request.graph)
        options = graph.validate_options(request.graph_options, self.settings.max_frames)
        if graph.needs_trajectory and request.trajectory is None:
            raise ServeError(422, f"graph {graph.name!r} needs a trajectory")
        request_id = request.request_id or uuid.uuid4().hex
        try:
            async with asyncio.timeout(self.settings.request_timeout_s):
                prediction = await self._run(graph, options, request, request_id, uploads or Uploads())
        except TimeoutError:
            raise ServeError(
                504, f"no answer within {self.settings.request_timeout_s:g} s (request timeout)", "timeout"
            ) from None
        if prediction.status in _STATUS_HTTP:
            status, kind = _STATUS_HTTP[prediction.status]
            raise ServeError(status, prediction.error or str(prediction.status), kind)
        if prediction.status == Status.graph_error:
            log.error("graph %s failed on request %s: %s", graph.name, request_id, prediction.error)
            raise ServeError(
                500, f"the graph failed on this request (request_id {request_id})", "server_error"
            )
        return QAResponse(
            request_id=request_id,
            graph=graph.name,
            model=self.settings.model if graph.needs_model else None,
            answer=prediction.answer,
            raw=prediction.raw,
            status=prediction.status,
            error=prediction.error,
            trace=prediction.trace,
            usage=prediction.usage,
            frames=prediction.frames,
            latency_s=time.perf_counter() - start,
        )

    def _inputs(self, request: QARequest, uploads: Uploads, workdir: Path) -> tuple[Any, dict[str, Any]]:
        media = build_media(request, uploads, self.settings, workdir)
        context = trajectory_context(request.trajectory, workdir) if request.trajectory else {}
        return media, context

    def _public_frames(self, frames: FrameRecord | None, workdir: Path) -> FrameRecord | None:
        """The frame record with its source as the client knows it: `upload`, or relative to the data root."""
        if frames is None or frames.source is None:
            return frames
        source = Path(frames.source)
        root = self.settings.data_root.resolve() if self.settings.data_root else None
        if source.is_relative_to(workdir):
            name = "upload"
        elif root is not None and source.is_relative_to(root):
            name = str(source.relative_to(root))
        else:
            name = None
        return frames.model_copy(update={"source": name})

    def _public_text(self, text: str | None, workdir: Path) -> str | None:
        """An error message without server paths: uploads by name, references relative to the data root."""
        if text is None:
            return None
        text = text.replace(f"{workdir}/", "upload:")
        if self.settings.data_root is not None:
            text = text.replace(f"{self.settings.data_root.resolve()}/", "")
        return text

    async def _run(
        self,
        graph: ServedGraph,
        options: dict[str, Any],
        request: QARequest,
        request_id: str,
        uploads: Uploads,
    ) -> Prediction:
        compiled = self.compiled(graph, options)
        if self._model_slots is None:
            self._model_slots = asyncio.Semaphore(self.settings.model_concurrency)
        with tempfile.TemporaryDirectory(prefix="kinegraph-serve-", ignore_cleanup_errors=True) as tmp:
            workdir = Path(tmp)
            media, context = await asyncio.to_thread(self._inputs, request, uploads, workdir)
            sample = Sample(
                id=request_id,
                benchmark=graph.name.split(".", 1)[0],
                group=request_id,
                question=request.question,
                options=request.options,
                media=media,
                context=context,
                metadata={"answer_type": "multiclass" if request.options else "numeric"},
            )
            runtime = GraphContext(
                backend=self.backend if graph.needs_model else None, limiter=self._model_slots
            )
            (prediction,) = await invoke_group(compiled, [sample], runtime)
            if prediction.status == Status.graph_error:
                log.error("graph %s failed on request %s: %s", graph.name, request_id, prediction.error)
            return prediction.model_copy(
                update={
                    "frames": self._public_frames(prediction.frames, workdir),
                    "error": self._public_text(prediction.error, workdir),
                }
            )
