"""The provider registry and `get_backend("PROVIDER:MODEL")`.

Each provider is a lazy `module:factory` entry; a factory imports its SDK inside its body (with an
install hint when missing) and returns a bare provider backend, which `get_backend` wraps in the
cache, rate limits, retries and cost accounting (`ManagedBackend`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from kinegraph.agents.cache import ResponseCache, resolve_cache_path
from kinegraph.agents.errors import BackendError, MissingAPIKeyError, UnknownModelError
from kinegraph.agents.limits import RateLimiter
from kinegraph.agents.managed import ManagedBackend, RetryPolicy
from kinegraph.agents.pricing import PriceTable
from kinegraph.registry import Registry, did_you_mean

ProviderFactory = Callable[..., Any]

providers: Registry[ProviderFactory] = Registry("provider")
providers.register("openai", "kinegraph.agents.openai_api:create_openai")
providers.register("vllm", "kinegraph.agents.openai_api:create_vllm")
providers.register("anthropic", "kinegraph.agents.anthropic_api:create_anthropic")
providers.register("google", "kinegraph.agents.google_api:create_google")
providers.register("transformers", "kinegraph.agents.transformers_local:create_transformers")
providers.register("replay", "kinegraph.agents.replay:create_replay")
providers.register("scripted", "kinegraph.agents.scripted:create_scripted")
providers.register("reader", "kinegraph.agents.reader:create_reader")

#: Providers that send a sampling seed (their `seed` backend option). Anthropic's API takes none; the
#: transformers provider does not seed its local sampling; replay and scripted sample nothing.
SEEDED_PROVIDERS = frozenset({"openai", "vllm", "google"})


def parse_model_spec(spec: str) -> tuple[str, str]:
    """`"openai:gpt-4o"` -> ("openai", "gpt-4o"); the model part may itself contain ':' or '/'."""
    provider, sep, model = spec.partition(":")
    if not sep or not provider or not model:
        known = ", ".join(providers.names())
        raise UnknownModelError(f"model spec {spec!r} is not PROVIDER:MODEL (providers: {known})")
    return provider, model


def get_backend(
    spec: str,
    *,
    base_url: str | None = None,
    cache: str | Path | bool | None = None,
    max_retries: int = 10,
    retry_base_s: float = 1.0,
    retry_max_s: float = 60.0,
    retry_budget_s: float = 120.0,
    max_concurrency: int | None = None,
    rpm: float | None = None,
    budget_usd: float | None = None,
    prices: str | Path | None = None,
    **options: Any,
) -> ManagedBackend:
    """A ready backend for `PROVIDER:MODEL`: `await backend.generate(request)`.

    `cache`: None -> `$KINEGRAPH_CACHE` or ~/.cache/kinegraph/responses.sqlite; a path; False -> off
    (replay and scripted never cache). `max_concurrency`/`rpm` limit this backend's calls (default:
    the provider's own concurrency default, no rpm limit). A transient failure is retried up to
    `max_retries` times within `retry_budget_s` seconds of the first attempt. `budget_usd` refuses a
    request whose worst-case cost would cross it. Other `options` go to the provider (e.g. `api_key`,
    `timeout_s`, `max_response_bytes`, `seed` for `SEEDED_PROVIDERS`, `responses`, `fn`, `path`).
    """
    provider, model = parse_model_spec(spec)
    if provider not in providers:
        known = ", ".join(providers.names())
        close = did_you_mean(provider, providers.names())
        hint = f" (did you mean {close}?)" if close else ""
        raise UnknownModelError(f"unknown provider {provider!r} in {spec!r}{hint}; known: {known}")
    factory = providers.get(provider)
    try:
        inner = factory(model, base_url=base_url, **options)
    except TypeError as exc:
        bad = re.search(r"unexpected keyword argument '(\w+)'", str(exc))
        if bad is None:
            raise
        raise BackendError(f"{spec}: the {provider} provider has no option {bad.group(1)!r}") from None
    cache_path = resolve_cache_path(cache) if getattr(inner, "cacheable", True) else None
    concurrency = max_concurrency or getattr(inner, "default_concurrency", None)
    return ManagedBackend(
        inner,
        cache=ResponseCache(cache_path) if cache_path is not None else None,
        limiter=RateLimiter(concurrency, rpm),
        retry=RetryPolicy(
            max_retries=max_retries,
            base_delay_s=retry_base_s,
            max_delay_s=retry_max_s,
            budget_s=retry_budget_s,
        ),
        prices=PriceTable.load(prices),
        budget_usd=budget_usd,
    )


def require_sdk(module: str, extra: str | None, provider: str) -> ModuleType:
    """Import a provider's SDK, or fail with the pip command that installs it: the extra that carries it
    (None: the core install carries it, and the message names the distribution)."""
    from kinegraph.extras import MissingExtraError, require

    try:
        return require(module, f"the {provider} provider", extra)
    except MissingExtraError as exc:
        raise BackendError(str(exc)) from None


def api_key_from_env(given: str | None, env_vars: tuple[str, ...], spec: str) -> str:
    """The key passed in, else the first of `env_vars` that is set; else a MissingAPIKeyError naming them."""
    if given:
        return given
    for name in env_vars:
        value = os.environ.get(name)
        if value:
            return value
    names = " or ".join(env_vars)
    raise MissingAPIKeyError(f"set {names} (or pass api_key=...) to use {spec}")
