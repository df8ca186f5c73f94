"""The OpenAI-compatible facade, called with the official openai SDK against the real server."""

from __future__ import annotations

import base64

import pytest

from tests.support.lazy import lazy_module
from tests.support.serving import KEY, TURN, jpeg_bytes, turning

openai = lazy_module("openai")

IMAGE = {
    "type": "image_url",
    "image_url": {"url": "data:image/jpeg;base64," + base64.b64encode(jpeg_bytes()).decode()},
}


@pytest.fixture(scope="module")
def client(server):
    with openai.OpenAI(base_url=server.url + "/v1", api_key=KEY, max_retries=0) as sdk:
        yield sdk


def test_models_list_the_served_graphs(client):
    names = [m.id for m in client.models.list()]
    assert names == [
        "egodyn.vision",
        "egodyn.trajectory",
        "egodyn.text_only",
        "first_option_graph:build",
        "raising_graph:build",
    ]


def test_chat_completion_with_images_and_inline_options(client, text_model):
    before = len(text_model.requests)
    reply = client.chat.completions.create(
        model="egodyn.vision",
        messages=[
            {"role": "system", "content": "ignored"},
            {
                "role": "user",
                "content": [{"type": "text", "text": f"{TURN} [left / right / straight]"}, IMAGE, IMAGE],
            },
        ],
    )
    assert reply.choices[0].message.content == "left" and reply.choices[0].finish_reason == "stop"
    assert reply.model == "egodyn.vision" and reply.usage.prompt_tokens > 0
    detail = reply.model_extra["kinegraph"]
    assert detail["status"] == "ok" and detail["frames"]["indices"] == [0, 1]
    sent = text_model.requests[before].body["messages"][0]["content"]
    assert sum(p["type"] == "image_url" for p in sent) == 2
    assert sent[0]["text"].count("[left / right / straight]") == 1


def test_trajectory_and_options_through_extra_body(client):
    reply = client.chat.completions.create(
        model="egodyn.text_only",
        messages=[{"role": "user", "content": TURN}],
        extra_body={
            "options": ["left", "right", "straight"],
            "trajectory": turning(-0.3),
            "graph_options": {"encoding": "timeseries"},
        },
    )
    assert reply.choices[0].message.content == "right"


def test_streaming_gives_role_content_stop_and_usage(client):
    stream = client.chat.completions.create(
        model="egodyn.vision",
        messages=[
            {"role": "user", "content": [{"type": "text", "text": f"{TURN} [straight / left]"}, IMAGE]}
        ],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "straight"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0
    assert len({c.id for c in chunks}) == 1


def test_sdk_errors_are_the_usual_exceptions(server, client):
    with pytest.raises(openai.NotFoundError, match="unknown graph 'gpt-4o'"):
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    with openai.OpenAI(base_url=server.url + "/v1", api_key="wrong", max_retries=0) as stranger:
        with pytest.raises(openai.AuthenticationError, match="invalid API key"):
            stranger.models.list()
    remote = {"type": "image_url", "image_url": {"url": "http://example.com/a.jpg"}}
    with pytest.raises(openai.UnprocessableEntityError, match="only data: URLs"):
        client.chat.completions.create(
            model="egodyn.vision",
            messages=[{"role": "user", "content": [{"type": "text", "text": "q?"}, remote]}],
        )
    with pytest.raises(openai.UnprocessableEntityError, match="need a user message"):
        client.chat.completions.create(model="egodyn.vision", messages=[{"role": "system", "content": "x"}])
    with pytest.raises(openai.UnprocessableEntityError, match="question: String should have at most 4000"):
        client.chat.completions.create(
            model="egodyn.vision", messages=[{"role": "user", "content": "x" * 4001}]
        )
    with pytest.raises(openai.UnprocessableEntityError, match="options.0: String should have at most 200"):
        client.chat.completions.create(
            model="egodyn.vision", messages=[{"role": "user", "content": f"q? [{'a' * 201} / b]"}]
        )
