"""`synth tad` and `synth stsbench` with other road users: real loaders, official scorers, a real run."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.benchmarks.stsbench import loader as stsbench
from kinegraph.benchmarks.stsbench.world import write_stsbench_world
from kinegraph.benchmarks.tad import loader as tad
from kinegraph.benchmarks.tad.world import write_tad_world
from kinegraph.cli import app
from tests.support.suite_readers import stsbench_reader, tad_reader


def kinegraph(*args: object) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, (result.output, result.exception)
    return result.stdout


@pytest.fixture(scope="module")
def tad_set(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return write_tad_world(tmp_path_factory.mktemp("tad"), n_scenes=3, seed=0, agents=3)


@pytest.fixture(scope="module")
def sts_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_stsbench_world(tmp_path_factory.mktemp("sts"), n_records=22, seed=0, agents=2)


def test_tad_set_has_every_task_and_questions_about_each_vehicle(tad_set):
    samples = tad.load(tad_set[0], nuscenes_root=tad_set[1])
    assert set(Counter(s.question_id for s in samples)) == set(tad.TASKS)
    non_ego = [s for s in samples if s.question_id != "relative_action_localize" and not s.metadata["ego"]]
    assert {s.question_id for s in non_ego} == set(tad.TASKS) - tad.EGO_ONLY_TASKS
    objects = [s for s in samples if s.question_id == "temp_object_localize"]
    for s in objects:
        assert s.metadata["answer_value"] and set(s.metadata["answer_value"]) <= set(s.context["keysegments"])
    assert all(len(s.media.frame_paths) == 25 for s in objects)  # scene questions see every keyframe


def test_tad_set_is_deterministic_in_the_seed(tad_set, tmp_path):
    again, _ = write_tad_world(tmp_path, n_scenes=3, seed=0, agents=3)
    for name in ("temp_object_localize.jsonl", "exact_answer_action.jsonl"):
        assert (again / name).read_bytes() == (tad_set[0] / name).read_bytes()
    other, _ = write_tad_world(tmp_path / "other", n_scenes=3, seed=1, agents=3)
    assert (other / "mc_action.jsonl").read_bytes() != (tad_set[0] / "mc_action.jsonl").read_bytes()


def test_perfect_tad_predictions_score_one_through_evaluate(tad_set, tmp_path):
    for task, rows in tad.load_ground_truth(tad_set[0]).items():
        lines = [json.dumps({"idx": r["idx"], "pred": r["answer"]}) for r in rows]
        (tmp_path / f"{task}.jsonl").write_text("\n".join(lines) + "\n")
    metrics = json.loads(kinegraph("evaluate", "tad", tmp_path, "--data", tad_set[0]))
    assert metrics["all"]["average"] == pytest.approx(1.0)
    assert metrics["non-ego"]["temp_object_localize"] == pytest.approx(1.0)


def test_stsbench_set_has_all_four_groups_and_the_scripted_scenarios(sts_set):
    samples = stsbench.load(sts_set, data_root=sts_set.parent)
    assert Counter(s.question_id for s in samples) == {"ego": 8, "agent": 7, "ego_agent": 4, "agent_agent": 3}
    scenarios = {s.metadata["scenario"] for s in samples if s.question_id != "ego"}
    assert {
        "Agent is overtaking ego",
        "Agent is crossing street",
        "Agent is turning left",
        "Ego is waiting for pedestrian to cross",
        "Ego is overtaking agent",
        "Agent is walking alongside agent",
    } <= scenarios
    assert all(len(s.media.frame_paths) == 6 and s.options and len(s.options) == 5 for s in samples)


def test_perfect_stsbench_predictions_score_one_by_man_id(sts_set, tmp_path):
    samples = stsbench.load(sts_set, data_root=sts_set.parent)
    answers = [
        {"prediction": s.answer, "gt_letter": s.answer, "man_id": s.metadata["man_id"]} for s in samples
    ]
    (tmp_path / "pred.json").write_text(json.dumps(answers[::-1]))  # joined by man_id, not by position
    metrics = json.loads(kinegraph("evaluate", "stsbench", tmp_path / "pred.json", "--data", sts_set))
    assert metrics["average"] == pytest.approx(1.0) and metrics["n"]["agent_agent"] == 3


def test_loopback_runs_complete_on_the_agent_worlds(tad_set, sts_set, tmp_path):
    with OpenAILoopback(responder=tad_reader) as server:
        kinegraph(
            "run", "tad", "--graph", "tad.tcogmap", "--model", "vllm:loopback-vlm",
            "--base-url", server.base_url, "--data", tad_set[0],
            "--data-option", f"nuscenes_root={tad_set[1]}", "--out", tmp_path / "tad",
            "--no-cache", "--no-progress",
        )  # fmt: skip
    metrics = json.loads((tmp_path / "tad" / "metrics.json").read_text())
    assert metrics["all"]["temp_object_localize"] is not None and metrics["all"]["average"] is not None
    with OpenAILoopback(responder=stsbench_reader) as server:
        kinegraph(
            "run", "stsbench", "--graph", "stsbench.baseline", "--model", "vllm:loopback-vlm",
            "--base-url", server.base_url, "--data", sts_set, "--data-option", f"data_root={sts_set.parent}",
            "--out", tmp_path / "sts", "--no-cache", "--no-progress",
        )  # fmt: skip
        assert len(server.requests) == 22
    lines = (tmp_path / "sts" / "predictions.jsonl").read_text().splitlines()
    assert len(lines) == 22 and all(json.loads(line)["status"] == "ok" for line in lines)


def test_synth_cli_writes_agents_as_asked(tmp_path):
    kinegraph("synth", "stsbench", "--out", tmp_path / "sts", "--n", "10", "--agents", "1", "--seed", "2")
    records = json.loads((tmp_path / "sts" / "STSnu.json").read_text())
    assert len(records) == 10 and not any("other_agent" in r and "agent" in r for r in records)
    assert sum("agent" in r for r in records) == 2  # records 8 and 9: the first two agent scenarios
