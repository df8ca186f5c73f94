"""`/v1/qa?stream=true`: the graph's progress as server-sent events, node by node, then the answer.

Each finished node sends an `update` event (`{"node", "update"}`, a small JSON summary of what it wrote:
measurements and tool results in full, pixel arrays and encoded images only described); the last event is
`answer` (the body the plain endpoint answers) or `error` (the body and code the plain endpoint would
answer). An error after the stream has started is an event, never a dropped connection.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import numpy as np
from pydantic import BaseModel

from kinegraph.agents.protocol import ImagePart
from kinegraph.serve.errors import ServeError, error_body
from kinegraph.types import Prediction

log = logging.getLogger("kinegraph.serve")

OnProgress = Callable[[str, Any], Awaitable[None]]
#: longest list, 1-D array and string an update event carries whole; longer ones are cut, saying so
MAX_ITEMS, MAX_CHARS = 64, 2000


def node_summary(value: Any, public: Callable[[str], str]) -> Any:
    """`value` as small JSON: arrays past 1-D and images described, long lists and strings cut (with a
    note), predictions as answer/status; every string passed through `public` (no server paths)."""
    if isinstance(value, str):
        text = public(value)
        cut = len(text) - MAX_CHARS
        return text if cut <= 0 else f"{text[:MAX_CHARS]}… ({cut} more characters)"
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, np.generic):
        return node_summary(value.item(), public)
    if isinstance(value, np.ndarray):
        if value.ndim <= 1 and value.size <= MAX_ITEMS:
            return node_summary(value.tolist(), public)
        return f"array {'x'.join(map(str, value.shape))} {value.dtype}"
    if isinstance(value, bytes | bytearray):
        return f"{len(value)} bytes"
    if isinstance(value, ImagePart):
        return f"image {value.mime_type}, {len(value.data)} bytes"
    if isinstance(value, Prediction):
        fields = value.model_dump(include={"sample_id", "answer", "raw", "status", "error"})
        return node_summary(fields, public)
    if isinstance(value, BaseModel):
        return node_summary(value.model_dump(), public)
    if isinstance(value, dict):
        return {str(key): node_summary(item, public) for key, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        items = list(value)
        summary = [node_summary(item, public) for item in items[:MAX_ITEMS]]
        return summary + ([f"… ({len(items) - MAX_ITEMS} more items)"] if len(items) > MAX_ITEMS else [])
    return type(value).__name__


def sse(event: str, data: Any) -> str:
    """One server-sent event: its name and one line of JSON."""
    return f"event: {event}\ndata: {json.dumps(data, allow_nan=False)}\n\n"


async def qa_events(run: Callable[[OnProgress], Awaitable[BaseModel]]) -> AsyncIterator[str]:
    """The events of `run(on_progress)`: an `update` per finished node, then `answer` or `error`."""
    events: asyncio.Queue[str | None] = asyncio.Queue()

    async def on_progress(node: str, summary: Any) -> None:
        events.put_nowait(sse("update", {"node": node, "update": summary}))

    async def produce() -> BaseModel:
        try:
            return await run(on_progress)
        finally:
            events.put_nowait(None)

    task = asyncio.create_task(produce())
    try:
        while (event := await events.get()) is not None:
            yield event
        try:
            last = sse("answer", (await task).model_dump(mode="json"))
        except ServeError as exc:
            last = sse("error", error_body(exc.status, exc.message, exc.kind))
        except Exception as exc:  # noqa: BLE001 - the stream must end with an event, as the plain route's 500
            log.error("unhandled error in a /v1/qa stream", exc_info=exc)
            last = sse("error", error_body(500, "internal server error", "server_error"))
        yield last
    finally:
        if not task.done():  # the client went away: stop the graph
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
