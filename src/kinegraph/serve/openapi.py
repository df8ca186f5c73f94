"""OpenAPI for `/v1/qa`, whose one route takes JSON or multipart (both bodies declared by hand) and answers
JSON or, with `stream=true`, server-sent events."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from pydantic.json_schema import models_json_schema

from kinegraph.serve.schemas import QARequest

_TEXT = {"type": "string"}
_JSON_TEXT = "JSON text of the field of the same name in QARequest."
QA_MULTIPART: dict[str, Any] = {
    "title": "QAMultipart",
    "type": "object",
    "required": ["question"],
    "description": "QARequest's fields as form fields; images uploaded as `frames` (in order) or a `video`.",
    "properties": {
        "question": {"type": "string", "minLength": 1, "maxLength": 4000},
        "options": {"type": "array", "items": _TEXT},
        "graph": _TEXT,
        "request_id": _TEXT,
        "fps": {"type": "number"},
        "frame_paths": {"type": "array", "items": _TEXT},
        "video_path": _TEXT,
        "nuscenes_scene": _TEXT,
        "task": _TEXT,
        "question_id": _TEXT,
        **{
            name: {"type": "string", "description": _JSON_TEXT}
            for name in ("trajectory", "graph_options", "ego_poses", "keysegments", "prior")
        },
        "frames": {"type": "array", "items": {"type": "string", "format": "binary"}},
        "video": {"type": "string", "format": "binary"},
    },
}
STREAM_HELP = (
    "Stream the graph's progress as server-sent events: an `update` event per finished node "
    '(`{"node", "update"}`), then `answer` (the QAResponse) or `error` (the ErrorBody). A request that '
    "cannot be run is answered as without streaming (a plain 4xx/5xx)."
)
QA_STREAM_RESPONSE: dict[str, Any] = {
    "description": "The answer (JSON), or with `stream=true` its progress as server-sent events",
    "content": {"text/event-stream": {"schema": {"type": "string", "description": STREAM_HELP}}},
}
QA_REQUEST_BODY: dict[str, Any] = {
    "required": True,
    "content": {
        "application/json": {"schema": {"$ref": "#/components/schemas/QARequest"}},
        "multipart/form-data": {"schema": {"$ref": "#/components/schemas/QAMultipart"}},
    },
}


def add_schemas(app: FastAPI) -> None:
    """Make `app.openapi()` include QARequest (and the models it uses) and QAMultipart."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = FastAPI.openapi(app)
            _, defs = models_json_schema(
                [(QARequest, "validation")], ref_template="#/components/schemas/{model}"
            )
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            components.update(defs["$defs"])
            components["QAMultipart"] = QA_MULTIPART
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
