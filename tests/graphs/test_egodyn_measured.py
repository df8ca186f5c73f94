"""`egodyn.measured` and `egodyn.measured_trajectory` end to end on rendered CARLA-style clips.

The clips are rendered videos with known poses (`write_carla_clips`); the graphs see only the videos,
their frame rate and the rows' camera objects. The VLM is a loopback server that reads only text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.benchmarks.egodyn.extract import write_jsonl, write_qa
from kinegraph.benchmarks.egodyn.world import write_carla_clips
from kinegraph.report import compare
from kinegraph.run import execute as run
from kinegraph.types import RunConfig
from tests.support.text_reader_model import text_reader


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("measured")
    write_qa(write_carla_clips(root, 16, seed=21, width_px=480, height_px=270), root / "carla_clips")
    return root


def _run(data: Path, out: Path, graph: str, **extra) -> object:
    config = RunConfig(
        benchmark="egodyn", graph=graph, data=str(data), out_dir=str(out), concurrency=2, **extra
    )
    return run(config, show_progress=False)


def _predictions(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().split("\n") if line]


@pytest.mark.slow
def test_measured_answers_all_14_questions_from_frames(clips: Path, tmp_path: Path) -> None:
    measured = _run(clips, tmp_path / "measured", "egodyn.measured")
    vo = _run(clips, tmp_path / "vo", "egodyn.vo")
    assert measured.status_counts == {"ok": 16 * 14}
    assert len(measured.metrics["per_question"]) == 14 and len(vo.metrics["per_question"]) == 6
    assert measured.headline["balanced_acc"] > 0.85
    assert measured.headline["balanced_acc"] > vo.headline["balanced_acc"]
    first = _predictions(tmp_path / "measured")[0]
    signals = first["trace"][0]["output"]
    trajectory = signals["trajectory"]
    assert len(trajectory["x_m"]) == 31 and len(trajectory["confidence"]) == 30
    assert trajectory["camera"]["source"] == "data"
    assert len(signals["kinematics"]["speed"]) == 31
    assert first["frames"]["indices"] == list(range(31))  # every frame of the clip was used
    for prediction in _predictions(tmp_path / "measured"):  # a half not resolved is answered as recorded
        unresolved = prediction["trace"][0]["output"]["unresolved"]
        if prediction["question_id"] in unresolved:
            entry = unresolved[prediction["question_id"]]
            assert prediction["answer"] == entry["answer"] != entry["measured"]


@pytest.mark.slow
def test_measured_without_camera_uses_the_documented_defaults_and_options(
    clips: Path, tmp_path: Path
) -> None:
    data = tmp_path / "nocam"
    data.mkdir()
    (data / "carla_videos_simulation").symlink_to(clips / "carla_videos_simulation")
    (data / "carla_clips").mkdir()
    (data / "carla_clips" / "arrays").symlink_to(clips / "carla_clips" / "arrays")
    (data / "carla_clips" / "qa.jsonl").symlink_to(clips / "carla_clips" / "qa.jsonl")
    rows = [
        json.loads(line)
        for line in (clips / "carla_clips" / "clips_index.jsonl").read_text().split("\n")
        if line
    ]
    camera = rows[0]["camera"]
    write_jsonl(
        data / "carla_clips" / "clips_index.jsonl",
        [{k: v for k, v in r.items() if k != "camera"} for r in rows],
    )
    alone = {"scene_camera": False}  # the clip alone: its scene-mates would lend a lens they measured
    default = _run(data, tmp_path / "default", "egodyn.measured", limit=14, options=alone)
    trace = _predictions(tmp_path / "default")[0]["trace"][0]["output"]["trajectory"]
    assert trace["camera"]["source"] == "default" and trace["camera"]["fx_px"] == pytest.approx(240.0)
    assert default.status_counts == {"ok": 14}
    options = {"focal_px": camera["fx"], "camera_height_m": camera["height_m"]}
    _run(data, tmp_path / "options", "egodyn.measured", limit=14, options=options)
    trace = _predictions(tmp_path / "options")[0]["trace"][0]["output"]["trajectory"]
    assert trace["camera"]["source"] == "options" and trace["camera"]["fx_px"] == pytest.approx(
        camera["fx"], abs=0.01
    )


def test_undecodable_or_trackless_clips_are_recorded_errors(clips: Path, tmp_path: Path) -> None:
    data = tmp_path / "broken"
    (data / "carla_videos_simulation").mkdir(parents=True)
    (data / "carla_clips").mkdir()
    (data / "carla_clips" / "arrays").symlink_to(clips / "carla_clips" / "arrays")
    rows = [
        json.loads(line)
        for line in (clips / "carla_clips" / "clips_index.jsonl").read_text().split("\n")
        if line
    ]
    qa = [json.loads(line) for line in (clips / "carla_clips" / "qa.jsonl").read_text().split("\n") if line]
    write_jsonl(data / "carla_clips" / "clips_index.jsonl", rows[:2])
    write_jsonl(
        data / "carla_clips" / "qa.jsonl",
        [q for q in qa if q["clip_id"] in (rows[0]["clip_id"], rows[1]["clip_id"])],
    )
    (data / "carla_videos_simulation" / f"{rows[0]['clip_id']}.mp4").write_bytes(b"not a video")
    import numpy as np

    from kinegraph.media import write_video

    write_video(
        data / "carla_videos_simulation" / f"{rows[1]['clip_id']}.mp4",
        np.full((31, 270, 480, 3), 90, np.uint8),
        10.0,
    )
    summary = _run(data, tmp_path / "run", "egodyn.measured")
    assert summary.status_counts == {"input_error": 28}
    errors = {p["error"] for p in _predictions(tmp_path / "run")}
    assert any("video" in e for e in errors) and any("enough tracked road" in e for e in errors)


@pytest.mark.slow
def test_measured_trajectory_beats_vision_with_a_text_only_model(clips: Path, tmp_path: Path) -> None:
    def config(graph: str, out: str, **options) -> RunConfig:
        return RunConfig(
            benchmark="egodyn", graph=graph, model="vllm:loopback-vlm", base_url=server.base_url,
            data=str(clips), out_dir=str(tmp_path / out), concurrency=8, cache=str(tmp_path / "c.sqlite"),
            options=options,
        )  # fmt: skip

    with OpenAILoopback(responder=text_reader) as server:
        vision = run(config("egodyn.vision", "vision"), show_progress=False)
        measured = run(config("egodyn.measured_trajectory", "mt", encoding="timeseries"), show_progress=False)
        prompt = server.requests[-1].body["messages"][0]["content"]
    assert sum(p["type"] == "image_url" for p in prompt) == 10  # the VLM still sees 10 frames
    assert "speed(m/s):" in prompt[0]["text"]
    assert vision.status_counts == {"ok": 224} and measured.status_counts == {"ok": 224}
    comparison = compare([tmp_path / "vision", tmp_path / "mt"], n_boot=500)
    delta = comparison.deltas[1]
    assert delta.low > 0.2, "the gain's 95% interval is well above zero"
    trace = _predictions(tmp_path / "mt")[0]["trace"]
    assert any("measured" in str(step) for step in trace) or "speed(m/s)" in trace[0]["prompt"]


@pytest.mark.slow
def test_tcogmap_probe_reads_the_measured_trajectory_like_the_true_poses(clips: Path) -> None:
    """TCogMap's Algorithm 1 on the trajectory measured from the video vs on the clip's true poses."""
    import numpy as np

    from kinegraph.benchmarks.egodyn import loader as egodyn
    from kinegraph.benchmarks.egodyn.measured_clip import tcogmap_probe
    from kinegraph.tools.tcogmap import classify_ego_motion

    samples = {s.group: s for s in egodyn.load(str(clips))}
    agree, classes = 0, set()
    for clip, sample in samples.items():
        with np.load(clips / "carla_clips" / "arrays" / f"{clip}.npz") as arrays:
            t, pos, yaw = arrays["timestamps"], arrays["position"], arrays["yaw"]
        c, s = np.cos(yaw[0]), np.sin(yaw[0])
        rel = (pos - pos[0]) @ np.array([[c, -s], [s, c]])
        half = (yaw - yaw[0]) / 2
        truth = classify_ego_motion(
            np.round(t * 1e6),
            np.column_stack([rel, np.zeros(len(t))]),
            np.column_stack([np.cos(half), np.zeros(len(t)), np.zeros(len(t)), np.sin(half)]),
        )
        measured = tcogmap_probe(sample)
        assert measured["summary"].startswith("the ego vehicle is ") and measured["answers"] == {}
        assert measured["camera"]["source"] == "data"
        agree += measured["motion_class"] == truth
        classes.add(truth)
    assert len(classes) >= 3  # the clips cover turns, straight driving and speed changes
    assert agree >= len(samples) - 2, f"{agree} of {len(samples)} clips agree with TCogMap on true poses"


@pytest.mark.slow
def test_dense_correspondences_run_through_the_tool_batching_stage(clips: Path, tmp_path: Path) -> None:
    """`correspondences=raft_small` (random weights from a real checkpoint file): the clips' flow goes
    through the run's batching stage; whatever the untrained net gives is measured or recorded, never lost."""
    import torch

    from kinegraph.tools.raft import build_raft

    torch.manual_seed(0)
    weights = tmp_path / "raft_small.pth"
    torch.save(build_raft("small").state_dict(), weights)
    summary = _run(
        clips, tmp_path / "raft", "egodyn.measured", limit=28, device="cpu",
        options={"correspondences": "raft_small", "weights": str(weights)},
    )  # fmt: skip
    assert summary.n_predictions == 28 and set(summary.status_counts) <= {"ok", "input_error"}
    assert summary.tool_calls >= 1
    for pred in _predictions(tmp_path / "raft"):
        assert pred["status"] == "ok" or "measuring the ego trajectory" in pred["error"]
    with pytest.raises(ValueError, match="correspondences must be 'lk' or one of"):
        _run(clips, tmp_path / "bad", "egodyn.measured", options={"correspondences": "sift"})
