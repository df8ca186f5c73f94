"""Ray vs the single-process runner on a CPU-heavy tool graph: VO over 10-frame clips.

Prints throughput (clips/s) of the single-process runner and of Ray on this machine's cores, Ray's
start-up costs, and the per-task scheduling overhead (empty-shard round trips, and per real shard the
driver-observed time minus the worker's compute time). The graph is `egodyn.vo`: decode 10 frames once
per clip, run KLT + essential-matrix VO, answer the six VO probe questions from it.

    python perf/ray_scaling.py [--clips 48] [--workers 1,2] [--shard-groups 1]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any


def time_runs(args: argparse.Namespace, data: Path, work: Path) -> None:
    import ray

    from kinegraph.run import execute as run
    from kinegraph.run.on_ray import RayOptions, acquire_workers, release_workers, run_on_ray
    from kinegraph.run.plan import plan_run
    from kinegraph.run.ray_worker import RunSetup
    from kinegraph.run.setup import load_samples
    from kinegraph.types import RunConfig

    config = RunConfig(benchmark="egodyn", graph="egodyn.vo", data=str(data), out_dir=str(work / "local"))
    n_samples = len(load_samples(plan_run(config)))
    print("graph: egodyn.vo (decode 10 frames once per clip, KLT + essential-matrix VO, six answers)")
    print(f"clips: {args.clips} (half nuScenes-style 800x450 JPEG frames, half CARLA-style 640x360 mp4)")
    print(f"samples: {n_samples} (14 questions per clip)")
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
    overhead(
        ray,
        acquire_workers(ray, {"num_cpus": 1.0, "num_gpus": 0.0}, 1)[0],
        setup,
        load_samples(plan_run(config)),
    )
    release_workers()
    ray.shutdown()


def overhead(ray: Any, worker: Any, setup: Any, samples: list) -> None:
    """Round trips of empty shards; per real shard, the driver's view minus the worker's compute, and
    what the driver spends on each result (fetch + append to predictions.jsonl)."""
    from kinegraph.run.invoke import group_samples
    from kinegraph.rundir import PredictionLog

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
    from kinegraph.suites import suites

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=48)
    parser.add_argument("--workers", default=",".join(str(n) for n in sorted({1, os.cpu_count() or 1})))
    parser.add_argument("--shard-groups", type=int, default=1)
    args = parser.parse_args()
    args.workers = [int(n) for n in args.workers.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        data = suites.get("egodyn").generate(Path(tmp) / "data", n=args.clips // 2, seed=0)
        print(f"wrote the world in {time.perf_counter() - t:.1f} s")
        time_runs(args, data, Path(tmp))


if __name__ == "__main__":
    main()
