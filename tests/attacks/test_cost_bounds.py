"""Requests that cost without bound: one model response asking for tool calls by the dozen runs at most
`MAX_CALLS_PER_ROUND` of them (class "Request options without bounds")."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import Any

import httpx

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.agents.loopback_wire import Reply
from tests.support.serving import AUTH, KEY, TURN, TURN_OPTIONS, running

N_CALLS = 40


def calls_by_the_dozen(body: dict[str, Any]) -> Reply:
    """The first answer asks for N_CALLS tool calls; once tool results came back, it answers."""
    if any(m.get("role") == "tool" for m in body["messages"]):
        return Reply(text="left")
    return Reply(tool_calls=[("optical_flow", {"step": i}) for i in range(N_CALLS)])


def test_an_agent_runs_at_most_its_calls_per_round(attack_root: Path) -> None:
    from kinegraph.graphs.tool_calls import MAX_CALLS_PER_ROUND  # in the test: absent before the cap

    frames = [f"clip/frame_{i}.png" for i in range(5)]
    body = {"question": TURN, "options": TURN_OPTIONS, "graph": "egodyn.agent", "frame_paths": frames}
    with OpenAILoopback(responder=calls_by_the_dozen) as model:
        with running(
            model, data_root=attack_root, graphs=("egodyn.agent",), default_graph="egodyn.agent"
        ) as srv:
            response = httpx.post(srv.url + "/v1/qa", json=body, headers=AUTH, timeout=120)
        second = model.requests[-1].body["messages"]
    assert response.status_code == 200, response.text
    trace = response.json()["trace"]
    ran = [entry for entry in trace if "tool" in entry and "round" in entry]
    assert len(ran) == MAX_CALLS_PER_ROUND
    assert any(entry.get("tool_calls_not_run") == N_CALLS - MAX_CALLS_PER_ROUND for entry in trace)
    tool_messages = [m for m in second if m.get("role") == "tool"]
    assert len(tool_messages) == N_CALLS  # every call answered, as the API requires
    assert sum("not run" in m["content"] for m in tool_messages) == N_CALLS - MAX_CALLS_PER_ROUND


def test_a_huge_sampling_rate_over_a_slow_clip_is_answered_not_left_spinning(
    attack_model: OpenAILoopback, attack_root: Path
) -> None:
    """Frame times at 0.001 fps (the request's own `fps`) and a 1000-fps sampling option made the sampler
    walk 11,000,000 sample times in a worker thread, on past the 504; it now walks the 12 frames."""
    body = {
        "graph": "quantiphy.cot",
        "question": "How fast is the ball in m/s?",
        "video_path": "clip.mp4",
        "fps": 0.001,
        "prior": {"quantity": "the ball's diameter", "value": 0.22, "unit": "m"},
        "graph_options": {"fps": 1000},
    }
    graphs = ("quantiphy.cot",)
    with running(
        attack_model, data_root=attack_root, graphs=graphs, default_graph=graphs[0], request_timeout_s=3
    ) as srv:
        response = httpx.post(srv.url + "/v1/qa", json=body, headers=AUTH, timeout=60)
    assert response.status_code == 200, response.text
    assert response.json()["frames"]["indices"] == list(range(12))


def test_a_plain_request_whose_client_has_gone_releases_its_slot(attack_root: Path) -> None:
    """One slot, no queue: while the model call of a request whose client hung up still ran, every other
    request was 429 until the model answered; now the request is cancelled when its client goes."""
    frames = [f"clip/frame_{i}.png" for i in range(5)]
    body = json.dumps({"question": TURN, "options": TURN_OPTIONS, "frame_paths": frames}).encode()
    head = (
        f"POST /v1/qa HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}"
        f"\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    settings = {
        "data_root": attack_root,
        "graphs": ("egodyn.vision",),
        "max_concurrency": 1,
        "max_waiting": 0,
    }
    with OpenAILoopback(responder=lambda b: "left", latency_s=60) as model:
        with running(model, **settings) as srv:
            port = int(srv.url.rsplit(":", 1)[1])
            with socket.create_connection(("127.0.0.1", port)) as client:
                client.sendall(head + body)
                for _ in range(300):  # until the model call is in flight (a bounded poll)
                    if model.received:
                        break
                    threading.Event().wait(0.05)
                assert model.received == 1
            statuses = []
            for _ in range(50):  # a bounded poll: the slot comes free once the request is cancelled
                statuses.append(httpx.post(srv.url + "/v1/qa", json={}, headers=AUTH, timeout=10).status_code)
                if statuses[-1] != 429:
                    break
                threading.Event().wait(0.1)
    assert statuses[-1] == 422, statuses
