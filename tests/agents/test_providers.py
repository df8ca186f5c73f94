"""The provider registry and get_backend: spec parsing, unknown providers, install hints, the protocol."""

from __future__ import annotations

import sys

import pytest

from kinegraph.agents import (
    Backend,
    BackendError,
    UnknownModelError,
    get_backend,
    parse_model_spec,
    providers,
)


def test_registry_lists_every_provider():
    assert providers.names() == [
        "anthropic",
        "google",
        "openai",
        "reader",
        "replay",
        "scripted",
        "transformers",
        "vllm",
    ]


def test_spec_parsing_keeps_colons_and_slashes_in_the_model():
    assert parse_model_spec("vllm:Qwen/Qwen2.5-VL-7B-Instruct") == ("vllm", "Qwen/Qwen2.5-VL-7B-Instruct")
    assert parse_model_spec("replay:C:/runs/answers.jsonl") == ("replay", "C:/runs/answers.jsonl")
    with pytest.raises(UnknownModelError, match="not PROVIDER:MODEL"):
        parse_model_spec("gpt-4o")


def test_unknown_provider_lists_the_known_ones():
    with pytest.raises(UnknownModelError, match="unknown provider 'openia'.*known: anthropic, google"):
        get_backend("openia:gpt-4o")


def test_missing_sdk_gives_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "anthropic", None)  # as if the package were not installed
    with pytest.raises(BackendError, match=r"pip install .kinegraph\[anthropic\]."):
        get_backend("anthropic:claude-haiku-4-5", api_key="k")


def test_backends_satisfy_the_protocol():
    backend = get_backend("scripted:x", responses="a")
    assert isinstance(backend, Backend) and isinstance(backend.inner, Backend)
    assert (backend.provider, backend.model) == ("scripted", "x")
