"""A backend's sampling seed: on the wire as each official SDK sends it, in the response cache's key, and
refused where the provider's API takes none."""

from __future__ import annotations

import pytest

from kinegraph.agents import BackendError, GenerateRequest, Message, get_backend
from kinegraph.agents.cache import ResponseCache
from kinegraph.agents.loopback import GoogleLoopback, OpenAILoopback
from kinegraph.agents.providers import SEEDED_PROVIDERS
from tests.support.event_loop import run

FAST = {"retry_base_s": 0.01, "retry_max_s": 0.05, "timeout_s": 5.0, "cache": False}


def _request() -> GenerateRequest:
    return GenerateRequest(messages=[Message(role="user", content="Turning?")], max_tokens=16)


@pytest.mark.parametrize(("spec", "transport"), [("openai:gpt-4o", "sdk"), ("vllm:qwen", "aiohttp")])
def test_chat_completions_carry_the_seed_as_the_openai_sdk_sends_it(spec, transport):
    from openai import OpenAI

    with OpenAILoopback(responder=lambda body: "left") as server:
        backend = get_backend(
            spec, base_url=server.base_url, api_key="k", transport=transport, seed=3, **FAST
        )
        run(backend.generate(_request()))
        client = OpenAI(api_key="k", base_url=server.base_url, max_retries=0)
        client.chat.completions.create(
            model=spec.partition(":")[2],
            messages=[{"role": "user", "content": "Turning?"}],
            temperature=0.0,
            seed=3,
            **({"max_completion_tokens": 16} if spec.startswith("openai") else {"max_tokens": 16}),
        )
        unseeded = get_backend(spec, base_url=server.base_url, api_key="k", transport=transport, **FAST)
        run(unseeded.generate(_request()))
    ours, sdks, plain = (r.body for r in server.requests)
    assert ours == sdks and ours["seed"] == 3
    assert "seed" not in plain  # no seed given: the request's bytes are what they were before seeds


def test_gemini_carries_the_seed_in_generation_config_as_the_sdk_sends_it():
    from google import genai
    from google.genai import types

    with GoogleLoopback(responder=lambda body: "left") as server:
        backend = get_backend(
            "google:gemini-2.5-flash", base_url=server.base_url, api_key="g", seed=3, **FAST
        )
        run(backend.generate(_request()))
        client = genai.Client(
            api_key="g", http_options={"base_url": server.base_url, "api_version": "v1beta"}
        )
        client.models.generate_content(
            model="gemini-2.5-flash",
            contents=[types.Content(role="user", parts=[types.Part(text="Turning?")])],
            config=types.GenerateContentConfig(
                temperature=0.0,
                max_output_tokens=16,
                seed=3,
                automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            ),
        )
        unseeded = get_backend("google:gemini-2.5-flash", base_url=server.base_url, api_key="g", **FAST)
        run(unseeded.generate(_request()))
    ours, sdks, plain = (r.body for r in server.requests)
    assert ours == sdks and ours["generationConfig"]["seed"] == 3
    assert "seed" not in plain["generationConfig"]


@pytest.mark.parametrize(
    ("provider", "options"),
    [
        ("anthropic", {"api_key": "k"}),
        ("transformers", {}),
        ("replay", {}),
        ("scripted", {"responses": ["a"]}),
    ],
)
def test_providers_that_send_no_seed_refuse_one(provider, options):
    assert provider not in SEEDED_PROVIDERS
    with pytest.raises(BackendError, match=f"the {provider} provider has no option 'seed'"):
        get_backend(f"{provider}:m", seed=3, **options, **FAST)


def test_each_seed_has_its_own_cache_entries(tmp_path):
    cache = tmp_path / "cache.sqlite"
    with OpenAILoopback(responder=lambda body: f"seed {body.get('seed')}") as server:

        def ask(seed: int | None) -> str:
            options = {**FAST, "cache": str(cache)}
            backend = get_backend("vllm:qwen", base_url=server.base_url, seed=seed, **options)
            response = run(backend.generate(_request()))
            return f"{response.text}{' (cached)' if response.cached else ''}"

        answers = [ask(0), ask(1), ask(0), ask(None), ask(1)]
    assert answers == ["seed 0", "seed 1", "seed 0 (cached)", "seed None", "seed 1 (cached)"]
    assert [r.body.get("seed") for r in server.requests] == [0, 1, None]
    assert len(ResponseCache(cache)) == 3
