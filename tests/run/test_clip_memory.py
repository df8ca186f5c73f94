"""Memory of a run: clips in flight bounded by what fills the model calls; a cached rerun decodes nothing."""

from __future__ import annotations

import weakref

import numpy as np
import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.graphs import deferred_frames
from kinegraph.media import write_video
from kinegraph.run import execute as run
from kinegraph.run.clip_limit import MARGIN
from kinegraph.rundir import read_predictions
from kinegraph.types import RunConfig
from tests.support.run_data import write_egodyn_hf

N_CLIPS, QUESTIONS_PER_CLIP, CONCURRENCY = 20, 14, 64


class ClipLifetimes:
    """Counts the clips whose images (deferred or made) are alive, through the real `plan_clip`."""

    def __init__(self) -> None:
        self.alive = self.most_alive = self.planned = 0

    def plan_clip(self, *args, **kwargs):
        record, images = real_plan_clip(*args, **kwargs)
        self.planned += 1
        self.alive += 1
        self.most_alive = max(self.most_alive, self.alive)
        weakref.finalize(images[0]._deferred[0], self._gone)  # the clip's images, made or not
        return record, images

    def _gone(self) -> None:
        self.alive -= 1


real_plan_clip = deferred_frames.plan_clip


def config(tmp_path, data, server, name, **extra) -> RunConfig:
    return RunConfig(
        benchmark="egodyn",
        graph="egodyn.vision",
        model="vllm:loopback-vlm",
        base_url=server.base_url,
        data=str(data),
        out_dir=str(tmp_path / name),
        concurrency=CONCURRENCY,
        **extra,
    )


def test_clips_in_flight_are_bounded_by_what_fills_the_calls_not_by_concurrency(tmp_path, monkeypatch):
    data = write_egodyn_hf(tmp_path / "data", n_clips=N_CLIPS)
    lifetimes = ClipLifetimes()
    monkeypatch.setattr(deferred_frames, "plan_clip", lifetimes.plan_clip)
    with OpenAILoopback(responder=lambda body: "(A)", latency_s=0.05) as server:
        summary = run(config(tmp_path, data, server, "run", use_cache=False), show_progress=False)
        assert server.max_in_flight > QUESTIONS_PER_CLIP  # several clips' questions were asked at once
    assert summary.n_predictions == N_CLIPS * QUESTIONS_PER_CLIP and summary.decodes == N_CLIPS
    assert lifetimes.planned == N_CLIPS
    # ceil(64 / 14) + MARGIN = 7 clips, where the call limit alone would have let all 20 in at once
    assert lifetimes.most_alive <= -(-CONCURRENCY // QUESTIONS_PER_CLIP) + MARGIN < N_CLIPS


@pytest.fixture
def cached_run(tmp_path):
    data = write_egodyn_hf(tmp_path / "data", n_clips=3)
    cache = tmp_path / "responses.sqlite"
    server = OpenAILoopback(responder=lambda body: f"({'ABC'[len(str(body)) % 3]})").__enter__()
    first = run(config(tmp_path, data, server, "first", cache=str(cache)), show_progress=False)
    yield data, cache, server, first
    server.__exit__(None, None, None)


def answers(run_dir):
    return {
        p.sample_id: (p.raw, p.answer, p.status, p.frames, p.ground_truth)
        for p in read_predictions(run_dir / "predictions.jsonl")
    }


def test_cached_rerun_decodes_no_frames_and_gives_the_same_predictions(tmp_path, cached_run):
    data, cache, server, first = cached_run
    assert first.decodes == 3 and server.received == 42
    again = run(config(tmp_path, data, server, "again", cache=str(cache)), show_progress=False)
    assert server.received == 42  # no request
    assert again.decodes == 0 and again.usage.cached_requests == 42
    assert answers(tmp_path / "again") == answers(tmp_path / "first")
    assert again.status_counts == first.status_counts


def test_a_changed_video_misses_the_cache(tmp_path, cached_run):
    data, cache, server, first = cached_run
    video = next((data / "carla_videos_transferred").glob("TST_Town-1_*.mp4"))
    write_video(video, np.full((12, 48, 64, 3), 128, np.uint8), fps=4.0)
    again = run(config(tmp_path, data, server, "again", cache=str(cache)), show_progress=False)
    assert server.received == 42 + 14  # that clip's questions were asked again, the others answered
    assert again.decodes == 1 and again.usage.cached_requests == 28


def test_a_clip_that_plans_but_does_not_decode_is_an_input_error_for_each_question(tmp_path):
    data = write_egodyn_hf(tmp_path / "data", n_clips=2)
    video = next((data / "carla_videos_transferred").glob("TST_Town-1_*.mp4"))
    body = bytearray(video.read_bytes())
    start = body.find(b"mdat") + 4  # the header stays readable; the coded frames are zeroed
    body[start : start + len(body) // 2] = bytes(len(body) // 2)
    video.write_bytes(body)
    with OpenAILoopback(responder=lambda body: "(A)") as server:
        summary = run(config(tmp_path, data, server, "run", use_cache=False), show_progress=False)
        assert server.received == 14  # only the readable clip was asked about
    assert summary.n_predictions == 28 and summary.status_counts["input_error"] == 14
    bad = [p for p in read_predictions(tmp_path / "run" / "predictions.jsonl") if p.status == "input_error"]
    assert all("no decodable frames" in p.error and p.answer is None for p in bad)
