"""The family request fields a server refuses, one at a time, through a real server: each answer is a 4xx
whose message starts with the field's name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest

from kinegraph.benchmarks.tad.world import write_tad_world
from kinegraph.media import write_image
from kinegraph.serve import BackgroundServer
from tests.support.serving import AUTH, running

FRAMES = [f"clip/frame_{i}.png" for i in range(5)]
TAD_OPTIONS = ["A. Turn left.", "B. Go straight.", "C. Turn right.", "D. Stop."]


@pytest.fixture(scope="module")
def fields_server(text_model) -> Iterator[BackgroundServer]:
    """Five frames and a one-scene nuScenes world under the data root; a graph of each family asked."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for i, path in enumerate(FRAMES):
            write_image(root / path, np.full((24, 32, 3), 40 * i, np.uint8))
        write_tad_world(root, n_scenes=1, seed=0)
        graphs = ("egodyn.vision", "tad.baseline", "tad.ego_pose", "quantiphy.prior_only")
        with running(text_model, data_root=root, graphs=graphs, max_frames=64) as server:
            yield server


def refusal(server: BackgroundServer, body: dict) -> tuple[int, str]:
    r = httpx.post(server.url + "/v1/qa", headers=AUTH, json=body, timeout=60)
    kind = "not_found" if r.status_code == 404 else "invalid_request_error"
    assert r.json()["error"]["type"] == kind and r.json()["error"]["code"] == r.status_code
    return r.status_code, r.json()["error"]["message"]


def test_keysegments_past_the_last_frame(fields_server):
    body = {"graph": "tad.baseline", "question": "What does the ego do?", "options": TAD_OPTIONS}
    status, message = refusal(fields_server, {**body, "frame_paths": FRAMES, "keysegments": [[0, 1], [3, 7]]})
    assert (status, message) == (422, "keysegments[1]: frame 7 beyond the 5 frames")


def test_a_pose_count_other_than_the_frame_count(fields_server):
    poses = {
        "timestamps_s": [0.0, 0.5, 1.0],
        "translation_m": [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]],
        "rotation_wxyz": [[1.0, 0.0, 0.0, 0.0]] * 3,
    }
    body = {"graph": "tad.ego_pose", "question": "What does the ego do?", "options": TAD_OPTIONS}
    status, message = refusal(fields_server, {**body, "frame_paths": FRAMES, "ego_poses": poses})
    assert (status, message) == (422, "ego_poses: 3 poses for 5 frames")


def test_an_unknown_task(fields_server):
    body = {"graph": "tad.baseline", "question": "What does the ego do?", "options": TAD_OPTIONS}
    status, message = refusal(fields_server, {**body, "frame_paths": FRAMES, "task": "lane_keeping"})
    assert status == 422
    assert message.startswith("task: 'lane_keeping' is not a TAD task (exact_answer_action, mc_action, ")


def test_an_unknown_question_id(fields_server):
    body = {"graph": "egodyn.vision", "question": "Turning?", "frame_paths": FRAMES, "question_id": "q_nope"}
    status, message = refusal(fields_server, body)
    assert status == 422
    assert message.startswith("question_id: 'q_nope' is not an EgoDyn question (")
    assert "yaw_rate_turn_direction" in message


def test_an_unknown_nuscenes_scene(fields_server):
    # a scene token the tables lack is a reference to nothing, answered as a missing file is (404)
    body = {"graph": "tad.baseline", "question": "What does the ego do?", "options": TAD_OPTIONS}
    status, message = refusal(fields_server, {**body, "nuscenes_scene": "no_such_scene"})
    assert (status, message) == (
        404,
        "nuscenes_scene: nuscenes/v1.0-trainval/scene.json: field 'token': no scene record with token "
        "'no_such_scene'",
    )


def test_a_quantiphy_prior_with_a_unit_it_does_not_know(fields_server):
    prior = {"quantity": "the ball's diameter", "value": 0.22, "unit": "furlongs"}
    body = {"graph": "quantiphy.prior_only", "question": "How fast is the ball?", "prior": prior}
    status, message = refusal(fields_server, {**body, "frame_paths": FRAMES, "fps": 2.0})
    assert status == 422
    assert message.startswith("prior.unit: unknown unit 'furlongs'; known: cm, cm/s, ")
