"""The shard worker outside Ray: its snapshot cache, its shards, and when it rebuilds its graph."""

from __future__ import annotations

import asyncio

import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.agents.protocol import GenerateResponse
from kinegraph.benchmarks.tad.world import write_tad_world
from kinegraph.run.plan import plan_run
from kinegraph.run.ray_worker import RunSetup, ShardWorker, SnapshotCache, per_worker_concurrency
from kinegraph.run.setup import load_samples
from kinegraph.types import RoleModel, RunConfig
from tests.support.run_data import write_egodyn_world
from tests.support.suite_readers import tad_reader
from tests.support.text_reader_model import text_reader


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return write_egodyn_world(tmp_path_factory.mktemp("egodyn"), n_clips=2)


def test_snapshot_cache_serves_seed_and_returns_only_new_rows():
    seeded = GenerateResponse(text="left", model="m")
    cache = SnapshotCache({"k1": seeded.model_dump_json()})
    assert cache.get("k1").text == "left" and cache.get("k2") is None
    cache.put("k2", "vllm", "m", GenerateResponse(text="right", model="m"))
    assert cache.get("k2").text == "right" and len(cache) == 2
    drained = cache.drain()
    assert [(k, p, m) for k, p, m, _ in drained] == [("k2", "vllm", "m")]
    assert GenerateResponse.model_validate_json(drained[0][3]).text == "right"
    assert cache.drain() == []  # each row goes back to the driver once


def test_a_snapshot_row_that_does_not_parse_is_a_miss():
    good = GenerateResponse(text="left", model="m").model_dump_json()
    cache = SnapshotCache({"cut": good[:12], "good": good})
    assert cache.get("cut") is None and cache.get("good").text == "left"


def test_per_worker_concurrency_splits_the_run_wide_limit():
    assert per_worker_concurrency(8, 2) == 4
    assert per_worker_concurrency(8, 3) == 3  # rounded up: every worker can make at least one call
    assert per_worker_concurrency(1, 4) == 1


def test_worker_answers_shards_and_keeps_its_graph_across_runs(world, tmp_path):
    with OpenAILoopback(responder=text_reader) as server:
        config = RunConfig(
            benchmark="egodyn",
            graph="egodyn.trajectory",
            model="vllm:loopback-vlm",
            base_url=server.base_url,
            data=str(world),
            out_dir=str(tmp_path / "a"),
            options={"encoding": "timeseries"},
        )
        samples = load_samples(plan_run(config))
        worker = ShardWorker()

        async def scenario():
            first = await worker.run_shard(RunSetup("run-1", config, 4), samples[:14])
            graph = worker.graph
            second = await worker.run_shard(RunSetup("run-1", config, 4), samples[14:])
            same_graph = worker.graph is graph
            other = config.model_copy(update={"out_dir": str(tmp_path / "b")})
            await worker.run_shard(RunSetup("run-2", other, 4), samples[:1])
            kept_for_new_run = worker.graph is graph
            changed = config.model_copy(update={"options": {"encoding": "summary"}})
            await worker.run_shard(RunSetup("run-3", changed, 4), samples[:1])
            return first, second, same_graph, kept_for_new_run, worker.graph is not graph

        first, second, same_graph, kept, rebuilt = asyncio.run(scenario())
    assert first.groups == 1 and len(first.predictions) == 14 and first.decodes == 1
    assert {p.group for p in second.predictions} == {samples[14].group}
    assert all(
        p.status == "ok" and p.graph == "egodyn.trajectory" for p in first.predictions + second.predictions
    )
    # new responses come back as cache rows with the shard that made them
    assert len(first.cache_rows) == 14 and {r[1:3] for r in first.cache_rows} == {("vllm", "loopback-vlm")}
    assert same_graph and kept and rebuilt


def test_worker_runs_each_role_on_its_own_backend(tmp_path):
    tad, nus = write_tad_world(tmp_path / "tad", n_scenes=1, seed=0)
    with OpenAILoopback(responder=tad_reader) as vlm, OpenAILoopback(responder=tad_reader) as llm:
        config = RunConfig(
            benchmark="tad",
            graph="tad.scene_cot",
            model="vllm:captioner",
            base_url=vlm.base_url,
            roles={"answerer": RoleModel(model="vllm:answerer", base_url=llm.base_url)},
            data=str(tad),
            loader_options={"nuscenes_root": str(nus)},
            out_dir=str(tmp_path / "run"),
        )
        samples = load_samples(plan_run(config))[:3]
        result = asyncio.run(ShardWorker().run_shard(RunSetup("run-1", config, 4), samples))
        captioning, answering = len(vlm.requests), len(llm.requests)
    assert answering == 3 and captioning % 4 == 0 and captioning > 0
    assert all(p.usage_by_role["answerer"].requests == 1 for p in result.predictions)
    # the worker's snapshot cache took each role's new responses, under each role's model
    models = [r[1:3] for r in result.cache_rows]
    assert models.count(("vllm", "answerer")) == 3 and models.count(("vllm", "captioner")) == captioning
