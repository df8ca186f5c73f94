"""EgoDyn's vision ablations (Table 3 rows 2-4) through the runner and a real OpenAI-compatible loopback
server: what each request carried, read back off the pixels it sent.

Every clip is 30 flat grey frames, frame j at grey level 4 + 8 j, so an image's mean names its frame.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from pathlib import Path

import cv2
import numpy as np
import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.media import write_video
from kinegraph.run import execute as run
from kinegraph.rundir import PREDICTIONS, read_predictions
from kinegraph.types import Prediction, RunConfig
from tests.support.run_data import write_egodyn_hf, write_egodyn_world
from tests.support.text_reader_model import prompt_text, text_reader

N_CLIPS, N_FRAMES = 3, 30
#: the indices `egodyn.vision` shows of 30 frames: round(i * 29 / 9)
TEN_OF_THIRTY = [0, 3, 6, 10, 13, 16, 19, 23, 26, 29]


def _level(j: int) -> int:
    return 4 + 8 * j


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_egodyn_world(tmp_path_factory.mktemp("egodyn"), n_clips=N_CLIPS)
    frames = np.stack([np.full((36, 48, 3), _level(j), np.uint8) for j in range(N_FRAMES)])
    for video in (root / "carla_videos_transferred").glob("*.mp4"):
        write_video(video, frames, fps=10.0)
    return root


def frames_seen(body: dict) -> list[int]:
    """The frame index of every image of a request, from its grey level."""
    seen = []
    for part in body["messages"][0]["content"]:
        if isinstance(part, dict) and part.get("type") == "image_url":
            data = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
            grey = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_GRAYSCALE).mean()
            j = round((grey - 4) / 8)
            assert abs(grey - _level(j)) <= 3.5, f"grey {grey} is no frame's level"
            seen.append(j)
    return seen


def _run(
    world: Path, out: Path, graph: str, run_seed: int | None = None, **options
) -> tuple[list[dict], list[Prediction]]:
    """Run `graph` on the world (with the run's seed `run_seed`); (request bodies, predictions)."""
    with OpenAILoopback(responder=text_reader) as server:
        summary = run(
            RunConfig(
                benchmark="egodyn",
                graph=graph,
                model="vllm:loopback-vlm",
                base_url=server.base_url,
                data=str(world),
                out_dir=str(out),
                use_cache=False,
                seed=run_seed,
                options=options,
            ),
            show_progress=False,
        )
        bodies = [r.body for r in server.requests]
    assert summary.status_counts == {"ok": 14 * N_CLIPS}
    return bodies, read_predictions(out / PREDICTIONS)


def test_blind_sends_the_question_alone(world, tmp_path):
    bodies, predictions = _run(world, tmp_path / "blind", "egodyn.blind")
    assert len(bodies) == 14 * N_CLIPS
    assert all(frames_seen(b) == [] for b in bodies)
    for body in bodies:
        lines = prompt_text(body).splitlines()
        assert len(lines) == 2 and lines[1] == "Answer with ONLY the chosen option."
        assert "image" not in lines[0] and lines[0].endswith("]")
    assert all(p.frames is None for p in predictions)


def test_static_first_sends_frame_zero_once(world, tmp_path):
    bodies, predictions = _run(world, tmp_path / "static", "egodyn.static_first")
    assert [frames_seen(b) for b in bodies] == [[0]] * (14 * N_CLIPS)
    assert {prompt_text(b).splitlines()[0] for b in bodies} == {
        "The image shows the forward camera view from a 3-second driving clip."
    }
    assert {(tuple(p.frames.indices), tuple(p.frames.timestamps_s)) for p in predictions} == {((0,), (0.0,))}


def test_one_frame_of_the_vision_graph_is_upstreams_middle_frame(world, tmp_path):
    bodies, predictions = _run(world, tmp_path / "one", "egodyn.vision", num_frames=1)
    assert [frames_seen(b) for b in bodies] == [[N_FRAMES // 2]] * (14 * N_CLIPS)
    assert {tuple(p.frames.indices) for p in predictions} == {(N_FRAMES // 2,)}


def _orders(predictions: list[Prediction]) -> dict[str, tuple[int, ...]]:
    """Each clip's frame order as its predictions record it (one order per clip)."""
    by_clip: dict[str, set[tuple[int, ...]]] = {}
    for p in predictions:
        by_clip.setdefault(p.group, set()).add(tuple(p.frames.indices))
    assert all(len(orders) == 1 for orders in by_clip.values()), "a clip's questions saw different orders"
    return {clip: orders.pop() for clip, orders in by_clip.items()}


def test_shuffled_sends_a_seeded_permutation_of_the_clips_frames(world, tmp_path):
    bodies, predictions = _run(world, tmp_path / "seed7", "egodyn.shuffled", seed=7)
    sent = [tuple(frames_seen(b)) for b in bodies]
    assert all(sorted(order) == TEN_OF_THIRTY for order in sent)
    assert any(list(order) != TEN_OF_THIRTY for order in sent)
    # the record is what was sent: the pixels' order, request for request
    assert Counter(sent) == Counter(tuple(p.frames.indices) for p in predictions)
    for p in predictions:
        step = p.trace[0]
        assert step["node"] == "shuffle_frames" and step["seed"] == 7
        assert step["indices"] == p.frames.indices
        assert [TEN_OF_THIRTY[i] for i in step["order"]] == p.frames.indices
        assert p.trace[1]["node"] == "answer_question"
    orders = _orders(predictions)
    # reproducible: the same seed gives every clip the same order again; another seed another order
    _, again = _run(world, tmp_path / "seed7_again", "egodyn.shuffled", seed=7)
    assert _orders(again) == orders
    _, other = _run(world, tmp_path / "seed8", "egodyn.shuffled", seed=8)
    assert _orders(other) != orders


def test_shuffled_takes_the_runs_seed_unless_its_option_is_set(world, tmp_path):
    _, by_option = _run(world, tmp_path / "option3", "egodyn.shuffled", seed=3)
    bodies, by_run = _run(world, tmp_path / "run3", "egodyn.shuffled", run_seed=3)
    assert _orders(by_run) == _orders(by_option) and {p.trace[0]["seed"] for p in by_run} == {3}
    assert {b["seed"] for b in bodies} == {3}  # the same seed is the model's sampling seed
    info = json.loads((tmp_path / "run3" / "run.json").read_text())
    assert info["config"]["options"] == {"seed": 3}  # recorded as the option it became
    _, explicit = _run(world, tmp_path / "run3-option8", "egodyn.shuffled", run_seed=3, seed=8)
    assert {p.trace[0]["seed"] for p in explicit} == {8}  # `-O seed=` wins over the run's seed
    _, unseeded = _run(world, tmp_path / "default", "egodyn.shuffled")
    assert {p.trace[0]["seed"] for p in unseeded} == {42}  # no run seed: upstream's default


def test_shuffled_grouped_sends_one_shuffled_request_per_clip(world, tmp_path):
    bodies, predictions = _run(world, tmp_path / "grouped", "egodyn.shuffled", seed=7, grouped=True)
    assert len(bodies) == N_CLIPS
    orders = _orders(predictions)
    _, per_question = _run(world, tmp_path / "per_question", "egodyn.shuffled", seed=7)
    assert Counter(tuple(frames_seen(b)) for b in bodies) == Counter(orders.values())
    assert orders == _orders(per_question)  # the order is the clip's, whatever the request mode
    assert all(p.trace[0]["node"] == "shuffle_frames" for p in predictions)


def test_static_first_records_an_unreadable_clip_as_input_errors(tmp_path):
    data = write_egodyn_hf(tmp_path / "data", n_clips=2, corrupt=(0,))
    with OpenAILoopback(responder=text_reader) as server:
        summary = run(
            RunConfig(
                benchmark="egodyn",
                graph="egodyn.static_first",
                model="vllm:loopback-vlm",
                base_url=server.base_url,
                data=str(data),
                out_dir=str(tmp_path / "run"),
                use_cache=False,
            ),
            show_progress=False,
        )
        assert len(server.requests) == 14  # the readable clip only
    assert summary.status_counts == {"ok": 14, "input_error": 14}
    failed = [p for p in read_predictions(tmp_path / "run" / PREDICTIONS) if p.status == "input_error"]
    assert {p.group for p in failed} == {"TST_Town-0_1_T-1__Comfort__w0"} and all(p.error for p in failed)
