"""The wrapper every backend comes in: backoff schedule, budget, default max tokens, running usage."""

from __future__ import annotations

import pytest

from kinegraph.agents import BackendError, GenerateRequest, RetryPolicy, get_backend, user_message
from kinegraph.types import Status
from tests.support.event_loop import run


def test_backoff_grows_exponentially_with_jitter_and_honours_retry_after():
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=8.0)
    for attempt, ceiling in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 8.0), (6, 8.0)]:
        delays = [policy.delay_s(attempt) for _ in range(200)]
        assert ceiling / 2 <= min(delays) and max(delays) <= ceiling
        assert max(delays) - min(delays) > 0  # jittered
    assert policy.delay_s(0, retry_after_s=12.5) == 12.5
    assert RetryPolicy(max_retry_after_s=30).delay_s(0, retry_after_s=3600) == 30


def test_budget_refuses_a_request_before_it_could_cross_the_budget(tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("scripted:\n  x: {input: 1000, output: 1000}\n")
    # worst case of one request: 1 prompt token (1 character) + 3 output tokens = 4 tokens = $0.004
    backend = get_backend("scripted:x", responses="a b c", budget_usd=0.006, prices=prices)
    request = GenerateRequest(messages=[user_message("q")], max_tokens=3)
    first = run(backend.generate(request))
    assert first.usage.cost_usd == pytest.approx((1 * 1000 + 3 * 1000) / 1e6)  # 1 word in, 3 out
    with pytest.raises(BackendError, match="budget of \\$0.006 would be crossed") as info:
        run(backend.generate(request))  # $0.004 spent + $0.004 worst case > $0.006
    assert info.value.status == Status.budget_exceeded
    assert backend.usage.requests == 1 and backend.usage.cost_usd <= 0.006


def test_default_max_tokens_by_family():
    seen = []
    for spec, expected in [
        ("scripted:gpt-4o", 2048),
        ("scripted:o3-mini", 16384),
        ("scripted:qwen3-vl-thinking", 16384),
    ]:
        backend = get_backend(spec, fn=lambda r: seen.append(r.max_tokens) or "x")
        run(backend.generate(GenerateRequest(messages=[user_message("q")])))
        assert seen[-1] == expected
    backend = get_backend("scripted:o3", fn=lambda r: seen.append(r.max_tokens) or "x")
    run(backend.generate(GenerateRequest(messages=[user_message("q")], max_tokens=7)))
    assert seen[-1] == 7
