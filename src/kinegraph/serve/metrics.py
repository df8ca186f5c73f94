"""Prometheus metrics of one app (its own registry, so several apps can live in one process)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]

ROUTES = ("/v1/qa", "/v1/chat/completions", "/v1/graphs", "/v1/models", "/healthz", "/metrics")
LATENCY_BUCKETS_S = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


class ServeMetrics:
    """Requests by route and status, latency, in-flight and queued requests, rejections, graph outcomes."""

    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "kinegraph_requests",
            "HTTP requests by route and status code.",
            ["route", "code"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "kinegraph_request_duration_seconds",
            "Time from request to the end of the response.",
            ["route"],
            buckets=LATENCY_BUCKETS_S,
            registry=self.registry,
        )
        self.in_flight = Gauge(
            "kinegraph_requests_in_flight", "Requests being handled.", registry=self.registry
        )
        self.waiting = Gauge(
            "kinegraph_requests_waiting", "Requests queued for a slot.", registry=self.registry
        )
        self.rejected = Counter(
            "kinegraph_rejected_requests",
            "Requests refused before they ran, by reason.",
            ["reason"],
            registry=self.registry,
        )
        self.graph_runs = Counter(
            "kinegraph_graph_runs",
            "Graph runs by graph and prediction status.",
            ["graph", "status"],
            registry=self.registry,
        )
        self.tokens = Counter(
            "kinegraph_model_tokens",
            "Model tokens used by served graphs.",
            ["direction"],
            registry=self.registry,
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)


class CountRequests:
    """ASGI middleware: every HTTP request counted by route and status code, and timed."""

    def __init__(self, app: ASGIApp, metrics: ServeMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        route = scope["path"] if scope["path"] in ROUTES else "other"
        status, start = 500, time.perf_counter()

        async def send_and_record(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_and_record)
        finally:
            self.metrics.requests.labels(route, str(status)).inc()
            self.metrics.latency.labels(route).observe(time.perf_counter() - start)
