"""VLM-free EgoDyn graphs through the runner."""

from __future__ import annotations

import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.benchmarks.egodyn.questions import VISION_BASELINE_QUESTIONS
from kinegraph.run import execute as run
from kinegraph.rundir import read_predictions
from kinegraph.types import RunConfig
from tests.support.run_data import write_egodyn_world
from tests.support.text_reader_model import text_reader


def test_oracle_graph_is_a_perfect_ceiling(tmp_path):
    data = write_egodyn_world(tmp_path / "data", n_clips=10)
    summary = run(
        RunConfig(benchmark="egodyn", graph="egodyn.oracle", data=str(data), out_dir=str(tmp_path / "r")),
        show_progress=False,
    )
    assert summary.status_counts == {"ok": 140}
    assert summary.metrics["global"]["accuracy"] == 1.0 and summary.metrics["consistency"]["rate"] == 1.0


def test_oracle_from_stored_features_answers_six_and_skips_the_rest(golden, tmp_path):
    summary = run(
        RunConfig(
            benchmark="egodyn",
            graph="egodyn.oracle",
            data=str(golden / "egodyn" / "selected_clips.json"),
            out_dir=str(tmp_path / "r"),
            limit=1400,
        ),
        show_progress=False,
    )
    assert summary.status_counts == {"ok": 600, "skipped": 800}
    assert summary.metrics["n_total"] == 600 and summary.metrics["global"]["accuracy"] == 1.0


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """A small synthetic EgoDyn set rendered by `kinegraph synth egodyn` (nuScenes frames + CARLA mp4s)."""
    from kinegraph.suites import suites

    return suites.get("egodyn").generate(tmp_path_factory.mktemp("synth"), n=4, seed=3)


@pytest.mark.slow
@pytest.mark.parametrize("graph", ["egodyn.vo", "egodyn.flow", "egodyn.gpu_flow"])
def test_geometric_baselines_answer_six_questions(rendered, tmp_path, graph):
    summary = run(
        RunConfig(benchmark="egodyn", graph=graph, data=str(rendered), out_dir=str(tmp_path / "r")),
        show_progress=False,
    )
    n = summary.n_predictions
    assert summary.status_counts == {"ok": n * 6 // 14, "skipped": n * 8 // 14}
    assert summary.decodes == n // 14
    assert summary.metrics["n_total"] == n * 6 // 14 and summary.metrics["n_parsed"] == n * 6 // 14
    assert set(summary.metrics["per_question"]) == set(VISION_BASELINE_QUESTIONS)


@pytest.mark.slow
def test_tools_graph_beats_blind_vision_with_a_text_only_model(rendered, tmp_path):
    with OpenAILoopback(responder=text_reader) as server:
        runs = {}
        for graph in ("egodyn.vision", "egodyn.tools"):
            runs[graph] = run(
                RunConfig(
                    benchmark="egodyn",
                    graph=graph,
                    model="vllm:reader",
                    base_url=server.base_url,
                    data=str(rendered),
                    out_dir=str(tmp_path / graph),
                    use_cache=False,
                ),
                show_progress=False,
            )
        prompt = next(r.body for r in server.requests if "Visual odometry" in str(r.body))
    text = prompt["messages"][0]["content"][0]["text"]
    assert "its reading of the questions it can answer" in text and "Dense optical flow" in text

    # on the six questions the probes measure, the same blind reader gains from the tool text
    def probe_accuracy(summary):
        per_question = summary.metrics["per_question"]
        return sum(per_question[q]["accuracy"] for q in VISION_BASELINE_QUESTIONS) / 6

    assert probe_accuracy(runs["egodyn.tools"]) > probe_accuracy(runs["egodyn.vision"]) + 0.1


@pytest.mark.slow
def test_gpu_flow_pools_clips_of_concurrent_groups_into_shared_calls(rendered, tmp_path):
    """RAFT (random weights from a real checkpoint file) through the run's tool-batching stage."""
    import torch

    from kinegraph.tools.raft import build_raft

    torch.manual_seed(0)
    weights = tmp_path / "raft_small.pth"
    torch.save(build_raft("small").state_dict(), weights)
    summary = run(
        RunConfig(
            benchmark="egodyn",
            graph="egodyn.gpu_flow",
            data=str(rendered),
            out_dir=str(tmp_path / "r"),
            concurrency=8,
            device="cpu",
            options={"method": "raft_small", "weights": str(weights), "batch_pairs": 64},
        ),
        show_progress=False,
    )
    clips = summary.n_predictions // 14
    assert summary.status_counts == {"ok": clips * 6, "skipped": clips * 8}
    assert 1 <= summary.tool_calls < clips  # clips of several groups shared one batched call
    first = next(p for p in read_predictions(tmp_path / "r" / "predictions.jsonl") if p.status == "ok")
    assert first.trace[0]["output"]["method"] == "raft_small"


@pytest.mark.slow
def test_run_refuses_a_device_it_does_not_have(rendered, tmp_path):
    import subprocess
    import sys

    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA; the refusal is for machines without it")
    for device, message in (("cuda", "torch.cuda.is_available() is False"), ("tpu", "device")):
        result = subprocess.run(
            [sys.executable, "-m", "kinegraph.cli", "run", "egodyn", "--graph", "egodyn.gpu_flow",
             "--data", str(rendered), "--out", str(tmp_path / device), "--device", device],
            capture_output=True, text=True,
        )  # fmt: skip
        assert result.returncode == 2, result.stderr
        assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
