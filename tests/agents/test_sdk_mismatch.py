"""An SDK that does not fit the calling code fails the sample at once, naming its version; a malformed
answer from a fitting SDK stays retryable."""

from __future__ import annotations

import subprocess

import pytest

from kinegraph.agents.sdk_mismatch import SdkMismatchError, lacks_field, sdk_mismatch
from tests.support.lazy import lazy_module
from tests.support.venvs import announcer, cached_venv, overlay, pip

anthropic = lazy_module("anthropic")


def _attribute_error(read) -> AttributeError:
    try:
        read()
    except AttributeError as exc:
        return exc
    raise AssertionError("the read succeeded")


def test_a_field_the_sdk_type_does_not_declare_is_a_mismatch():
    usage = anthropic.types.Usage.model_construct(input_tokens=1, output_tokens=2)
    message = anthropic.types.Message.model_construct(usage=usage, content=[])
    exc = _attribute_error(lambda: message.usage.tokens_from_a_newer_release)
    assert lacks_field(exc, message, anthropic)
    error = sdk_mismatch("anthropic:claude-haiku-4-5", anthropic, exc)
    assert isinstance(error, SdkMismatchError)
    assert f"anthropic {anthropic.__version__} does not fit this call" in str(error)
    assert "pip install -U 'kinegraph[anthropic]'" in str(error) and "\n" not in str(error)


def test_a_declared_field_the_answer_left_out_is_not_a_mismatch():
    # the SDK reads a declared field the answer left out as None (the loopback's `null_message` fault)
    message = anthropic.types.Message.model_construct(usage=None, content=None)
    assert not lacks_field(_attribute_error(lambda: message.usage.input_tokens), message, anthropic)
    assert not lacks_field(_attribute_error(lambda: message.content.text), message, anthropic)


ASK = """
import asyncio
from kinegraph.agents import BackendError, GenerateRequest, get_backend, user_message
from kinegraph.agents.loopback import AnthropicLoopback

with AnthropicLoopback(responder=lambda body: "left") as server:
    backend = get_backend(
        "anthropic:claude-haiku-4-5", base_url=server.base_url, api_key="k", cache=False,
        retry_base_s=0.01, retry_max_s=0.05, timeout_s=5.0,
    )
    try:
        asyncio.run(backend.generate(GenerateRequest(messages=[user_message("Turning?")])))
    except BackendError as exc:
        print(exc)
    print("requests", len(server.requests))
"""


@pytest.mark.slow
def test_an_sdk_older_than_the_floor_fails_at_once_naming_its_version(request):
    # anthropic 0.40 reads answers into a `Usage` type without the cache-token fields the parser reads
    def fill(python):
        pip(python, "--no-deps", "anthropic==0.40.0")
        overlay(python)

    python = cached_venv("anthropic-0.40", fill, announcer(request.config))
    done = subprocess.run([str(python), "-c", ASK], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "requests 1", lines  # never retried
    assert "anthropic 0.40.0 does not fit this call (AttributeError" in lines[0]
    assert "pip install -U 'kinegraph[anthropic]'" in lines[0] and len(lines) == 2
