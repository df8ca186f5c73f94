"""Load test of `kinegraph serve` on loopback: N concurrent clients for a fixed time.

The served graph (egodyn.vision by default) is backed by a loopback OpenAI-compatible model that waits
`--model-latency-s` per call and answers with the code named in the question, so every response can be
checked against its request: same request_id, answer == the code that request asked about. Clients
alternate JSON (inline image) and multipart (uploaded image). Prints p50/p99 latency, throughput and
error rate; exits 1 on any lost or mixed-up answer.
Usage: python perf/serve_load.py [--clients 32] [--duration-s 10] [--model-latency-s 0.2]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import re
import socket
import statistics
import subprocess
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field

import cv2
import httpx
import numpy as np

from kinegraph.agents.loopback import OpenAILoopback

KEY = "perf-key"
CODE = re.compile(r"Which code is shown: (\S+)\?")


def echo_code(body: dict) -> str:
    """The model: finds the code the question asks about (it appears once per prompt)."""
    text = " ".join(
        part.get("text", "")
        for message in body["messages"]
        for part in message["content"]
        if isinstance(part, dict)
    )
    match = CODE.search(text)
    return match.group(1) if match else "none"


@dataclass
class Tally:
    latencies_s: list[float] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)
    sent: int = 0
    answered: int = 0
    mixed_up: int = 0
    transport_errors: int = 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, model_url: str, args: argparse.Namespace) -> subprocess.Popen:
    command = [
        sys.executable, "-m", "kinegraph.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
        "--model", "vllm:loopback-vlm", "--base-url", model_url, "--graph", args.graph,
        "--concurrency", str(args.server_concurrency), "--queue", str(args.server_queue),
        # every load client shares one API key: the per-client share must hold them all
        "--per-client", str(args.per_client or args.server_concurrency + args.server_queue),
    ]  # fmt: skip
    env = {**os.environ, "KINEGRAPH_API_KEYS": KEY}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"server exited: {process.stderr.read().decode()[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return process
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("server did not start within 60 s")


async def client(http: httpx.AsyncClient, worker: int, stop_at: float, image: bytes, tally: Tally) -> None:
    data_url = "data:image/jpeg;base64," + base64.b64encode(image).decode()
    i = 0
    while time.monotonic() < stop_at:
        code, request_id = f"c{worker}x{i}-{uuid.uuid4().hex[:6]}", f"w{worker}-{i}"
        options = [code, f"d{worker}x{i}a", f"d{worker}x{i}b"]
        question = f"Which code is shown: {code}?"
        start = time.perf_counter()
        tally.sent += 1
        try:
            if i % 2:
                fields = {"question": question, "options": options, "request_id": request_id}
                response = await http.post(
                    "/v1/qa", data=fields, files=[("frames", ("f.jpg", image, "image/jpeg"))]
                )
            else:
                body = {
                    "question": question,
                    "options": options,
                    "request_id": request_id,
                    "images": [data_url],
                }
                response = await http.post("/v1/qa", json=body)
        except httpx.TransportError:
            tally.transport_errors += 1
            i += 1
            continue
        tally.latencies_s.append(time.perf_counter() - start)
        tally.answered += 1
        tally.statuses[response.status_code] += 1
        if response.status_code == 200:
            got = response.json()
            if got["request_id"] != request_id or got["answer"] != code:
                tally.mixed_up += 1
        elif response.status_code == 429:
            await asyncio.sleep(float(response.headers.get("retry-after", "1")))
        i += 1


async def load(url: str, args: argparse.Namespace) -> tuple[Tally, float]:
    image = cv2.imencode(".jpg", np.random.default_rng(0).integers(0, 255, (48, 64, 3), dtype=np.uint8))[
        1
    ].tobytes()
    tally = Tally()
    limits = httpx.Limits(max_connections=args.clients, max_keepalive_connections=args.clients)
    headers = {"authorization": f"Bearer {KEY}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, limits=limits, timeout=60) as http:
        start = time.monotonic()
        stop_at = start + args.duration_s
        await asyncio.gather(*(client(http, w, stop_at, image, tally) for w in range(args.clients)))
        elapsed = time.monotonic() - start
    return tally, elapsed


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--duration-s", type=float, default=10.0)
    parser.add_argument("--model-latency-s", type=float, default=0.2)
    parser.add_argument("--graph", default="egodyn.vision")
    parser.add_argument("--server-concurrency", type=int, default=16)
    parser.add_argument("--server-queue", type=int, default=32)
    parser.add_argument("--per-client", type=int, default=None, help="default: concurrency + queue")
    args = parser.parse_args()

    with OpenAILoopback(responder=echo_code, latency_s=args.model_latency_s) as model:
        port = free_port()
        server = start_server(port, model.base_url, args)
        try:
            tally, elapsed = asyncio.run(load(f"http://127.0.0.1:{port}", args))
        finally:
            server.terminate()
            server.wait(10)
        model_calls = len(model.requests)

    ok = tally.statuses.get(200, 0)
    errors = tally.sent - ok
    lost = tally.sent - tally.answered
    print(
        f"serve load: {args.clients} clients x {args.duration_s:g} s, graph {args.graph}, "
        f"model latency {args.model_latency_s:g} s, "
        f"server concurrency {args.server_concurrency} + queue {args.server_queue}"
    )
    print(
        "| requests | ok | p50 (s) | p99 (s) | mean (s) | throughput (req/s) | error rate | mixed up | lost |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    p50, p99 = percentile(tally.latencies_s, 50), percentile(tally.latencies_s, 99)
    mean = statistics.fmean(tally.latencies_s) if tally.latencies_s else float("nan")
    print(
        f"| {tally.sent} | {ok} | {p50:.3f} | {p99:.3f} | {mean:.3f} "
        f"| {ok / elapsed:.1f} | {errors / max(1, tally.sent):.2%} | {tally.mixed_up} | {lost} |"
    )
    codes = dict(sorted(tally.statuses.items()))
    print(f"status codes: {codes}; model calls: {model_calls} (one per ok answer)")
    if tally.mixed_up or lost or model_calls != ok:
        print("FAIL: lost or mixed-up answers")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
