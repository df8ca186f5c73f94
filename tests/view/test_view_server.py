"""The viewer's server over loopback, without a browser: the samples JSON, thumbnails, refusals."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import cv2
import numpy as np
import pytest

from kinegraph.errors import DataError
from kinegraph.view import ViewServer, load_views, samples_payload


def get(url: str) -> tuple[int, bytes, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status, answer.read(), answer.headers["content-type"]
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), exc.headers["content-type"]


def test_samples_pair_runs_and_mark_disagreement(two_runs):
    payload = samples_payload(load_views(two_runs))
    assert [r["name"] for r in payload["runs"]] == ["vision", "tools"]
    by_id = {s["id"]: s for s in payload["samples"]}
    assert len(by_id) == 6
    turn = by_id["clip_00/yaw_rate_turn_direction"]
    assert turn["disagree"] and [r["answer"] for r in turn["runs"]] == ["right", "left"]
    assert not by_id["clip_00/speed_change"]["disagree"]  # both answered "accelerating"
    unparsed = by_id["clip_02/speed_change"]["runs"][0]
    assert unparsed["status"] == "parse_failure" and unparsed["answer"] is None
    assert not by_id["clip_02/speed_change"]["disagree"]  # one answer only: nothing to disagree with
    assert turn["runs"][1]["prompts"] == ["Question: yaw_rate_turn_direction? Readings: yaw 0.12 rad/s."]
    assert all("prompt" not in step for step in turn["runs"][1]["trace"])


def test_the_server_sends_the_page_the_samples_and_frames(two_runs):
    with ViewServer(load_views(two_runs)) as server:
        status, page, kind = get(server.url)
        assert status == 200 and kind.startswith("text/html") and b"/app.js" in page
        for asset in ("app.js", "app.css"):
            assert get(server.url + asset)[0] == 200
        assert b"http" not in page  # nothing from another host
        status, body, _ = get(server.url + "api/samples")
        assert status == 200 and len(json.loads(body)["samples"]) == 6
        status, jpeg, kind = get(server.url + "frame?run=1&sample=clip_01/speed_change&k=1")
        assert status == 200 and kind == "image/jpeg"
        frame = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
        assert frame.shape == (90, 160, 3)
        # frame index 3 of the clip: the bar starts at column 10 + 15 * 3 = 55 (BGR yellow is ~ 40, 200, 240)
        assert frame[55, 60, 2] > 200 and frame[55, 20, 2] < 100


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("run=1&sample=clip_01/speed_change&k=3", 404),  # the prediction records three frames
        ("run=5&sample=clip_01/speed_change&k=0", 404),
        ("run=0&sample=nope&k=0", 404),
        ("run=x&sample=clip_01/speed_change&k=0", 400),
        ("sample=clip_01/speed_change&k=0", 400),
    ],
)
def test_a_frame_outside_the_predictions_is_refused(two_runs, query, code):
    with ViewServer(load_views(two_runs)) as server:
        status, body, _ = get(server.url + "frame?" + query)
    assert status == code and body


def test_a_folder_without_predictions_is_one_line(tmp_path):
    with pytest.raises(DataError, match="not a run directory"):
        load_views([tmp_path])
