"""Request options without bounds or confinement: every integer option has an upper bound, numbers are
finite and plausible, and an option naming a file stays under the data root."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from kinegraph.agents.loopback import OpenAILoopback
from tests.support.serving import AUTH, TURN, TURN_OPTIONS, running, turning

GRAPHS = (
    "dsi.baseline",
    "dsi.agent",
    "quantiphy.cot",
    "egodyn.measured",
    "egodyn.trajectory",
    "tad.baseline",
)
FRAMES = {"question": TURN, "options": TURN_OPTIONS, "frame_paths": ["clip/frame_0.png", "clip/frame_1.png"]}


@pytest.fixture(scope="module")
def server(attack_model: OpenAILoopback, attack_root: Path):
    with running(
        attack_model, data_root=attack_root, graphs=GRAPHS, default_graph="dsi.baseline", max_frames=8
    ) as srv:
        yield srv


def ask(server, body: dict) -> httpx.Response:
    return httpx.post(server.url + "/v1/qa", json=body, headers=AUTH, timeout=60)


@pytest.mark.parametrize(
    ("graph", "options", "fragment"),
    [
        ("dsi.baseline", {"max_attempts": 1000}, "max_attempts: must be between 1 and 5"),
        ("dsi.agent", {"max_tool_rounds": 10_000}, "max_tool_rounds: must be between 1 and 8"),
        ("dsi.baseline", {"max_frames": 3000}, "max_frames: must be between 1 and 8"),
        ("tad.baseline", {"max_side": 100_000}, "max_side: must be between 1 and 4096"),
        ("quantiphy.cot", {"fps": 1e300}, "fps: must be a number between"),
        ("egodyn.measured", {"focal_px": 1e300}, "focal_px: must be a number between"),
    ],
)
def test_an_option_past_its_bound_is_refused_before_any_model_call(
    server, attack_model: OpenAILoopback, graph: str, options: dict, fragment: str
) -> None:
    before = attack_model.received
    response = ask(server, {**FRAMES, "graph": graph, "graph_options": options})
    assert response.status_code == 422, response.text
    assert fragment in response.json()["error"]["message"]
    assert attack_model.received == before


@pytest.mark.parametrize(
    "weights", ["/etc/passwd", "/nonexistent/raft.pth", "../secret.txt", "clip/../../secret.txt"]
)
def test_a_file_option_outside_the_data_root_is_refused_without_saying_whether_it_exists(
    server, weights: str
) -> None:
    body = {**FRAMES, "graph": "egodyn.measured", "graph_options": {"weights": weights}}
    response = ask(server, body)
    assert response.status_code == 403, response.text
    message = response.json()["error"]["message"]
    assert message.startswith("graph_options.weights:") and "data root" in message
    assert weights not in message and "passwd" not in message and "secret" not in message


def test_an_absurd_trajectory_is_refused_before_the_prompt(server, attack_model: OpenAILoopback) -> None:
    trajectory = turning(0.2)
    trajectory["x_m"] = [1e308 * (-1) ** i for i in range(len(trajectory["x_m"]))]
    before = attack_model.received
    body = {"question": TURN, "options": TURN_OPTIONS, "graph": "egodyn.trajectory", "trajectory": trajectory}
    response = ask(server, body)
    assert response.status_code == 422, response.text
    assert "x_m" in response.json()["error"]["message"]
    assert attack_model.received == before
