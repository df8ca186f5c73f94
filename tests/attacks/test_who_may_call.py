"""Who may call: a key-less server answers loopback pages only, and trusts no forwarded address it was
not told to (class "Who may call")."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
import pytest

from kinegraph.agents.loopback import OpenAILoopback
from tests.support.mcp_http import mcp_over_http
from tests.support.serving import TURN, TURN_OPTIONS, running

GOOD = {"question": TURN, "options": TURN_OPTIONS, "frame_paths": ["clip/frame_0.png"]}
NO_KEYS = {"api_keys": frozenset()}


def post(url: str, **kwargs: object) -> httpx.Response:
    return httpx.post(url + "/v1/qa", timeout=30, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "headers",
    [
        {"host": "attacker.example"},
        {"host": "attacker.example:8000"},
        {"origin": "http://attacker.example"},
        {"origin": "null"},
        {"origin": "http://127.0.0.1.attacker.example:8000"},
    ],
    ids=["host", "host-port", "origin", "origin-null", "origin-lookalike"],
)
def test_a_foreign_page_cannot_spend_a_keyless_server(
    attack_model: OpenAILoopback, attack_root: Path, headers: dict[str, str]
) -> None:
    before = attack_model.received
    with running(attack_model, data_root=attack_root, **NO_KEYS) as server:
        refused = post(server.url, json=GOOD, headers=headers)
        form = post(server.url, data={"question": TURN, "frame_paths": "clip/frame_0.png"}, headers=headers)
        assert post(server.url, json=GOOD).status_code == 200  # the user's own client still works
    for response in (refused, form):
        assert response.status_code == 403, response.text
        assert "loopback" in response.json()["error"]["message"]
    assert attack_model.received == before + 1  # only the user's own request reached the model


def test_loopback_pages_and_an_allowed_proxy_name_are_answered(
    attack_model: OpenAILoopback, attack_root: Path
) -> None:
    with running(attack_model, data_root=attack_root, allowed_hosts=("proxy.internal",), **NO_KEYS) as server:
        port = server.port
        for headers in (
            {"origin": f"http://localhost:{port}"},
            {"origin": f"http://[::1]:{port}", "host": f"[::1]:{port}"},
            {"host": "proxy.internal", "origin": "https://proxy.internal"},
        ):
            assert post(server.url, json=GOOD, headers=headers).status_code == 200, headers


def test_x_forwarded_for_does_not_escape_the_per_client_share(attack_root: Path) -> None:
    release = threading.Event()

    def responder(body: dict) -> str:
        release.wait(20)
        return "left"

    with OpenAILoopback(responder=responder) as model:
        with running(model, data_root=attack_root, max_per_client=1, **NO_KEYS) as server:
            held = threading.Thread(
                target=post,
                args=(server.url,),
                kwargs={"json": GOOD, "headers": {"x-forwarded-for": "127.0.0.2"}},
            )
            held.start()
            try:
                for _ in range(500):  # until the first request is at the model (bounded poll)
                    if model.received:
                        break
                    threading.Event().wait(0.02)
                second = httpx.post(
                    server.url + "/v1/qa", json=GOOD, headers={"x-forwarded-for": "127.0.0.3"}, timeout=10
                )
            finally:
                release.set()
                held.join(30)
    assert second.status_code == 429, second.text
    assert "this client already has" in second.json()["error"]["message"]


def test_forwarded_addresses_are_trusted_from_the_named_proxy(attack_root: Path) -> None:
    """With --forwarded-allow-ips naming loopback, the forwarded address is the client (here: refused)."""
    with OpenAILoopback(responder=lambda body: "left") as model:
        with running(model, data_root=attack_root, forwarded_allow_ips=("127.0.0.1",), **NO_KEYS) as server:
            response = post(server.url, json=GOOD, headers={"x-forwarded-for": "203.0.113.9"})
    assert response.status_code == 403


def test_the_mcp_server_applies_the_same_host_and_origin_check(attack_root: Path) -> None:
    with mcp_over_http(attack_root) as url:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        accept = {"accept": "application/json, text/event-stream"}
        foreign = [
            httpx.post(url, json=init, headers={**accept, **h}, timeout=10)
            for h in ({"host": "attacker.example"}, {"origin": "http://attacker.example"})
        ]
    for response in foreign:
        assert response.status_code == 403, response.text
        assert "loopback" in response.json()["error"]["message"]
