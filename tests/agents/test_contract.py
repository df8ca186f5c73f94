"""Every registered provider answers the same request through the same protocol (STYLE 11)."""

from __future__ import annotations

import contextlib
import json

import pytest

from kinegraph.agents import GenerateRequest, GenerateResponse, get_backend, providers, user_message
from kinegraph.agents.loopback import AnthropicLoopback, GoogleLoopback, OpenAILoopback
from tests.support.event_loop import run


@contextlib.contextmanager
def _backend(provider: str, tmp_path, request):
    opts = {"cache": False}
    if provider in ("openai", "vllm", "anthropic", "google"):
        server_cls = {"anthropic": AnthropicLoopback, "google": GoogleLoopback}.get(provider, OpenAILoopback)
        with server_cls(responder=lambda body: "straight") as server:
            model = {"anthropic": "claude-haiku-4-5", "google": "gemini-2.0-flash"}.get(provider, "gpt-4o")
            yield (
                get_backend(f"{provider}:{model}", base_url=server.base_url, api_key="k", **opts),
                "straight",
            )
    elif provider == "transformers":
        yield get_backend(f"transformers:{request.getfixturevalue('tiny_vlm_dir')}", **opts), None
    elif provider == "reader":  # reads the prompt's text: any text answer, whatever the question
        yield get_backend("reader:text", **opts), None
    elif provider == "replay":
        path = tmp_path / "m_answers.jsonl"
        path.write_text(json.dumps({"qa_id": "s1", "model_answer": "straight"}) + "\n")
        yield get_backend(f"replay:{path}", **opts), "straight"
    else:
        yield get_backend(f"{provider}:fake", responses="straight", **opts), "straight"


@pytest.mark.parametrize("provider", providers.names())
def test_every_provider_answers_text_and_frames(provider, frames, tmp_path, request):
    asked = GenerateRequest(
        messages=[user_message("Turning?", frames[:2])], max_tokens=4, metadata={"sample_id": "s1"}
    )
    with _backend(provider, tmp_path, request) as (backend, expected):
        response = run(backend.generate(asked))
    assert isinstance(response, GenerateResponse) and response.cached is False
    assert response.text == expected if expected is not None else isinstance(response.text, str)
    assert backend.usage.requests == 1
