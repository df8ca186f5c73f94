"""QuantiPhy with the video whole (`video=native`) and with frames sampled by rate, end to end against the
loopback servers; the frame record of every prediction says which happened."""

from __future__ import annotations

import base64
from pathlib import Path

import pandas as pd
import pytest

from kinegraph.agents import BackendError
from kinegraph.agents.loopback import GoogleLoopback, OpenAILoopback
from kinegraph.media import video_info
from kinegraph.run import execute
from kinegraph.rundir import read_predictions
from kinegraph.suites import suites
from kinegraph.types import RoleModel, RunConfig


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return suites.get("quantiphy").generate(tmp_path_factory.mktemp("qp"), n=4, seed=3)


def _config(world: Path, out: Path, model: str, server, graph="quantiphy.zero_shot", **kw) -> RunConfig:
    return RunConfig(
        benchmark="quantiphy",
        graph=graph,
        model=model,
        base_url=server.base_url if server is not None else None,
        data=str(world / "quantiphy_validation.csv"),
        out_dir=str(out),
        use_cache=False,
        **kw,
    )


def _videos(world: Path) -> dict[bytes, str]:
    return {p.read_bytes(): p.stem for p in (world / "validation_videos").glob("*.mp4")}


def test_vllm_gets_each_video_whole_at_2_fps_and_the_record_says_so(world, tmp_path):
    rows = pd.read_csv(world / "quantiphy_validation.csv", keep_default_na=False)
    with OpenAILoopback(responder=lambda body: "2.5 m") as server:
        config = _config(
            world,
            tmp_path / "run",
            "vllm:qwen",
            server,
            options={"fps": 2.0},
            model_options={"video": "native"},
        )
        summary = execute(config, show_progress=False)
    assert summary.status_counts == {"ok": len(rows)}
    videos = _videos(world)
    for recorded in server.requests:
        body = recorded.body
        user = body["messages"][-1]["content"]
        assert [p["type"] for p in user] == ["video_url", "text"]  # the video, then the official text
        url = user[0]["video_url"]["url"]
        assert url.startswith("data:video/mp4;base64,")
        assert base64.b64decode(url.split(",", 1)[1]) in videos  # the file's exact bytes
        assert body["media_io_kwargs"] == {"video": {"fps": 2.0}}
    predictions = read_predictions(tmp_path / "run" / "predictions.jsonl")
    assert len(predictions) == len(rows)
    for p in predictions:
        frames = p.frames
        assert frames.native_video.model == "vllm:qwen" and frames.native_video.fps == 2.0
        assert (frames.sampling, frames.sampling_value) == ("fps", 2.0)
        # at 2 fps, t = 0, 0.5, 1.0 s: frames 0, 12, 24 of a 24 fps clip; 0, 12 (12.5), 25 of a 25 fps one
        _, clip_fps = video_info(frames.source)
        expected = {24.0: ([0, 12, 24], [0.0, 0.5, 1.0]), 25.0: ([0, 12, 25], [0.0, 0.48, 1.0])}[clip_fps]
        assert frames.indices[:3] == expected[0]
        assert frames.timestamps_s[:3] == pytest.approx(expected[1])


def test_gemini_gets_each_video_inline_and_counted_frames_become_a_rate(world, tmp_path):
    video_id = pd.read_csv(world / "quantiphy_validation.csv", keep_default_na=False)["video_id"][0]
    n_total, fps = video_info(world / "validation_videos" / f"{video_id}.mp4")
    with GoogleLoopback(responder=lambda body: "2.5 m") as server:
        config = _config(
            world,
            tmp_path / "run",
            "google:gemini-2.5-flash",
            server,
            options={"max_frames": 8},
            model_options={"video": "native", "api_key": "g"},
            limit=1,
        )
        summary = execute(config, show_progress=False)
    assert summary.status_counts == {"ok": 1}
    part = server.requests[0].body["contents"][0]["parts"][0]
    data = base64.urlsafe_b64decode(part["inlineData"]["data"] + "==")
    assert part["inlineData"]["mime_type"] == "video/mp4" and _videos(world)[data] == video_id
    # 8 frames over the clip: Gemini is asked for 8 / duration frames a second
    assert part["videoMetadata"]["fps"] == pytest.approx(8 * fps / n_total)
    (prediction,) = read_predictions(tmp_path / "run" / "predictions.jsonl")
    assert prediction.frames.native_video.model == "google:gemini-2.5-flash"
    assert prediction.frames.native_video.fps == pytest.approx(8 * fps / n_total)
    assert (prediction.frames.sampling, prediction.frames.sampling_value) == ("count", 8)


def test_frames_at_2_fps_without_native_video(world, tmp_path):
    with OpenAILoopback(responder=lambda body: "2.5 m") as server:
        config = _config(world, tmp_path / "run", "vllm:qwen", server, options={"fps": 2.0}, limit=1)
        execute(config, show_progress=False)
    user = server.requests[0].body["messages"][-1]["content"]
    (prediction,) = read_predictions(tmp_path / "run" / "predictions.jsonl")
    assert prediction.frames.native_video is None and prediction.frames.sampling == "fps"
    assert [p["type"] for p in user] == ["image_url"] * len(prediction.frames.indices) + ["text"]
    assert prediction.frames.indices[:2] == [0, 12]


def test_native_video_is_refused_before_any_call(world, tmp_path):
    with pytest.raises(BackendError, match="openai:gpt-4o: this provider takes no video whole"):
        execute(
            _config(world, tmp_path / "a", "openai:gpt-4o", None, model_options={"video": "native"}),
            show_progress=False,
        )
    with pytest.raises(ValueError, match="graph quantiphy.tools sends frames, not a video"):
        execute(
            _config(
                world,
                tmp_path / "b",
                "vllm:q",
                None,
                graph="quantiphy.tools",
                model_options={"video": "native"},
            ),
            show_progress=False,
        )
    with pytest.raises(ValueError, match="graph quantiphy.tools sends frames"):  # a role's model too
        roles = {"backend": RoleModel(model="google:g", options={"video": "native"})}
        execute(
            _config(world, tmp_path / "c", "vllm:q", None, graph="quantiphy.tools", roles=roles),
            show_progress=False,
        )
    with pytest.raises(ValueError, match="by max_frames or by fps, not both"):
        execute(
            _config(world, tmp_path / "d", "vllm:q", None, options={"fps": 2.0, "max_frames": 4}),
            show_progress=False,
        )
    assert not (tmp_path / "a" / "predictions.jsonl").exists()
