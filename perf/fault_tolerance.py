"""Fault tolerance at scale: N EgoDyn questions through a model graph against a loopback OpenAI-compatible
server that fails a fraction of its requests (429, 503 with `Retry-After: 0`, connections reset mid-body,
cut-off JSON, 200s with no choices or a null message, dropped connections) and goes fully down for a few
seconds mid-run (503, `Retry-After: 0`).

Prints the questions lost (no prediction, or a failed one: must be 0), the error rate, the retries (requests
beyond one per question) and the wall time. The server runs in its own process, as a real one would.

    PYTHONPATH=src:. python perf/fault_tolerance.py [--clips 1000] [--fault-rate 0.2] [--outage 3]
        [--concurrency 64] [--latency 0.02] [--graph egodyn.vision]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from runner_throughput import write_dataset  # the same CARLA-layout clips as the throughput figure

from kinegraph.benchmarks.egodyn.questions import QUESTION_BANK
from kinegraph.run import execute as run
from kinegraph.types import FAILED_STATUSES, RunConfig

# The faulty server: a fault plan draws a fault for `rate` of the requests, and answers every request with
# 503 (Retry-After: 0) for `outage` seconds from the moment it has received `outage_at` requests.
SERVER = """
import asyncio, gc, random, sys, time
from collections import Counter
import uvloop
from kinegraph.agents.loopback import OpenAILoopback
from tests.support.text_reader_model import text_reader

rate, outage_s, latency = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[4])
outage_at = int(sys.argv[3])
MIX = [429, 503, "reset", "truncated", "empty", "null_message", "drop"]
rng, injected, window = random.Random(0), Counter(), []

def plan(n):
    now = time.monotonic()
    if n == outage_at:
        window.append(now)
    if window and now - window[0] < outage_s:
        injected["outage 503"] += 1
        return 503
    if rng.random() < rate:
        fault = rng.choice(MIX)
        injected[str(fault)] += 1
        return fault
    return None

async def main():
    gc.set_threshold(50_000, 20, 100)
    server = OpenAILoopback(
        responder=text_reader, latency_s=latency, fault_plan=plan, retry_after_s=0, record=False
    )
    async with server:
        print(server.base_url, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        print(server.received, dict(injected), flush=True)

uvloop.run(main())
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=1000)
    parser.add_argument("--fault-rate", type=float, default=0.2)
    parser.add_argument("--outage", type=float, default=3.0, help="Seconds of full outage mid-run.")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--graph", default="egodyn.vision")
    args = parser.parse_args()
    n_questions = args.clips * len(QUESTION_BANK)
    with tempfile.TemporaryDirectory() as tmp:
        data = write_dataset(Path(tmp) / "data", args.clips)
        server = subprocess.Popen(
            [sys.executable, "-c", SERVER]
            + [str(args.fault_rate), str(args.outage), str(n_questions // 2), str(args.latency)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            config = RunConfig(
                benchmark="egodyn",
                graph=args.graph,
                model="vllm:faulty",
                base_url=server.stdout.readline().strip(),
                data=str(data),
                out_dir=str(Path(tmp) / "run"),
                concurrency=args.concurrency,
                use_cache=False,
            )
            start = time.perf_counter()
            summary = run(config, show_progress=False)
            wall = time.perf_counter() - start
            totals = json.loads((Path(tmp) / "run" / "run.json").read_text())["totals"]
            server.stdin.write("\n")
            server.stdin.flush()
            received, _, injected = server.stdout.readline().strip().partition(" ")
        finally:
            server.stdin.close()
            server.wait(timeout=30)
    statuses = Counter(summary.status_counts)
    lost = n_questions - summary.n_predictions + sum(statuses[str(s)] for s in FAILED_STATUSES)
    print(
        f"{n_questions} questions, graph {args.graph}, concurrency {args.concurrency}, "
        f"{args.fault_rate:.0%} faults, {args.outage:g} s outage after {n_questions // 2} requests"
    )
    print(f"  injected: {injected}")
    print(f"  questions lost: {lost} (statuses {dict(statuses)}; predictions {summary.n_predictions})")
    print(f"  error rate: {totals['error_rate']:.4f}")
    print(f"  requests: {received} = {n_questions} questions + {int(received) - n_questions} retries")
    print(f"  wall time: {wall:.1f} s ({n_questions / wall:,.0f} questions/s)")


if __name__ == "__main__":
    main()
