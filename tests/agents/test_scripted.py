"""The scripted provider: fixed text, lists (cycled or consumed), functions, scripted failures."""

from __future__ import annotations

import re

import pytest

from kinegraph.agents import (
    BackendError,
    GenerateRequest,
    GenerateResponse,
    RetryableError,
    get_backend,
    user_message,
)
from kinegraph.types import Status
from tests.support.event_loop import run


def _req(text: str = "Is the car turning?") -> GenerateRequest:
    return GenerateRequest(messages=[user_message(text)])


def test_fixed_text_and_fake_usage():
    backend = get_backend("scripted:fake", responses="left")
    response = run(backend.generate(_req()))
    assert (response.text, response.model) == ("left", "fake")
    assert (response.usage.input_tokens, response.usage.output_tokens, response.usage.requests) == (4, 1, 1)
    assert backend.cache is None


def test_list_cycles_or_is_consumed():
    cycled = get_backend("scripted:x", responses=["a", "b"])
    assert [run(cycled.generate(_req())).text for _ in range(3)] == ["a", "b", "a"]
    consumed = get_backend("scripted:x", responses=["a"], cycle=False)
    assert run(consumed.generate(_req())).text == "a"
    with pytest.raises(BackendError, match="ran out"):
        run(consumed.generate(_req()))


def test_function_of_the_request_sync_or_async():
    echo = get_backend("scripted:echo", fn=lambda request: request.messages[-1].text.upper())
    assert run(echo.generate(_req("yes"))).text == "YES"

    async def answer(request):
        return GenerateResponse(text="42", model="m")

    assert run(get_backend("scripted:a", fn=answer).generate(_req())).text == "42"


def test_a_function_named_by_import_path_as_the_command_line_gives_it():
    from tests.support.text_reader_model import text_reader

    named = get_backend("scripted:r", fn="tests.support.scripted_readers:egodyn")
    series = "speed(m/s): 8,8\naccel(m/s²): 0,0\nyaw_rate(rad/s): -0.2,-0.3\njerk(m/s³): 0,0"
    prompt = f"Is the vehicle turning left? [left / right / straight]\n{series}"
    answer = run(named.generate(_req(prompt))).text
    assert answer == text_reader({"messages": [{"content": prompt}]}) == "right"  # not the first option


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (
            "kinegraph.agents:nope",
            "scripted:x: fn=kinegraph.agents:nope: cannot import 'kinegraph.agents:nope'",
        ),
        ("no_such_module_here:f", "No module named 'no_such_module_here'"),
        ("kinegraph.media_limits:IMAGE_SUFFIX", "fn=kinegraph.media_limits:IMAGE_SUFFIX is not a function"),
        ("nocolon", "expected 'package.module:attribute'"),
    ],
)
def test_a_bad_function_name_is_refused_in_one_line(fn: str, message: str):
    with pytest.raises(BackendError, match=re.escape(message)) as info:
        get_backend("scripted:x", fn=fn)
    assert "\n" not in str(info.value)


def test_scripted_failures_go_through_retries():
    flaky = get_backend(
        "scripted:flaky", responses=[RetryableError("HTTP 429"), "ok"], cycle=False, retry_base_s=0.001
    )
    assert run(flaky.generate(_req())).text == "ok"
    broken = get_backend("scripted:b", responses=RetryableError("down"), max_retries=1, retry_base_s=0.001)
    with pytest.raises(BackendError, match="gave up after 2 attempts") as info:
        run(broken.generate(_req()))
    assert info.value.status == Status.api_error


def test_needs_exactly_one_source():
    with pytest.raises(ValueError, match="exactly one"):
        get_backend("scripted:x")
