"""Helpers for the serve tests: the test key, image bytes (valid, huge-header), a running server, and a
reader of server-sent events."""

from __future__ import annotations

import contextlib
import json
import struct
import zlib
from collections.abc import Iterable, Iterator

import cv2
import numpy as np

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.serve import BackgroundServer, ServeSettings

TURN = "Is the vehicle turning left, right, or going straight?"
TURN_OPTIONS = ["left", "right", "straight"]


def turning(yaw_rate_radps: float, speed_mps: float = 8.0) -> dict:
    """32 poses over 3.1 s of a constant-speed arc (+yaw rate = left)."""
    t = np.arange(32) * 0.1
    yaw = yaw_rate_radps * t
    x = speed_mps / yaw_rate_radps * np.sin(yaw)
    y = speed_mps / yaw_rate_radps * (1 - np.cos(yaw))
    return {"timestamps_s": t.tolist(), "x_m": x.tolist(), "y_m": y.tolist(), "yaw_rad": yaw.tolist()}


KEY = "test-key-1"
AUTH = {"authorization": f"Bearer {KEY}"}

RAISING_GRAPH = """
from langgraph.graph import END, START, StateGraph

from kinegraph.graphs.state import GraphContext, GroupState


async def explode(state: GroupState) -> dict:
    raise RuntimeError("secret internal detail /etc/kinegraph")


def build():
    graph = StateGraph(GroupState, context_schema=GraphContext)
    graph.add_node("explode", explode)
    graph.add_edge(START, "explode")
    graph.add_edge("explode", END)
    return graph.compile()


build.needs_model = False
"""


def png_bytes(height: int = 24, width: int = 32, value: int = 0) -> bytes:
    return cv2.imencode(".png", np.full((height, width, 3), value, np.uint8))[1].tobytes()


def jpeg_bytes(height: int = 24, width: int = 32) -> bytes:
    return cv2.imencode(".jpg", np.zeros((height, width, 3), np.uint8))[1].tobytes()


def bomb_png(width: int = 50_000, height: int = 50_000) -> bytes:
    """A valid PNG header declaring width x height RGB pixels, with only four rows of (zero) data."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" * (1 + 3 * width) * 4, 9)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


@contextlib.contextmanager
def running(model: OpenAILoopback | str | None, **overrides: object) -> Iterator[BackgroundServer]:
    """A real server with one key, on a loopback model or a `PROVIDER:MODEL`; `overrides` are ServeSettings
    fields."""
    fields: dict[str, object] = {"api_keys": frozenset({KEY})}
    if isinstance(model, str):
        fields["model"] = model
    elif model is not None:
        fields.update(model="vllm:loopback-vlm", base_url=model.base_url)
    fields.update(overrides)
    with BackgroundServer(ServeSettings(**fields)) as server:  # type: ignore[arg-type]
        yield server


def sse_events(lines: Iterable[str]) -> list[tuple[str, dict]]:
    """The (event, JSON data) pairs of a server-sent event stream, from its lines."""
    events, name, data = [], None, []
    for line in lines:
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            data.append(line.removeprefix("data: "))
        elif line == "" and name is not None:
            events.append((name, json.loads("\n".join(data))))
            name, data = None, []
    if name is not None:
        raise AssertionError(f"the stream ended inside an event: {name} {data}")
    return events
