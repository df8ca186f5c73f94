"""Backend-layer overhead and throughput against loopback OpenAI-compatible servers. Prints figures.

1. Per-request overhead of the backend layer (protocol conversion + response cache + retry/limit
   wrapper), against a zero-latency server: the same requests sent with the bare openai SDK vs through
   `get_backend("vllm:...")` (its lean aiohttp transport, and `transport="sdk"`): median wall time of
   sequential requests, and client CPU time per request at concurrency 64 (CPU time hardly depends on
   what else the machine runs); plus the one-off cost of encoding a frame.
2. Throughput at concurrency 64 against a 200 ms-latency server, as a fraction of the ideal
   64 / 0.2 s = 320 requests/s (target >= 0.9). Every request is distinct (a cache miss and a write).

The servers run in a child process so their CPU time is not charged to the client.
Usage: python perf/agents_overhead.py [--requests N] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kinegraph.agents import (  # noqa: E402
    GenerateRequest,
    GenerateResponse,
    ManagedBackend,
    Message,
    encode_image,
    get_backend,
    user_message,
)
from kinegraph.agents.cache import ResponseCache  # noqa: E402
from kinegraph.agents.loopback import OpenAILoopback  # noqa: E402
from kinegraph.agents.openai_wire import chat_body  # noqa: E402
from kinegraph.types import Usage  # noqa: E402

CONCURRENCY = 64
LATENCY_S = 0.2


def _serve(latency_s: float, ports: multiprocessing.Queue) -> None:
    async def main() -> None:
        async with OpenAILoopback(
            responder=lambda body: "straight", latency_s=latency_s, usage=(900, 1)
        ) as server:
            ports.put(server.base_url)
            await asyncio.Event().wait()

    asyncio.run(main())


def _start_server(latency_s: float) -> tuple[multiprocessing.Process, str]:
    context = multiprocessing.get_context("spawn")
    ports: multiprocessing.Queue = context.Queue()
    process = context.Process(target=_serve, args=(latency_s, ports), daemon=True)
    process.start()
    return process, ports.get(timeout=60)


def _road_frame(index: int) -> np.ndarray:
    """A 640x360 RGB frame that compresses like a camera frame: sky, road, lanes, two cars, sensor noise."""
    import cv2

    rng = np.random.default_rng(index)
    frame = np.zeros((360, 640, 3), np.uint8)
    frame[:180] = np.linspace([150, 190, 235], [200, 220, 240], 180)[:, None, :].astype(np.uint8)
    frame[180:] = (90, 90, 95)
    for x in (200, 440):
        cv2.line(frame, (320, 180), (x + (x - 320) * 2, 360), (235, 235, 235), 4)
    cv2.rectangle(frame, (260 + 8 * index, 220), (330 + 8 * index, 270), (170, 30, 30), -1)
    cv2.rectangle(frame, (420, 200), (470, 235), (30, 60, 160), -1)
    noise = rng.normal(0, 2.0, frame.shape)
    return np.clip(frame + noise, 0, 255).astype(np.uint8)


def _requests(n: int, frames: list, tag: str) -> list[GenerateRequest]:
    system = Message(role="system", content="Answer with one word: left, right or straight.")
    return [
        GenerateRequest(
            messages=[system, user_message(f"[{tag}{i}] Is the ego vehicle turning?", frames)], max_tokens=8
        )
        for i in range(n)
    ]


async def _overhead(base_url: str, frames: list, n: int, cache_dir: Path) -> dict[str, tuple[float, float]]:
    """(median wall ms sequential, client CPU ms per request at concurrency 64) for each variant."""
    import openai

    sdk = openai.AsyncOpenAI(api_key="EMPTY", base_url=base_url, max_retries=0)
    ChatCompletion = openai.types.chat.ChatCompletion
    backend = get_backend("vllm:qwen2.5-vl", base_url=base_url, cache=cache_dir / "overhead.sqlite")
    no_cache = get_backend("vllm:qwen2.5-vl", base_url=base_url, cache=False)
    via_sdk = get_backend("vllm:qwen2.5-vl", base_url=base_url, cache=False, transport="sdk")

    def body(request: GenerateRequest) -> dict:
        return chat_body(request, "qwen2.5-vl", max_tokens_field="max_tokens")

    async def sdk_create(request: GenerateRequest) -> None:
        await sdk.chat.completions.create(**body(request))

    async def sdk_post(request: GenerateRequest) -> None:
        await sdk.post("/chat/completions", body=body(request), cast_to=ChatCompletion)

    variants = {
        "sdk_create": sdk_create,
        "sdk_post": sdk_post,
        "nocache_sdk": via_sdk.generate,
        "nocache": no_cache.generate,
        "miss": backend.generate,
    }
    figures: dict[str, tuple[float, float]] = {}
    for name, call in variants.items():
        for request in _requests(20, frames, f"warm-{name}"):  # connections, imports, first-call costs
            await call(request)
        samples = []
        for request in _requests(n, frames, f"seq-{name}"):
            start = time.perf_counter()
            await call(request)
            samples.append(time.perf_counter() - start)
        semaphore = asyncio.Semaphore(CONCURRENCY)

        async def bounded(request: GenerateRequest, call=call, semaphore=semaphore) -> None:
            async with semaphore:
                await call(request)

        burst = _requests(4 * n, frames, f"cpu-{name}")
        cpu_start = time.process_time()
        await asyncio.gather(*(bounded(r) for r in burst))
        cpu_ms = (time.process_time() - cpu_start) / len(burst) * 1e3
        figures[name] = (statistics.median(samples) * 1e3, cpu_ms)
    hits = _requests(n, frames, "seq-miss")  # all answered above: now every one is a hit
    start = time.perf_counter()
    for request in hits:
        await backend.generate(request)
    figures["hit"] = ((time.perf_counter() - start) / n * 1e3, float("nan"))
    await sdk.close()
    return figures


class _Instant:
    """A provider that converts the request to the OpenAI wire body and answers at once (no HTTP)."""

    provider, model, params = "vllm", "qwen2.5-vl", {}

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        chat_body(request, self.model, max_tokens_field="max_tokens")
        return GenerateResponse(
            text="straight", model=self.model, usage=Usage(input_tokens=900, output_tokens=1)
        )


async def _layer_only(frames: list, n: int, cache_dir: Path) -> dict[str, float]:
    """CPU microseconds per request spent in the backend layer itself: conversion, wrapper, cache."""
    variants = {
        "convert": _Instant(),
        "wrapper": ManagedBackend(_Instant()),
        "cache": ManagedBackend(_Instant(), cache=ResponseCache(cache_dir / "layer.sqlite")),
    }
    out = {}
    for name, backend in variants.items():
        requests = _requests(n, frames, f"layer-{name}")
        start = time.process_time()
        for request in requests:
            await backend.generate(request)
        out[name] = (time.process_time() - start) / n * 1e6
    return out


async def _throughput(base_url: str, frames: list, n: int, cache_dir: Path) -> tuple[float, float]:
    backend = get_backend("vllm:qwen2.5-vl", base_url=base_url, cache=cache_dir / "throughput.sqlite")
    semaphore = asyncio.Semaphore(CONCURRENCY)

    async def one(request: GenerateRequest) -> None:
        async with semaphore:
            await backend.generate(request)

    await asyncio.gather(*(one(r) for r in _requests(CONCURRENCY, frames, "warm")))
    requests = _requests(n, frames, "run")
    start = time.perf_counter()
    await asyncio.gather(*(one(r) for r in requests))
    elapsed = time.perf_counter() - start
    return n / elapsed, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=100, help="sequential requests per overhead variant")
    parser.add_argument("--rounds", type=int, default=30, help="throughput: requests = rounds x 64")
    args = parser.parse_args()

    load_before = os.getloadavg()[0]
    raw = [_road_frame(i) for i in range(4)]
    start = time.process_time()
    for _ in range(5):
        for frame in raw:
            encode_image(frame, max_side=448)
    encode_ms = (time.process_time() - start) / 20 * 1e3
    frames = [encode_image(frame, max_side=448) for frame in raw]
    kb = sum(len(f.data) for f in frames) / 1024

    with tempfile.TemporaryDirectory() as tmp:
        layer = asyncio.run(_layer_only(frames, 2000, Path(tmp)))
        server, base_url = _start_server(0.0)
        try:
            figures = asyncio.run(_overhead(base_url, frames, args.requests, Path(tmp)))
        finally:
            server.terminate()
        server, base_url = _start_server(LATENCY_S)
        try:
            rate, elapsed = asyncio.run(_throughput(base_url, frames, args.rounds * CONCURRENCY, Path(tmp)))
        finally:
            server.terminate()

    ideal = CONCURRENCY / LATENCY_S
    load_after = os.getloadavg()[0]
    print(f"machine: {os.cpu_count()} CPUs, load average {load_before:.1f} before / {load_after:.1f} after")
    print(f"request: system + 4 frames (640x360 -> 448x252 JPEG, {kb:.0f} KiB in all) + text")
    print(f"encode one 640x360 frame (CPU; once per frame, reused)  {encode_ms:7.2f} ms")
    print("backend layer alone (no HTTP), CPU per request:")
    print(f"  protocol conversion to the wire body              {layer['convert']:7.0f} us")
    print(
        f"  + retry/limit/usage/cost wrapper                  {layer['wrapper'] - layer['convert']:+7.0f} us"
    )
    print(f"  + response cache (key, lookup, write: a miss)     {layer['cache'] - layer['wrapper']:+7.0f} us")
    print(f"  = per-request overhead of the backend layer       {layer['cache']:7.0f} us")
    print("zero-latency loopback: sequential median wall | client CPU per request at concurrency 64")
    labels = {
        "sdk_create": "bare openai SDK, chat.completions.create",
        "sdk_post": "bare openai SDK, client.post (same body)",
        "nocache_sdk": "kinegraph backend, transport=sdk, cache off",
        "nocache": "kinegraph backend (aiohttp), cache off",
        "miss": "kinegraph backend (aiohttp), cache miss",
    }
    for name, label in labels.items():
        wall, cpu = figures[name]
        print(f"  {label:44s} {wall:6.2f} ms | {cpu:5.2f} ms")
    print(f"  {'kinegraph backend, cache hit (no request)':44s} {figures['hit'][0]:6.2f} ms |")
    n = args.rounds * CONCURRENCY
    print(
        f"concurrency {CONCURRENCY}, {LATENCY_S * 1e3:.0f} ms server latency, {n} distinct requests (misses):"
    )
    print(
        f"  throughput {rate:6.1f} req/s in {elapsed:.1f} s = {rate / ideal:.3f} of ideal {ideal:.0f} req/s"
    )
    ceiling = 1e3 / figures["miss"][1]
    bound = min(1.0, ceiling / ideal)
    print(f"  client CPU bound: ~{ceiling:.0f} req/s on one free core ({bound:.2f} of ideal)")


if __name__ == "__main__":
    main()
