"""The loopback servers themselves: real HTTP, sync and async use, overlap, faults, recording."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request

import httpx
import pytest

from kinegraph.agents.loopback import AnthropicLoopback, GoogleLoopback, OpenAILoopback


def _post(url: str, body: dict) -> tuple[int, dict, dict]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


def test_sync_use_serves_chat_completions_and_models():
    with OpenAILoopback(responder=lambda body: body["messages"][0]["content"][::-1], usage=(3, 2)) as server:
        status, _, payload = _post(
            server.base_url + "/chat/completions", {"model": "m", "messages": [{"content": "abc"}]}
        )
        with urllib.request.urlopen(server.base_url + "/models", timeout=5) as response:
            models = json.loads(response.read())
    assert status == 200 and payload["choices"][0]["message"]["content"] == "cba"
    assert payload["usage"] == {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    assert models["data"][0]["id"] == "loopback-model"
    assert server.requests[0].body["messages"] == [{"content": "abc"}]


def test_without_recording_only_counts_are_kept():
    with OpenAILoopback(responder=lambda body: "x", record=False) as server:
        for _ in range(3):
            status, _, payload = _post(server.base_url + "/chat/completions", {"model": "m", "messages": []})
            assert status == 200 and payload["choices"][0]["message"]["content"] == "x"
    assert server.received == 3 and server.requests == [] and server.max_in_flight == 1


def test_injected_status_carries_retry_after_and_provider_error_shape():
    with AnthropicLoopback(faults=[429], retry_after_s=1.5) as server:
        status, headers, payload = _post(server.base_url + "/v1/messages", {"model": "m"})
        ok_status, _, _ = _post(server.base_url + "/v1/messages", {"model": "m"})
    assert (status, ok_status) == (429, 200)
    assert headers["retry-after"] == "1.5" and payload["error"]["type"] == "rate_limit_error"
    with GoogleLoopback(faults=[503]) as server:
        status, _, payload = _post(server.base_url + "/v1beta/models/g:generateContent", {})
    assert status == 503 and payload["error"]["status"] == "UNAVAILABLE"


def test_async_use_overlaps_64_requests_with_latency():
    async def main():
        async with OpenAILoopback(latency_s=0.2) as server:
            async with httpx.AsyncClient(limits=httpx.Limits(max_connections=64)) as client:
                body = {"model": "m", "messages": []}
                url = server.base_url + "/chat/completions"
                replies = await asyncio.gather(*(client.post(url, json=body) for _ in range(64)))
            return server, replies

    server, replies = asyncio.run(main())
    assert all(r.status_code == 200 for r in replies)
    assert server.max_in_flight == 64  # all 64 sleeps overlapped


def test_drop_closes_without_answer():
    with OpenAILoopback(faults=["drop"]) as server:
        with pytest.raises((urllib.error.URLError, ConnectionError, http_client_error())):
            _post(server.base_url + "/chat/completions", {})
        assert _post(server.base_url + "/chat/completions", {})[0] == 200


def http_client_error() -> type[Exception]:
    import http.client

    return http.client.HTTPException
