"""schemathesis against the live server's OpenAPI schema: whatever it sends, no answer is a 5xx."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode

from tests.support.serving import AUTH, running

EXAMPLES_PER_OPERATION = 15


@pytest.fixture(scope="module")
def fuzzed_server(text_model, data_root):
    with running(text_model, data_root=data_root, max_body_bytes=2**20, max_frames=8) as srv:
        yield srv


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_schemathesis_finds_no_server_error(fuzzed_server, mode):
    schema = schemathesis.openapi.from_url(fuzzed_server.url + "/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {f"{op.method.upper()} {op.path}" for op in operations} >= {
        "POST /v1/qa",
        "POST /v1/chat/completions",
    }
    if mode is GenerationMode.NEGATIVE:  # only a body can be made invalid; the GETs take no input
        operations = [op for op in operations if op.method.upper() == "POST"]
    seen: list[int] = []
    for operation in operations:

        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy(generation_mode=mode))
        def check(case) -> None:
            response = case.call(base_url=fuzzed_server.url, headers=AUTH, timeout=30)
            seen.append(response.status_code)
            assert response.status_code < 500, (
                f"{case.method} {case.path} -> {response.status_code}: {response.text[:300]}"
            )

        check()
    assert len(seen) >= len(operations)
