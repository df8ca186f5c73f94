"""The FastAPI app: `/v1/qa`, the OpenAI-compatible `/v1/chat/completions`, graph listing, health, metrics.

`create_app(settings)` builds one app with its own backend, metrics and limits; `RequestGuard` checks
auth, body size and concurrency before a route runs (a streamed answer holds its slot until its last
event). Errors are JSON (`ErrorBody`), never tracebacks.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from fastapi.security import HTTPBearer
from pydantic import ValidationError
from pydantic_core import from_json
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException

from kinegraph import __version__
from kinegraph.serve.chat import (
    ChatCompletion,
    ChatCompletionRequest,
    ModelCard,
    ModelList,
    completion,
    stream_events,
    to_qa_request,
)
from kinegraph.serve.docs_page import add_offline_docs
from kinegraph.serve.errors import ErrorBody, ServeError, error_body
from kinegraph.serve.guard import RequestGuard
from kinegraph.serve.inputs import Uploads
from kinegraph.serve.metrics import CountRequests, ServeMetrics
from kinegraph.serve.openapi import QA_REQUEST_BODY, QA_STREAM_RESPONSE, STREAM_HELP, add_schemas
from kinegraph.serve.schemas import GraphList, Health, QARequest, QAResponse
from kinegraph.serve.service import PreparedRequest, QAService
from kinegraph.serve.settings import ServeSettings
from kinegraph.serve.stream import OnProgress, qa_events

log = logging.getLogger("kinegraph.serve")

# Documents the bearer scheme in OpenAPI; RequestGuard enforces it before the body is read.
bearer = HTTPBearer(auto_error=False, description="An API key from KINEGRAPH_API_KEYS or the keys file.")
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody, "description": text}
    for code, text in {
        400: "Bad request",
        401: "Missing or invalid API key",
        403: "Forbidden (path outside the data root; non-loopback client without keys)",
        404: "Unknown graph or file",
        413: "Body too large",
        415: "Not an accepted image or video",
        422: "Invalid input",
        429: "Concurrency limit reached (see Retry-After)",
        502: "The model backend failed",
        503: "The graph needs a model and none is configured",
        504: "Request timeout",
    }.items()
}
MULTIPART_FIELDS = (
    "question",
    "graph",
    "request_id",
    "video_path",
    "fps",
    "nuscenes_scene",
    "task",
    "question_id",
)
MULTIPART_JSON_FIELDS = ("trajectory", "graph_options", "ego_poses", "keysegments", "prior")


def create_app(settings: ServeSettings, *, backend: Any = None) -> FastAPI:
    """A ready app; `backend` overrides the one `settings.model` names (tests, embedding)."""
    service = QAService(settings, backend)
    metrics = ServeMetrics()
    app = FastAPI(
        title="kinegraph driving QA",
        version=__version__,
        description="Ask a driving question about frames or a video; a kinegraph graph answers with tools.",
        docs_url=None,  # served offline by add_offline_docs; ReDoc is left out (its script is not shipped)
        redoc_url=None,
    )
    add_offline_docs(app)
    app.state.service = service
    app.state.metrics = metrics
    _add_error_handlers(app)
    add_schemas(app)
    auth = [Depends(bearer)]

    @app.get("/healthz", response_model=Health, tags=["ops"])
    async def healthz() -> Health:
        return Health(
            status="ok", model=settings.model, graphs=len(service.graphs), auth=settings.auth_enabled
        )

    @app.get(
        "/metrics", tags=["ops"], response_class=Response, responses={200: {"content": {"text/plain": {}}}}
    )
    async def prometheus_metrics() -> Response:
        return Response(metrics.render(), media_type=metrics.content_type)

    @app.get("/v1/graphs", response_model=GraphList, dependencies=auth, responses=ERRORS, tags=["qa"])
    async def list_graphs() -> GraphList:
        return GraphList(
            default_graph=settings.default_graph, model=settings.model, graphs=service.graph_infos()
        )

    @app.post(
        "/v1/qa",
        response_model=QAResponse,
        dependencies=auth,
        responses={**ERRORS, 200: QA_STREAM_RESPONSE},
        openapi_extra={"requestBody": QA_REQUEST_BODY},
        tags=["qa"],
    )
    async def qa(request: Request, stream: bool = Query(False, description=STREAM_HELP)) -> Any:
        """Answer with a graph: JSON (`QARequest`) or multipart (same fields; files `frames`/`video`)."""
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type == "application/json":
            qa_request, uploads = _parse_json(await request.body()), Uploads()
        elif content_type in ("multipart/form-data", "application/x-www-form-urlencoded"):
            qa_request, uploads = await _parse_multipart(request, settings)
        else:
            raise ServeError(415, "send application/json or multipart/form-data", "unsupported_media_type")
        if not stream:
            return await _answer(service, metrics, qa_request, uploads)
        graph = qa_request.graph or settings.default_graph
        with _counted(metrics, graph):  # a request that cannot run is a plain 4xx/5xx, before any event
            prepared = await service.prepare(qa_request, uploads)
        return StreamingResponse(
            _streamed(service, metrics, prepared),
            media_type="text/event-stream",
            headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
        )

    @app.get("/v1/models", response_model=ModelList, dependencies=auth, responses=ERRORS, tags=["openai"])
    async def list_models() -> ModelList:
        return ModelList(data=[ModelCard(id=name) for name in service.graphs])

    @app.post(
        "/v1/chat/completions",
        response_model=ChatCompletion,
        dependencies=auth,
        responses={**ERRORS, 200: {"content": {"text/event-stream": {}}, "description": "Chat completion"}},
        tags=["openai"],
    )
    async def chat_completions(chat: ChatCompletionRequest) -> Any:
        """OpenAI Chat Completions: `model` is a graph; images as data-URL `image_url` parts."""
        reply = completion(chat, await _answer(service, metrics, to_qa_request(chat), Uploads()))
        if chat.stream:
            return StreamingResponse(stream_events(chat, reply), media_type="text/event-stream")
        return reply

    app.add_middleware(RequestGuard, settings=settings, metrics=metrics)
    app.add_middleware(CountRequests, metrics=metrics)  # outermost: refusals are counted too
    return app


@contextlib.contextmanager
def _counted(metrics: ServeMetrics, graph: str) -> Iterator[None]:
    """Count a server-side failure (5xx) of a graph run in the metrics, by its kind."""
    try:
        yield
    except ServeError as exc:
        if exc.status >= 500:
            metrics.graph_runs.labels(graph, exc.kind).inc()
        raise


def _count_answer(metrics: ServeMetrics, response: QAResponse) -> QAResponse:
    metrics.graph_runs.labels(response.graph, str(response.status)).inc()
    metrics.tokens.labels("input").inc(response.usage.input_tokens)
    metrics.tokens.labels("output").inc(response.usage.output_tokens)
    return response


async def _answer(
    service: QAService, metrics: ServeMetrics, request: QARequest, uploads: Uploads
) -> QAResponse:
    with _counted(metrics, request.graph or service.settings.default_graph):
        response = await service.answer(request, uploads)
    return _count_answer(metrics, response)


async def _streamed(
    service: QAService, metrics: ServeMetrics, prepared: PreparedRequest
) -> AsyncIterator[str]:
    """The events of a prepared request's run (see `serve.stream`); its uploads go when the stream ends."""

    async def run(on_progress: OnProgress) -> QAResponse:
        with _counted(metrics, prepared.graph.name):
            return _count_answer(metrics, await service.run(prepared, on_progress))

    try:
        async for event in qa_events(run):
            yield event
    finally:
        prepared.close()


def _parse_json(body: bytes) -> QARequest:
    try:
        return QARequest.model_validate_json(body)
    except ValidationError as exc:
        raise ServeError(422, _validation_message(exc.errors())) from None


async def _parse_multipart(request: Request, settings: ServeSettings) -> tuple[QARequest, Uploads]:
    try:
        form = await request.form(max_files=settings.max_frames + 1, max_fields=256)
    except HTTPException as exc:
        raise ServeError(400, f"multipart body: {exc.detail}") from None
    fields: dict[str, Any] = {}
    uploads = Uploads()
    for key, value in form.multi_items():
        if isinstance(value, UploadFile):
            data = await value.read()
            if key == "frames":
                uploads.frames.append(data)
            elif key == "video" and uploads.video is None:
                uploads.video = data
            else:
                raise ServeError(
                    422, f"multipart file field {key!r}: expected 'frames' (many) or 'video' (one)"
                )
        elif key in ("options", "frame_paths"):
            fields.setdefault(key, []).append(value)
        elif key in MULTIPART_JSON_FIELDS:
            try:  # pydantic's parser: nesting past its recursion limit is a ValueError, not a RecursionError
                fields[key] = from_json(value)
            except ValueError as exc:
                raise ServeError(422, f"{key}: must be JSON text ({exc})") from None
        elif key in MULTIPART_FIELDS:
            fields[key] = value
        else:
            raise ServeError(422, f"unknown multipart field {key!r}")
    try:
        return QARequest.model_validate(fields), uploads
    except ValidationError as exc:
        raise ServeError(422, _validation_message(exc.errors())) from None


def _validation_message(errors: Any) -> str:
    """`loc: msg` of the first errors, without echoing the input back."""
    parts = []
    for error in list(errors)[:5]:
        loc = ".".join(str(p) for p in error.get("loc", ()) if p != "body")
        parts.append(f"{loc}: {error.get('msg', 'invalid')}" if loc else error.get("msg", "invalid"))
    return "; ".join(parts) or "invalid request"


def _add_error_handlers(app: FastAPI) -> None:
    def respond(status: int, message: str, kind: str, headers: dict[str, str] | None = None) -> JSONResponse:
        return JSONResponse(error_body(status, message, kind), status_code=status, headers=headers)

    @app.exception_handler(ServeError)
    async def serve_error(request: Request, exc: ServeError) -> JSONResponse:
        return respond(exc.status, exc.message, exc.kind, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return respond(422, _validation_message(exc.errors()), "invalid_request_error")

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        kind = "not_found" if exc.status_code == 404 else "invalid_request_error"
        return respond(exc.status_code, str(exc.detail), kind, getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> JSONResponse:
        log.error("unhandled error on %s", request.url.path, exc_info=exc)
        return respond(500, "internal server error", "server_error")
