"""Transport faults against real loopback servers, on every transport: a cut-off or malformed 200, a 200
with no answer in it, `Retry-After: 0` during an outage, an oversized answer. Each ends answered or
recorded as an error, never as an answer text and never lost."""

from __future__ import annotations

import json
import random
import time
from collections import Counter

import pytest

from kinegraph.agents import BackendError, GenerateRequest, get_backend, user_message
from kinegraph.agents.loopback import AnthropicLoopback, GoogleLoopback, LoopbackServer, OpenAILoopback
from kinegraph.run import execute as run
from kinegraph.types import RunConfig, Status
from tests.support.event_loop import run as run_coroutine
from tests.support.run_data import write_egodyn_world
from tests.support.text_reader_model import text_reader

FAST = {"retry_base_s": 0.01, "retry_max_s": 0.05, "timeout_s": 2.0, "cache": False}
TARGETS = ["openai/sdk", "openai/aiohttp", "anthropic", "google"]
SERVERS = {"openai": OpenAILoopback, "anthropic": AnthropicLoopback, "google": GoogleLoopback}
MODELS = {"openai": "gpt-4o", "anthropic": "claude-haiku-4-5", "google": "gemini-2.0-flash"}
NO_ANSWER = {"openai": "no choices", "anthropic": "no content", "google": "no candidates"}


def _server(target: str, **kwargs) -> LoopbackServer:
    return SERVERS[target.partition("/")[0]](**kwargs)


def _backend(target: str, server: LoopbackServer, **options):
    provider, _, transport = target.partition("/")
    if transport:
        options["transport"] = transport
    spec = f"{provider}:{MODELS[provider]}"
    return get_backend(spec, base_url=server.base_url, api_key="k", **{**FAST, **options})


def _ask(backend) -> str:
    return run_coroutine(backend.generate(GenerateRequest(messages=[user_message("Turning?")]))).text


@pytest.mark.parametrize("target", TARGETS)
def test_connection_reset_mid_body_and_truncated_200_are_retried(target):
    with _server(target, responder=lambda body: "right", faults=["reset", "truncated"]) as server:
        answer = _ask(_backend(target, server))
    assert answer == "right"
    assert [r.fault for r in server.requests] == ["reset", "truncated", None]


@pytest.mark.parametrize("target", TARGETS)
def test_a_200_without_an_answer_is_retried_then_an_api_error(target):
    with _server(target, responder=lambda body: "right", faults=["empty", "null_message"]) as server:
        assert _ask(_backend(target, server)) == "right"
    assert len(server.requests) == 3
    with _server(target, faults=["empty"] * 3) as server:
        with pytest.raises(BackendError, match=NO_ANSWER[target.partition("/")[0]]) as info:
            _ask(_backend(target, server, max_retries=2))
    assert info.value.status == Status.api_error and len(server.requests) == 3


def _outage(seconds: float, status: int = 503):
    """A fault plan: every request fails with `status` until `seconds` after the first one arrived."""
    started: list[float] = []

    def plan(n: int) -> int | None:
        started.append(time.monotonic()) if not started else None
        return status if time.monotonic() - started[0] < seconds else None

    return plan


@pytest.mark.parametrize("target", TARGETS)
def test_retry_after_zero_does_not_shorten_the_backoff_and_an_outage_is_ridden_out(target):
    # A count alone (50 retries) would burn out within milliseconds if Retry-After: 0 replaced the
    # backoff; as a floor, the capped exponential backoff spreads the attempts over the outage.
    with _server(target, responder=lambda b: "right", fault_plan=_outage(0.6), retry_after_s=0) as server:
        backend = _backend(target, server, max_retries=50, retry_base_s=0.05, retry_max_s=0.2)
        assert _ask(backend) == "right"
    assert server.requests[-1].fault is None and len(server.requests) <= 12


def test_retries_end_at_the_time_budget_when_the_count_allows_more():
    with OpenAILoopback(fault_plan=_outage(3600), retry_after_s=0) as server:
        backend = _backend("openai/aiohttp", server, max_retries=1000, retry_budget_s=0.3, retry_max_s=0.1)
        with pytest.raises(BackendError, match="gave up after .* retry budget 1000 retries, 0.3 s") as info:
            _ask(backend)
    assert info.value.status == Status.api_error and len(server.requests) < 40


@pytest.mark.parametrize("target", TARGETS)
def test_an_oversized_answer_is_an_api_error_naming_the_limit(target):
    with _server(target, faults=["huge"], huge_bytes=2 * 2**20) as server:
        backend = _backend(target, server, max_response_bytes=256 * 2**10)
        with pytest.raises(BackendError, match=r"larger than max_response_bytes=262,144") as info:
            _ask(backend)
        assert _ask(backend) == "ok"  # the connection pool survives the refusal
    assert info.value.status == Status.api_error
    assert [r.fault for r in server.requests] == ["huge", None]  # not retried: it would come back as big


def test_the_default_cap_is_8_mib():
    with OpenAILoopback(faults=["huge"], huge_bytes=9 * 2**20) as server:
        with pytest.raises(BackendError, match=r"max_response_bytes=8,388,608"):
            _ask(_backend("openai/aiohttp", server))


def test_a_bad_cap_is_refused_when_the_backend_is_made():
    with pytest.raises(ValueError, match="max_response_bytes must be a positive integer"):
        get_backend("vllm:m", base_url="http://127.0.0.1:9/v1", cache=False, max_response_bytes=0)


# ------------------------------------------------------------------ whole runs: nothing lost, nothing silent
@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return write_egodyn_world(tmp_path_factory.mktemp("egodyn"), n_clips=4)


def _run(world, out, server, **model_options):
    config = RunConfig(
        benchmark="egodyn",
        graph="egodyn.vision",
        model="vllm:loopback-vlm",
        base_url=server.base_url,
        data=str(world),
        out_dir=str(out),
        concurrency=16,
        use_cache=False,
        model_options={"retry_base_s": 0.01, "retry_max_s": 0.05, **model_options},
    )
    summary = run(config, show_progress=False)
    totals = json.loads((out / "run.json").read_text())["totals"]
    return summary, totals


def test_answerless_200s_are_api_errors_in_the_error_rate_not_parse_failures(world, tmp_path):
    with OpenAILoopback(responder=text_reader, fault_plan=lambda n: "empty") as server:
        summary, totals = _run(world, tmp_path / "run", server, max_retries=1)
    assert summary.status_counts == {"api_error": 56}
    assert totals["error_rate"] == 1.0 and summary.metrics["n_parsed"] == 0


@pytest.mark.parametrize("transport", ["aiohttp", "sdk"])
def test_a_run_through_mixed_faults_loses_no_question(world, tmp_path, transport):
    rng = random.Random(0)
    mix = ["reset", "truncated", "empty", "null_message", 429, 503, "drop"]

    def plan(n: int):
        return rng.choice(mix) if rng.random() < 0.3 else None

    with OpenAILoopback(responder=text_reader, fault_plan=plan, retry_after_s=0) as server:
        summary, totals = _run(world, tmp_path / "run", server, transport=transport, max_retries=30)
    faults = Counter(r.fault for r in server.requests if r.fault is not None)
    assert sum(faults.values()) >= 5  # faults were injected, and every question still got its answer
    assert summary.status_counts == {"ok": 56} and totals["error_rate"] == 0.0
    assert totals["n_predictions"] == 56


def test_a_run_whose_faults_outlast_the_retries_records_every_failure(world, tmp_path):
    # every second request is reset mid-body and retries are off: each reset question is an api_error
    # prediction, counted in the error rate, and no question goes missing
    with OpenAILoopback(responder=text_reader, fault_plan=lambda n: "reset" if n % 2 else None) as s:
        summary, totals = _run(world, tmp_path / "run", s, max_retries=0, transport="aiohttp")
    failed = summary.status_counts.get("api_error", 0)
    assert summary.n_predictions == 56 and set(summary.status_counts) <= {"ok", "api_error"}
    assert failed == sum(r.fault == "reset" for r in s.requests) and failed > 0
    assert totals["error_rate"] == pytest.approx(failed / 56)
