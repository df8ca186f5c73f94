"""Runner throughput: N EgoDyn-format questions at concurrency K against a loopback model with fixed latency.

Prints wall time as a multiple of the ideal N * latency / K, and frame decodes per clip (target 1).
The model server runs in its own process (as a real server would), so the two do not share one GIL.

    python perf/runner_throughput.py [--clips 1000] [--concurrency 64] [--latency 0.05] [--graph G]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from kinegraph.benchmarks.egodyn.questions import QUESTION_BANK
from kinegraph.graphs import graph_spec
from kinegraph.media import write_video
from kinegraph.run import execute as run
from kinegraph.types import RunConfig

# The stand-in model server: uvloop like vLLM's own server (uvicorn), answering "straight" after `latency`;
# it keeps no request bodies and collects garbage rarely, as the runner does.
SERVER = """
import asyncio, gc, sys, uvloop
from kinegraph.agents.loopback import OpenAILoopback

async def main():
    gc.set_threshold(50_000, 20, 100)
    server = OpenAILoopback(responder=lambda body: "straight", latency_s=float(sys.argv[1]), record=False)
    async with server:
        print(server.base_url, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        print(server.received, server.max_in_flight, flush=True)

uvloop.run(main())
"""


def write_dataset(root: Path, n_clips: int) -> Path:
    """CARLA-layout clips: a 10-frame 64x36 mp4 each, 14 questions each."""
    clip_dir, videos = root / "carla_clips", root / "carla_videos_transferred"
    (clip_dir / "arrays").mkdir(parents=True)
    rng = np.random.default_rng(0)
    for clip_id in clip_ids(n_clips):
        write_video(
            videos / f"{clip_id}.mp4", rng.integers(0, 255, (10, 36, 64, 3), dtype=np.uint8), fps=10.0
        )
    write_tables(clip_dir, clip_ids(n_clips))
    return root


def clip_ids(n_clips: int) -> list[str]:
    """The clips' ids, in the CARLA naming the EgoDyn loader reads."""
    return [f"PRF_Bench-{c}_1_T-1__Comfort__w0" for c in range(n_clips)]


def write_tables(clip_dir: Path, ids: list[str]) -> None:
    """clips_index.jsonl and qa.jsonl: every question of the bank on every clip (answer: its first choice)."""
    index = [{"clip_id": clip_id, "array_ref": f"arrays/{clip_id}.npz"} for clip_id in ids]
    qa = [
        {
            "clip_id": clip_id,
            "question_id": q.question_id,
            "question": q.text,
            "answer": q.choices[0],
            "choices": q.choices,
        }
        for clip_id in ids
        for q in QUESTION_BANK
    ]
    (clip_dir / "clips_index.jsonl").write_text("".join(json.dumps(r) + "\n" for r in index))
    (clip_dir / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in qa))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--graph", default="egodyn.vision")
    parser.add_argument("--grouped", action="store_true", help="One request per clip.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        data = write_dataset(Path(tmp) / "data", args.clips)
        print(f"dataset: {args.clips} clips x 14 questions written in {time.perf_counter() - start:.1f} s")
        server = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(args.latency)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            start = time.perf_counter()
            # imports the graph's modules (langgraph: about 1 s), once per process
            graph_spec(args.graph).builder  # noqa: B018 - the import is the point
            print(f"graph modules imported in {time.perf_counter() - start:.2f} s (not timed below)")
            base_url = server.stdout.readline().strip()
            config = RunConfig(
                benchmark="egodyn",
                graph=args.graph,
                model="vllm:bench",
                base_url=base_url,
                data=str(data),
                out_dir=str(Path(tmp) / "run"),
                concurrency=args.concurrency,
                use_cache=False,
                options={"grouped": True} if args.grouped else {},
            )
            start, cpu_start = time.perf_counter(), time.thread_time()
            summary = run(config, show_progress=False)
            wall, cpu = time.perf_counter() - start, time.thread_time() - cpu_start
            server.stdin.write("\n")
            server.stdin.flush()
            received, most = map(int, server.stdout.readline().split())
        finally:
            server.stdin.close()
            server.wait(timeout=30)
    n = summary.n_predictions
    requests = args.clips if args.grouped else n
    ideal = requests * args.latency / args.concurrency
    print(
        f"{n} questions in {requests} requests, graph {args.graph}, concurrency {args.concurrency}, "
        f"model latency {args.latency * 1000:.0f} ms"
    )
    print(f"  statuses {summary.status_counts}; the server got {received} requests, at most {most} at once")
    question_ideal = n * args.latency / args.concurrency
    print(
        f"  wall {wall:.2f} s = {wall / question_ideal:.2f}x the ideal N*latency/K = {question_ideal:.2f} s "
        f"(target <= 1.2); {wall / ideal:.2f}x the ideal for its {requests} requests"
    )
    print(
        f"  throughput {n / wall:,.0f} questions/s; "
        f"decodes per clip {summary.decodes / max(1, summary.groups):.2f}"
    )
    print(f"  runner's event-loop thread: {cpu * 1e3 / n:.3f} ms CPU per question ({cpu / wall:.0%} busy)")


if __name__ == "__main__":
    main()
