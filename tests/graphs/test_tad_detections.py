"""Scene-CoT's detector context (TAD Table 11): counts per keyframe from a file, on its first step."""

from __future__ import annotations

import json

import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.benchmarks.tad.world import write_tad_world
from kinegraph.graphs import graphs
from kinegraph.graphs.tad.detections import detection_context, frame_counts, load_detections
from kinegraph.report.runs import labelled
from tests.support.suite_readers import tad_reader


@pytest.fixture(scope="module")
def world_with_agents(tmp_path_factory):
    return write_tad_world(tmp_path_factory.mktemp("tad"), n_scenes=2, seed=0, agents=2)


def test_counts_read_as_the_paper_writes_them():
    assert frame_counts({"car": 5, "bicycle": 2}) == "5 cars, 2 bicycles"
    assert frame_counts({"bus": 1}) == "1 bus" and frame_counts({}) == "no vehicles"
    block = detection_context(["a", "b"], {"a": {"truck": 2}, "b": {}})
    assert block.splitlines()[1:] == ["Frame1: 2 trucks", "Frame2: no vehicles"]
    with pytest.raises(KeyError, match="no entry for keyframe 'c'"):
        detection_context(["a", "c"], {"a": {}})


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[1, 2]", "expected an object of sample_token: counts"),
        ('{"t": {"person": 1}}', "counts 'person'; classes: bicycle, car, motorcycle, bus, truck"),
        ('{"t": {"car": -1}}', "car count -1 is no count"),
        ('{"t": {"car": 1.5}}', "car count 1.5 is no count"),
        ("{", "unreadable"),
    ],
)
def test_a_bad_detections_file_is_refused_in_one_line_when_the_graph_is_built(tmp_path, content, message):
    path = tmp_path / "detections.json"
    path.write_text(content)
    with pytest.raises(ValueError, match="detections file") as info:
        graphs.get("tad.scene_cot").build({"detections": str(path)})
    assert message in str(info.value) and "\n" not in str(info.value)


def test_the_synthetic_world_writes_what_its_camera_shows(world_with_agents):
    tad, _ = world_with_agents
    counts = load_detections(tad / "detections.json")
    keysegments = [json.loads(line) for line in (tad / "keysegments.jsonl").read_text().splitlines()]
    assert set(counts) == {t for row in keysegments for t in row["sample_tokens"]}
    object_questions = (tad / "temp_object_localize.jsonl").read_text()
    seen = {c for frame in counts.values() for c in frame}
    assert seen and all(c in object_questions for c in seen)  # the vehicles the questions ask about


def test_detections_reach_the_first_step_and_label_the_run_non_official(
    world_with_agents, kinegraph, tmp_path
):
    tad, nus = world_with_agents
    detections = tad / "detections.json"
    with OpenAILoopback(responder=tad_reader) as server:
        kinegraph(
            "run", "tad", "--graph", "tad.scene_cot", "--model", "vllm:loopback-vlm", "--base-url",
            server.base_url, "--data", str(tad), "--data-option", f"nuscenes_root={nus}", "--out",
            str(tmp_path / "run"), "--no-cache", "--no-progress", "--limit", "4",
            "-O", f"detections={detections}",
        )  # fmt: skip
        first_steps = [
            r.body["messages"][0]["content"][-1]["text"]
            for r in server.requests
            if len(r.body["messages"]) == 1 and r.body["messages"][0]["role"] == "user"
        ]
    assert first_steps and all(
        "Objects an object detector counted in each frame:\nFrame1: " in t for t in first_steps
    )
    assert any(name in t for t in first_steps for name in ("car", "truck", "bus", "motorcycle"))
    assert labelled("r", "tad.scene_cot", {"detections": str(detections)}) == "r (non-official)"
    assert labelled("r", "tad.scene_cot", {}) == "r"


def test_a_keyframe_the_file_misses_fails_its_scene(world_with_agents, kinegraph, tmp_path):
    tad, nus = world_with_agents
    empty = tmp_path / "none.json"
    empty.write_text("{}")
    with OpenAILoopback(responder=tad_reader) as server:
        kinegraph(
            "run", "tad", "--graph", "tad.scene_cot", "--model", "vllm:loopback-vlm", "--base-url",
            server.base_url, "--data", str(tad), "--data-option", f"nuscenes_root={nus}", "--out",
            str(tmp_path / "run"), "--no-cache", "--no-progress", "--limit", "2", "-O", f"detections={empty}",
            expect=1,
        )  # fmt: skip
        assert not server.requests  # nothing asked without the context
    predictions = [
        json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()
    ]
    assert predictions and all("no entry for keyframe" in (p.get("error") or "") for p in predictions)


def test_the_cli_refuses_a_bad_detections_file_with_exit_2(world_with_agents, kinegraph, tmp_path):
    tad, nus = world_with_agents
    bad = tmp_path / "bad.json"
    bad.write_text('{"t": {"person": 1}}')
    result = kinegraph(
        "run", "tad", "--graph", "tad.scene_cot", "--model", "scripted:s", "--model-option", "responses=A",
        "--data", str(tad), "--data-option", f"nuscenes_root={nus}", "--out", str(tmp_path / "run"),
        "-O", f"detections={bad}", expect=2,
    )  # fmt: skip
    assert "counts 'person'" in result.output and "Traceback" not in result.output
