"""Ray vs the single-process runner on a CPU-heavy tool graph: VO over 10-frame clips.

Prints throughput (clips/s) of the single-process runner and of Ray on this machine's cores, Ray's
start-up costs, and the per-task scheduling overhead (empty-shard round trips, and per real shard the
driver-observed time minus the worker's compute time). The graph is the registered `egodyn.vo` when it
exists, else a stand-in built here on `kinegraph.tools.vo.visual_odometry`: decode 10 frames once per
clip, run KLT + essential-matrix VO, answer the six VO probe questions from it (the rest: first option).

    python perf/ray_scaling.py [--clips 48] [--workers 1,2] [--width 640]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

PERF_DIR = Path(__file__).resolve().parent
STAND_IN = "ray_scaling:build_vo_stand_in"


def build_vo_stand_in(num_frames: int = 10) -> Any:
    """decode 10 frames -> visual_odometry -> answers; VLM-free."""
    from langgraph.graph import END, START, StateGraph

    from kinegraph.graphs.nodes import decode_frames, prediction, record_group_error, route_on_error
    from kinegraph.graphs.state import GraphContext, GroupState
    from kinegraph.tools.vo import visual_odometry

    async def measure_ego_motion(state: GroupState) -> dict[str, Any]:
        result = await asyncio.to_thread(visual_odometry, state["frames"])
        return {"measurements": {"vo": result.answers}}

    async def answer_from_vo(state: GroupState) -> dict[str, Any]:
        answers = state["measurements"]["vo"]
        results = []
        for s in state["samples"]:
            answer = answers.get(s.question_id or "", (s.options or [""])[0])
            results.append(
                prediction(s, raw=answer, answer=answer, trace=[{"node": "vo", "answers": answers}])
            )
        return {"results": results}

    graph = StateGraph(GroupState, context_schema=GraphContext)
    graph.add_node("decode_frames", decode_frames(num_frames))
    graph.add_node("measure_ego_motion", measure_ego_motion)
    graph.add_node("answer_from_vo", answer_from_vo)
    graph.add_node("record_group_error", record_group_error)
    graph.add_edge(START, "decode_frames")
    targets = ["measure_ego_motion", "record_group_error"]
    graph.add_conditional_edges("decode_frames", route_on_error("measure_ego_motion"), targets)
    graph.add_edge("measure_ego_motion", "answer_from_vo")
    graph.add_edge("answer_from_vo", END)
    graph.add_edge("record_group_error", END)
    return graph.compile()


build_vo_stand_in.needs_model = False  # type: ignore[attr-defined]


def write_world(root: Path, n_clips: int, width_px: int, seed: int = 0) -> Path:
    """EgoDyn CARLA layout: scripted maneuvers for arrays and labels, a textured scene panned by the
    clip's yaw for the 12-frame video (so KLT finds and tracks corners)."""
    import cv2

    from kinegraph.benchmarks.egodyn_questions import QUESTION_BANK
    from kinegraph.benchmarks.synthetic.maneuvers import MANEUVERS, script_maneuver
    from kinegraph.media import write_video
    from kinegraph.tools.kinematics import clip_kinematics
    from kinegraph.tools.oracle import label_clip

    height_px = width_px * 3 // 4
    clip_dir, videos = root / "carla_clips", root / "carla_videos_transferred"
    (clip_dir / "arrays").mkdir(parents=True, exist_ok=True)
    videos.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    index, qa = [], []
    for c in range(n_clips):
        maneuver = MANEUVERS[c % len(MANEUVERS)]
        track = script_maneuver(maneuver, seed + c, duration_s=3.2)
        kin = clip_kinematics(track.timestamps_s, track.xy_m, track.yaw_rad)
        clip_id = f"PERF_{maneuver}-{c}_1_T-1__Comfort__w0"
        np.savez(clip_dir / "arrays" / f"{clip_id}.npz", **kin.arrays())
        texture = cv2.GaussianBlur(
            rng.integers(0, 255, (height_px * 2, width_px * 2, 3), np.uint8), (5, 5), 0
        )
        yaw = np.interp(np.linspace(0, 3.0, 12), track.timestamps_s, track.yaw_rad)
        shifts = ((yaw - yaw[0]) * width_px * 0.9).astype(int)
        frames = np.stack(
            [
                texture[height_px // 2 : height_px // 2 + height_px, x0 : x0 + width_px]
                for x0 in np.clip(width_px // 2 - shifts + np.arange(12) * 2, 0, width_px)
            ]
        )
        write_video(videos / f"{clip_id}.mp4", frames, fps=4.0)
        index.append(
            {
                "clip_id": clip_id,
                "t_start": 0.0,
                "t_end": 3.0,
                "array_ref": f"arrays/{clip_id}.npz",
                "features": kin.features,
            }
        )
        labels = label_clip(kin)
        for q in QUESTION_BANK:
            qa.append(
                {
                    "qa_id": f"qa_{c:04d}_{q.question_id}",
                    "clip_id": clip_id,
                    "question_id": q.question_id,
                    "question": q.text,
                    "answer": labels[q.question_id],
                    "choices": q.choices,
                }
            )
    (clip_dir / "clips_index.jsonl").write_text("".join(json.dumps(r) + "\n" for r in index))
    (clip_dir / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in qa))
    return root


def graph_name() -> str:
    from kinegraph.graphs import graphs

    return "egodyn.vo" if "egodyn.vo" in graphs else STAND_IN


def time_runs(args: argparse.Namespace, data: Path, work: Path) -> None:
    import ray

    from kinegraph.ray_runner import RayOptions, acquire_workers, release_workers, run_on_ray
    from kinegraph.runner import load_samples, run
    from kinegraph.shard_worker import RunSetup
    from kinegraph.types import RunConfig

    graph = graph_name()
    config = RunConfig(benchmark="egodyn", graph=graph, data=str(data), out_dir=str(work / "local"))
    n_samples = len(load_samples(config))
    print(f"graph: {graph}{'  (stand-in: no egodyn.vo graph registered)' if graph == STAND_IN else ''}")
    print(f"clips: {args.clips} x 14 questions = {n_samples} samples; 10 frames/clip at {args.width} px wide")
    print(f"cores: {os.cpu_count()}  load average: {os.getloadavg()[0]:.1f}")

    warm = {"out_dir": str(work / "warm-local"), "limit": 14}
    run(config.model_copy(update=warm), show_progress=False)  # imports and first build off the clock
    t, cpu = time.perf_counter(), time.process_time()
    local = run(config, show_progress=False)
    local_s = time.perf_counter() - t
    cores_used = (time.process_time() - cpu) / local_s
    print(
        f"\nsingle-process runner (--concurrency {config.concurrency}): {local_s:6.2f} s  "
        f"{args.clips / local_s:6.2f} clips/s  (CPU time / wall time = {cores_used:.2f}: VO and decoding "
        "run in threads)"
    )

    t = time.perf_counter()
    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, logging_level="WARNING")
    print(f"ray.init (local instance): {time.perf_counter() - t:.2f} s")
    setup = RunSetup("warm", config.model_copy(update={"out_dir": str(work / "w")}), 1)
    for n in args.workers:
        t = time.perf_counter()
        workers = acquire_workers(ray, {"num_cpus": 1.0, "num_gpus": 0.0}, n)
        ray.get([w.ping.remote() for w in workers])
        started_s = time.perf_counter() - t
        t = time.perf_counter()
        ray.get([w.run_shard.remote(setup, []) for w in workers])  # build the graph once per worker
        built_s = time.perf_counter() - t
        options = RayOptions(workers=n, shard_groups=args.shard_groups)
        t = time.perf_counter()
        summary = run_on_ray(
            config.model_copy(update={"out_dir": str(work / f"ray{n}")}), options, show_progress=False
        )
        ray_s = time.perf_counter() - t
        same = summary.metrics == local.metrics
        print(
            f"ray, {n} worker(s), {args.shard_groups} clip(s)/task: {ray_s:6.2f} s  "
            f"{args.clips / ray_s:6.2f} clips/s  x{local_s / ray_s:.2f} vs single-process  "
            f"(metrics identical: {same}; "
            f"workers started in {started_s:.2f} s, graph built in {built_s:.2f} s)"
        )
    overhead(ray, acquire_workers(ray, {"num_cpus": 1.0, "num_gpus": 0.0}, 1)[0], setup, load_samples(config))
    release_workers()
    ray.shutdown()


def overhead(ray: Any, worker: Any, setup: Any, samples: list) -> None:
    """Round trips of empty shards; per real shard, the driver's view minus the worker's compute, and
    what the driver spends on each result (fetch + append to predictions.jsonl)."""
    from kinegraph.rundir import PredictionLog
    from kinegraph.runner import group_samples

    ray.get(worker.run_shard.remote(setup, []))
    n = 200
    t = time.perf_counter()
    for _ in range(n):
        ray.get(worker.run_shard.remote(setup, []))
    sequential_ms = (time.perf_counter() - t) / n * 1e3
    t = time.perf_counter()
    ray.get([worker.run_shard.remote(setup, []) for _ in range(n)])
    pipelined_ms = (time.perf_counter() - t) / n * 1e3
    gaps, computes, driver = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        log = PredictionLog(Path(tmp) / "predictions.jsonl").open()
        for group in group_samples(samples)[:12]:
            t = time.perf_counter()
            ref = worker.run_shard.remote(setup, group)
            ray.wait([ref])
            waited = time.perf_counter() - t
            result = ray.get(ref)
            log.append(result.predictions)
            driver.append(time.perf_counter() - t - waited)
            gaps.append(waited - result.compute_s)
            computes.append(result.compute_s)
        log.close()
    gap, compute, driver_s = statistics.median(gaps), statistics.median(computes), statistics.median(driver)
    print("\nper-task scheduling overhead (one worker):")
    print(f"  empty shard, one at a time:   {sequential_ms:6.2f} ms per task")
    print(f"  empty shard, {n} in flight:   {pipelined_ms:6.2f} ms per task")
    print(
        f"  one-clip shard (14 samples):  {gap * 1e3:6.2f} ms median overhead on {compute * 1e3:.0f} ms "
        f"of worker compute ({gap / compute:.1%})"
    )
    print(
        f"  driver per one-clip result (fetch + append 14 predictions): {driver_s * 1e3:.2f} ms, "
        f"so one driver keeps up with about {1 / driver_s:.0f} shards/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=48)
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--workers", default=",".join(str(n) for n in sorted({1, os.cpu_count() or 1})))
    parser.add_argument("--shard-groups", type=int, default=1)
    args = parser.parse_args()
    args.workers = [int(n) for n in args.workers.split(",")]
    # the stand-in graph lives in this file: the driver and the Ray workers import it from here
    sys.path.insert(0, str(PERF_DIR))
    os.environ["PYTHONPATH"] = os.pathsep.join([str(PERF_DIR), *sys.path[1:]])
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        data = write_world(Path(tmp) / "data", args.clips, args.width)
        print(f"wrote the world in {time.perf_counter() - t:.1f} s")
        time_runs(args, data, Path(tmp))


if __name__ == "__main__":
    main()
