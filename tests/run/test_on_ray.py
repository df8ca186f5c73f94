"""Ray runs against single-process runs on one local Ray instance (num_cpus=2) shared by the module.

Same predictions and metrics for a VLM-free graph and a loopback-model graph, a resumed run that
schedules only missing samples, a driver killed midway then rerun, and the workers' cache rows merged.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.cli.common import fill_optional_values
from kinegraph.graphs import GraphSpec
from kinegraph.run import execute as run
from kinegraph.run.invoke import group_samples
from kinegraph.run.on_ray import (
    RayOptions,
    release_workers,
    run_on_ray,
    shard_groups,
    worker_count,
    worker_resources,
)
from kinegraph.run.plan import plan_run
from kinegraph.run.setup import load_samples
from kinegraph.rundir import read_predictions
from kinegraph.types import RunConfig
from tests.support.lazy import lazy_or_skip
from tests.support.run_data import write_egodyn_world, write_graph_module
from tests.support.text_reader_model import text_reader

ray = lazy_or_skip("ray", "Ray is not installed (pip install 'kinegraph[ray]')")


@pytest.fixture(scope="module")
def graph_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("graphs")


@pytest.fixture(scope="module")
def ray_address(graph_dir):
    """One local Ray instance; its workers find the test graph module through PYTHONPATH."""
    graph_spec = write_graph_module(graph_dir)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", os.pathsep.join([str(graph_dir), *sys.path]))
        mp.syspath_prepend(str(graph_dir))
        ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
        try:
            yield ray.get_runtime_context().gcs_address, graph_spec
        finally:
            ray.shutdown()


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return write_egodyn_world(tmp_path_factory.mktemp("egodyn"), n_clips=8)


def by_id(out_dir):
    """Predictions keyed by sample id, without wall-clock latency (the only field allowed to differ)."""
    return {
        p.sample_id: p.model_dump(exclude={"latency_s"})
        for p in read_predictions(out_dir / "predictions.jsonl")
    }


def metrics(out_dir):
    return json.loads((out_dir / "metrics.json").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("graph", ["user graph", "egodyn.oracle"])
def test_vlm_free_graph_same_predictions_and_metrics_as_single_process(ray_address, world, tmp_path, graph):
    graph_spec = ray_address[1] if graph == "user graph" else graph
    config = RunConfig(benchmark="egodyn", graph=graph_spec, data=str(world), out_dir=str(tmp_path / "local"))
    local = run(config, show_progress=False)
    on_ray = run_on_ray(
        config.model_copy(update={"out_dir": str(tmp_path / "ray")}),
        RayOptions(shard_groups=3),
        show_progress=False,
    )
    assert local.n_predictions == on_ray.n_predictions == 112
    assert by_id(tmp_path / "ray") == by_id(tmp_path / "local")
    assert metrics(tmp_path / "ray") == metrics(tmp_path / "local")
    # clip-aligned shards: a clip's frames are decoded once (the oracle reads arrays, no frames)
    assert on_ray.groups == 8 and on_ray.decodes == local.decodes == (8 if graph == "user graph" else 0)
    info = json.loads((tmp_path / "ray" / "run.json").read_text())
    assert info["status"] == "completed" and info["ray"]["shards"] == 3 and info["ray"]["workers"] == 2


@pytest.mark.slow
def test_loopback_model_graph_same_predictions_and_metrics_as_single_process(ray_address, world, tmp_path):
    with OpenAILoopback(responder=text_reader) as server:
        config = RunConfig(
            benchmark="egodyn",
            graph="egodyn.trajectory",
            model="vllm:loopback-vlm",
            base_url=server.base_url,
            data=str(world),
            out_dir=str(tmp_path / "local"),
            use_cache=False,
            options={"encoding": "timeseries"},
        )
        local = run(config, show_progress=False)
        n_local = len(server.requests)
        on_ray = run_on_ray(
            config.model_copy(update={"out_dir": str(tmp_path / "ray")}), RayOptions(), show_progress=False
        )
        assert n_local == len(server.requests) - n_local == 112  # both ran every question
    assert on_ray.status_counts == {"ok": 112} and on_ray.usage.requests == 112
    assert by_id(tmp_path / "ray") == by_id(tmp_path / "local")
    assert metrics(tmp_path / "ray") == metrics(tmp_path / "local")
    assert on_ray.headline == local.headline and on_ray.headline["balanced_acc"] > 0.5


@pytest.mark.slow
def test_max_cost_on_ray_stops_before_the_budget_is_crossed(ray_address, world, tmp_path):
    # each answer costs (500 + 1) tokens x $1000/Mtok = $0.501; the 112 questions would cost $56
    prices = tmp_path / "prices.yaml"
    prices.write_text("openai:\n  loopback-vlm: {input: 1000, output: 1000}\n")
    with OpenAILoopback(responder=text_reader, usage=(500, 1)) as server:
        config = RunConfig(
            benchmark="egodyn",
            graph="egodyn.vision",
            model="openai:loopback-vlm",
            base_url=server.base_url,
            data=str(world),
            out_dir=str(tmp_path / "ray"),
            concurrency=16,
            use_cache=False,
            max_cost_usd=3.0,
            model_options={"api_key": "k", "prices": str(prices)},
        )
        summary = run_on_ray(config, RayOptions(workers=2), show_progress=False)
    assert 1 <= server.received and server.received * 0.501 <= 3.0
    assert summary.status == "budget_exceeded" and summary.usage.cost_usd <= 3.0
    assert summary.status_counts.get("ok") == server.received


@pytest.mark.slow
def test_workers_cache_rows_merge_into_the_driver_cache(ray_address, world, tmp_path):
    cache = tmp_path / "cache.sqlite"
    with OpenAILoopback(responder=text_reader) as server:
        config = RunConfig(
            benchmark="egodyn",
            graph="egodyn.trajectory",
            model="vllm:loopback-vlm",
            base_url=server.base_url,
            data=str(world),
            out_dir=str(tmp_path / "first"),
            cache=str(cache),
            limit=28,
            options={"encoding": "timeseries"},
        )
        first = run_on_ray(config, RayOptions(), show_progress=False)
        made = len(server.requests)
        with sqlite3.connect(cache) as conn:
            rows = conn.execute("SELECT provider, model, COUNT(*) FROM responses GROUP BY 1, 2").fetchall()
        assert rows == [("vllm", "loopback-vlm", made)] and made + first.usage.cached_requests == 28
        # a new run directory on Ray: every worker starts from the merged cache, zero requests
        again = run_on_ray(
            config.model_copy(update={"out_dir": str(tmp_path / "second")}), RayOptions(), show_progress=False
        )
        assert len(server.requests) == made
    assert again.usage.cached_requests == 28 and again.usage.requests == 0
    assert by_id(tmp_path / "second").keys() == by_id(tmp_path / "first").keys()


@pytest.mark.slow
def test_rerun_schedules_only_missing_samples(ray_address, world, tmp_path):
    _, graph_spec = ray_address
    config = RunConfig(
        benchmark="egodyn", graph=graph_spec, data=str(world), out_dir=str(tmp_path / "run"), limit=30
    )
    assert run_on_ray(config, show_progress=False).n_new == 30
    full = run_on_ray(config.model_copy(update={"limit": None}), show_progress=False)
    assert full.n_new == 82 and full.n_predictions == 112
    assert full.groups == 6  # clips 2..7: clip 2 had two of its 14 questions left, so it ran again
    final = read_predictions(tmp_path / "run" / "predictions.jsonl")
    assert len(final) == 112 and len({p.sample_id for p in final}) == 112
    done = run_on_ray(config.model_copy(update={"limit": None}), show_progress=False)
    assert done.n_new == 0 and done.groups == 0
    assert json.loads((tmp_path / "run" / "run.json").read_text())["sessions"] == 3


@pytest.mark.slow
def test_sweep_on_ray_same_metrics_as_local_sweep(ray_address, world, tmp_path):
    from kinegraph.run.sweep import run_sweep

    _, graph_spec = ray_address
    with OpenAILoopback(responder=text_reader) as server:
        path = tmp_path / "sweep.yaml"
        path.write_text(
            f"benchmarks: {{egodyn: {{data: '{world}', limit: 56}}}}\n"
            f"graphs: ['{graph_spec}', {{graph: egodyn.trajectory, options: {{encoding: timeseries}}}}]\n"
            f"models: ['vllm:reader']\nrun: {{base_url: '{server.base_url}', use_cache: false}}\n"
            "ray: {shard_groups: 2}\n"
        )
        local = run_sweep(path, tmp_path / "local", show_progress=False, n_boot=100)
        on_ray = run_sweep(path, tmp_path / "ray", use_ray=True, show_progress=False, n_boot=100)
    assert [r.status for r in on_ray.runs] == ["completed", "completed"]
    for a, b in zip(local.runs, on_ray.runs, strict=True):
        assert a.name == b.name and a.headline == b.headline
        assert metrics(tmp_path / "ray" / "egodyn" / b.name) == metrics(
            tmp_path / "local" / "egodyn" / a.name
        )
        assert (
            json.loads((tmp_path / "ray" / "egodyn" / b.name / "run.json").read_text())["ray"]["shards"] == 2
        )
    assert (tmp_path / "ray" / "report.html").exists()


@pytest.mark.slow
def test_killed_midway_then_rerun_with_ray_gives_one_prediction_per_sample(
    ray_address, world, graph_dir, tmp_path
):
    address, graph_spec = ray_address
    release_workers()  # the CLI's driver is another job: give it the CPUs this module's runs kept
    out = tmp_path / "run"
    worker_env = {"PYTHONPATH": os.pathsep.join([str(graph_dir), *sys.path]), "SLOW_GROUP_S": "0.5"}
    cmd = [
        sys.executable,
        "-m",
        "kinegraph.cli",
        "run",
        "egodyn",
        "--graph",
        graph_spec,
        "--data",
        str(world),
        "--out",
        str(out),
        "--no-progress",
        "--ray-runtime-env",
        json.dumps({"env_vars": worker_env}),
        "--ray",
        address,
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(graph_dir), *sys.path])}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    log = out / "predictions.jsonl"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and (not log.exists() or log.read_text().count("\n") < 28):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial = read_predictions(log)
    assert 28 <= len(partial) < 112, "killed midway"
    with log.open("a") as handle:  # what a kill in the middle of a write leaves behind
        handle.write('{"sample_id": "qa_007_speed_tr')
    worker_env["SLOW_GROUP_S"] = "0"
    cmd[cmd.index("--ray-runtime-env") + 1] = json.dumps({"env_vars": worker_env})
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["new"] == 112 - len(partial)  # only the missing samples ran
    final = read_predictions(log)
    assert len(final) == 112 and len({p.sample_id for p in final}) == 112
    info = json.loads((out / "run.json").read_text())
    assert info["status"] == "completed" and info["sessions"] == 2


def test_shards_are_whole_clips(world):
    config = RunConfig(benchmark="egodyn", graph="egodyn.oracle", data=str(world), out_dir="unused")
    samples = load_samples(plan_run(config))
    shards = shard_groups(group_samples(samples[3:]), 3)
    assert [len(s) for s in shards] == [11 + 28, 42, 28]  # 8 clips of 14, the first one partly done
    for shard in shards:
        clips = {s.group for s in shard}
        assert all(s.group in clips for s in shard)
    assert [len({s.group for s in shard}) for shard in shards] == [3, 3, 2]


_Builder = GraphSpec(name="g", target="g:build", description="a model graph")
_GpuTool = GraphSpec(
    name="t", target="t:build", description="a GPU tool graph", needs_model=False, needs_gpu=True
)


def test_worker_resources_cpu_gpu_and_counts():
    api = RunConfig(benchmark="egodyn", graph="g", model="openai:gpt-4o", out_dir="o", concurrency=4)
    local = api.model_copy(update={"model": "transformers:/models/qwen"})
    cpu_box, gpu_box = {"CPU": 16.0}, {"CPU": 16.0, "GPU": 2.0}
    assert worker_resources(api, _Builder, RayOptions(), gpu_box) == {"num_cpus": 1.0, "num_gpus": 0.0}
    assert worker_resources(local, _Builder, RayOptions(), gpu_box) == {"num_cpus": 1.0, "num_gpus": 1.0}
    assert worker_resources(api, _GpuTool, RayOptions(), gpu_box)["num_gpus"] == 1.0
    assert worker_resources(local, _Builder, RayOptions(), cpu_box)["num_gpus"] == 0.0  # runs on CPU
    assert worker_resources(api, _GpuTool, RayOptions(num_gpus=0.5), gpu_box)["num_gpus"] == 0.5
    with pytest.raises(ValueError, match="cluster has 0 GPUs"):
        worker_resources(api, _GpuTool, RayOptions(num_gpus=1), cpu_box)
    gpu_res = {"num_cpus": 1.0, "num_gpus": 0.5}
    assert worker_count(gpu_res, gpu_box, n_shards=100, api_bound=False, config=local) == 4
    cpu_res = {"num_cpus": 1.0, "num_gpus": 0.0}
    assert worker_count(cpu_res, cpu_box, n_shards=100, api_bound=False, config=api) == 16
    assert worker_count(cpu_res, cpu_box, n_shards=3, api_bound=False, config=api) == 3
    assert worker_count(cpu_res, cpu_box, n_shards=100, api_bound=True, config=api) == 4
    assert worker_count(cpu_res, cpu_box, n_shards=100, api_bound=True, config=api, requested=12) == 12
    assert worker_count(cpu_res, cpu_box, n_shards=5, api_bound=False, config=api, requested=12) == 5
    with pytest.raises(ValueError, match="holds 4 workers"):
        worker_count(gpu_res, gpu_box, n_shards=100, api_bound=False, config=local, requested=5)


def test_ray_flag_takes_an_optional_address():
    assert fill_optional_values(["run", "egodyn", "--ray"]) == ["run", "egodyn", "--ray=local"]
    assert fill_optional_values(["--ray", "--out", "d"]) == ["--ray=local", "--out", "d"]
    assert fill_optional_values(["--ray", "auto", "--out", "d"]) == ["--ray", "auto", "--out", "d"]
    assert fill_optional_values(["--ray=10.0.0.1:6379"]) == ["--ray=10.0.0.1:6379"]
