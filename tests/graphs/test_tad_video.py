"""`tad.baseline` with `video=native`: each question's keyframes as one mp4 at 2 fps, as the TAD paper gives
Gemini and Cosmos-Reason, end to end through `kinegraph run` against the vLLM and Google loopback servers."""

from __future__ import annotations

import base64
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from kinegraph.agents.loopback import GoogleLoopback, OpenAILoopback
from kinegraph.benchmarks.tad.loader import load
from kinegraph.benchmarks.tad.world import write_tad_world
from kinegraph.errors import DataError
from kinegraph.graphs.tad.video import capture_rate_hz, scene_videos
from kinegraph.media import read_image, read_video, write_image
from kinegraph.types import Media, Sample
from tests.support.suite_readers import tad_reader

N_QUESTIONS = 14  # one scene: 8 segment questions (4 keysegments of 7 keyframes), 6 of its 25 keyframes


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(TAD config dir, nuScenes root) of one scripted scene."""
    return write_tad_world(tmp_path_factory.mktemp("tad-video"), n_scenes=1, seed=0)


@pytest.fixture(scope="module")
def samples(scene: tuple[Path, Path]) -> list[Sample]:
    return load(scene[0], nuscenes_root=scene[1])


def _run(kinegraph, world, out, server, model, *extra, graph="tad.baseline", expect=0):
    tad, nus = world
    return kinegraph(
        "run", "tad", "--graph", graph, "--model", model, "--base-url", server.base_url, "--data", tad,
        "--data-option", f"nuscenes_root={nus}", "--out", out, "--no-cache", "--no-progress", *extra,
        expect=expect,
    )  # fmt: skip


def _decoded(data: bytes, tmp_path: Path) -> tuple[np.ndarray, float]:
    path = tmp_path / "received.mp4"
    path.write_bytes(data)
    return read_video(path)


def _frames_of(video: np.ndarray, samples: list[Sample]) -> Media:
    """The media of the question whose keyframe JPEGs the decoded video shows, frame by frame (up to the
    codec's loss: about 3 grey levels on average, where another keysegment's frames differ by 18 or more)."""
    for sample in samples:
        paths = sample.media.frame_paths
        if len(paths) == len(video) and all(
            np.abs(read_image(p).astype(int) - frame).mean() < 8
            for p, frame in zip(paths, video, strict=True)
        ):
            return sample.media
    raise AssertionError(f"a video of {len(video)} frames shows no question's keyframes")


def _rate_hz(times_s: list[float]) -> float:
    """Frames a second over capture times: n - 1 intervals over the span."""
    return (len(times_s) - 1) / (times_s[-1] - times_s[0])


def _predictions(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().splitlines()]


def test_vllm_gets_each_questions_keyframes_as_one_video_at_2_fps(scene, samples, kinegraph, tmp_path):
    with OpenAILoopback(responder=tad_reader) as server:
        native = ("--model-option", "video=native")
        _run(kinegraph, scene, tmp_path / "run", server, "vllm:cosmos-reason", *native)
    assert len(server.requests) == N_QUESTIONS
    shown = []
    for request in server.requests:
        body = request.body
        (user,) = body["messages"]
        assert [p["type"] for p in user["content"]] == ["video_url", "text"]
        assert body["media_io_kwargs"] == {"video": {"fps": 2.0}}
        text = user["content"][1]["text"]
        assert "Frame1:" not in text and "<IMAGE_TOKEN>" not in text  # no numbered frames with a video
        url = user["content"][0]["video_url"]["url"]
        assert url.startswith("data:video/mp4;base64,")
        video, rate = _decoded(base64.b64decode(url.split(",", 1)[1]), tmp_path)
        media = _frames_of(video, samples)
        # the video runs at the keyframes' capture rate: about 2 Hz, jittered as nuScenes' (the mp4 header
        # keeps 3 decimals)
        assert rate == pytest.approx(_rate_hz(media.timestamps_s), abs=1e-3) and abs(rate - 2.0) < 0.01
        shown.append(tuple(media.frame_paths))
    # one video per question: 7 keyframes for a segment question, the scene's 25 for a scene question
    assert Counter(len(paths) for paths in shown) == {7: 8, 25: 6}
    assert Counter(shown) == Counter(tuple(s.media.frame_paths) for s in samples)
    predictions = _predictions(tmp_path / "run")
    assert Counter(p["status"] for p in predictions)["ok"] >= 8  # the reader answers from text alone
    by_id = {s.id: s for s in samples}
    for p in predictions:
        frames, times = p["frames"], by_id[p["sample_id"]].media.timestamps_s
        assert frames["native_video"] == {"model": "vllm:cosmos-reason", "fps": 2.0}
        n = 7 if p["metadata"]["level"] == "segment" else 25
        assert frames["indices"] == list(range(n)) and frames["timestamps_s"] == times
        assert p["trace"][0]["video_frames"] == n
        assert p["trace"][0]["video_rate_hz"] == pytest.approx(_rate_hz(times))


def test_gemini_gets_the_keyframe_video_inline_at_2_fps(scene, samples, kinegraph, tmp_path):
    with GoogleLoopback(responder=lambda body: "A") as server:
        _run(
            kinegraph, scene, tmp_path / "run", server, "google:gemini-2.5-flash",
            "--model-option", "video=native", "--model-option", "api_key=g",
        )  # fmt: skip
    assert len(server.requests) == N_QUESTIONS
    shown = []
    for request in server.requests:
        video_part, text_part = request.body["contents"][0]["parts"]
        assert video_part["inlineData"]["mime_type"] == "video/mp4"
        assert video_part["videoMetadata"] == {"fps": 2.0}
        assert "Frame1:" not in text_part["text"]
        data = base64.urlsafe_b64decode(video_part["inlineData"]["data"] + "==")
        video, _ = _decoded(data, tmp_path)
        shown.append(tuple(_frames_of(video, samples).frame_paths))
    assert Counter(shown) == Counter(tuple(s.media.frame_paths) for s in samples)
    for p in _predictions(tmp_path / "run"):
        assert p["frames"]["native_video"] == {"model": "google:gemini-2.5-flash", "fps": 2.0}


def test_frames_without_native_video_are_unchanged(scene, kinegraph, tmp_path):
    with OpenAILoopback(responder=tad_reader) as server:
        _run(kinegraph, scene, tmp_path / "run", server, "vllm:cosmos-reason")
    segment = next(r.body for r in server.requests if len(r.body["messages"][0]["content"]) < 20)
    parts = segment["messages"][0]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url"] * 7 + ["text"]
    assert parts[0]["text"] == "Frame1:" and "media_io_kwargs" not in segment
    assert all(p["frames"]["native_video"] is None for p in _predictions(tmp_path / "run"))


@pytest.mark.parametrize("graph", ["tad.scene_cot", "tad.agent"])
def test_graphs_whose_prompts_number_the_frames_refuse_native_video(graph, scene, kinegraph, tmp_path):
    with OpenAILoopback(responder=tad_reader) as server:
        result = _run(
            kinegraph, scene, tmp_path / "run", server, "vllm:q", "--model-option", "video=native",
            graph=graph, expect=2,
        )  # fmt: skip
    assert result.stderr.startswith(f"error: graph {graph} sends frames, not a video")
    assert "tad.baseline" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not server.requests


@pytest.mark.parametrize(
    ("graph", "line"),
    [
        ("tad.tcogmap", "Motion summary for Frame1 to Frame"),
        ("tad.ego_pose", "The ego pose details for Frame1"),
    ],
)
def test_context_graphs_send_the_video_with_upstreams_context_lines(graph, line, scene, kinegraph, tmp_path):
    """The paper's +EP and +TCogMap rows for its video model: the keyframe video, the context lines as
    upstream writes them."""
    with OpenAILoopback(responder=tad_reader) as server:
        _run(
            kinegraph,
            scene,
            tmp_path / "run",
            server,
            "vllm:q",
            "--model-option",
            "video=native",
            graph=graph,
        )
    assert len(server.requests) == N_QUESTIONS
    texts = []
    for request in server.requests:
        (user,) = request.body["messages"]
        assert [p["type"] for p in user["content"]] == ["video_url", "text"]
        texts.append(user["content"][1]["text"])
    assert any(line in text for text in texts)
    for p in _predictions(tmp_path / "run"):
        assert p["frames"]["native_video"] == {"model": "vllm:q", "fps": 2.0}


def test_a_video_runs_at_the_keyframes_capture_rate(tmp_path):
    paths = []
    for i in range(4):
        paths.append(str(tmp_path / f"k{i}.jpg"))
        write_image(paths[-1], np.full((36, 64, 3), 60 * i, np.uint8))
    # nuScenes keyframes are about, not exactly, 0.5 s apart: 3 intervals over 1.2 s are 2.5 frames a second
    media = Media(kind="frames", frame_paths=paths, timestamps_s=[0.0, 0.5, 0.9, 1.2], fps=2.0)
    assert capture_rate_hz(media) == pytest.approx(2.5)
    assert capture_rate_hz(media.model_copy(update={"timestamps_s": None})) == 2.0
    sample = Sample(id="s", benchmark="tad", group="scene", question="q", media=media)
    (part,) = scene_videos([sample, sample], max_side=32).values()  # one video for two questions
    video, rate = _decoded(part.content, tmp_path)
    assert part.fps == 2.0 and rate == pytest.approx(2.5)
    assert video.shape == (4, 18, 32, 3)
    assert [round(float(f.mean())) for f in video] == pytest.approx([0, 60, 120, 180], abs=3)


def test_keyframes_of_two_sizes_are_refused_naming_the_file(tmp_path):
    paths = [str(tmp_path / "a.jpg"), str(tmp_path / "b.jpg")]
    write_image(paths[0], np.zeros((36, 64, 3), np.uint8))
    write_image(paths[1], np.zeros((40, 64, 3), np.uint8))
    sample = Sample(
        id="s", benchmark="tad", group="scene", question="q", media=Media(kind="frames", frame_paths=paths)
    )
    with pytest.raises(DataError, match="keyframes differ in size") as caught:
        scene_videos([sample], max_side=None)
    assert "a.jpg" in str(caught.value)
