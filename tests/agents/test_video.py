"""Video through each provider: whole where the backend takes video (`video=native`), sampled to frames
everywhere else; the wire format checked against what the official SDKs send for the same request."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from kinegraph.agents import BackendError, GenerateRequest, Message, TextPart, VideoPart, get_backend
from kinegraph.agents.cache import request_key
from kinegraph.agents.loopback import AnthropicLoopback, GoogleLoopback, OpenAILoopback
from kinegraph.media import write_video
from tests.support.event_loop import run

FAST = {"retry_base_s": 0.01, "retry_max_s": 0.05, "timeout_s": 5.0, "cache": False}


@pytest.fixture
def clip(tmp_path) -> str:
    """2 s of video at 25 fps (50 frames, each a distinct grey)."""
    path = tmp_path / "clip.mp4"
    write_video(path, np.stack([np.full((32, 48, 3), 5 * i, np.uint8) for i in range(50)]), fps=25.0)
    return str(path)


def _request(part: VideoPart) -> GenerateRequest:
    return GenerateRequest(
        messages=[Message(role="user", content=[part, TextPart(text="How fast?")])], max_tokens=64
    )


def _b64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mime_type(inline: dict) -> str:
    """The SDK writes `mime_type` (older releases `mimeType`); the API reads both spellings."""
    return inline.get("mime_type", inline.get("mimeType"))


def test_gemini_gets_the_video_inline_with_its_rate_as_the_sdk_sends_it(clip):
    from google import genai
    from google.genai import types

    video = open(clip, "rb").read()
    with GoogleLoopback(responder=lambda body: "3 m/s") as server:
        backend = get_backend(
            "google:gemini-2.5-flash", base_url=server.base_url, api_key="g", video="native", **FAST
        )
        response = run(backend.generate(_request(VideoPart(path=clip, fps=2.0))))
        # the same request built from the SDK's own types, sent by the SDK itself
        client = genai.Client(
            api_key="g", http_options={"base_url": server.base_url, "api_version": "v1beta"}
        )
        part = types.Part(
            inline_data=types.Blob(data=video, mime_type="video/mp4"),
            video_metadata=types.VideoMetadata(fps=2.0),
        )
        client.models.generate_content(
            model="gemini-2.5-flash",
            contents=[types.Content(role="user", parts=[part, types.Part(text="How fast?")])],
            config=types.GenerateContentConfig(
                temperature=0.0,
                max_output_tokens=64,
                automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            ),
        )
    ours, sdks = server.requests[0].body, server.requests[1].body
    assert ours == sdks
    sent = ours["contents"][0]["parts"][0]
    assert _mime_type(sent["inlineData"]) == "video/mp4" and _b64(sent["inlineData"]["data"]) == video
    assert sent["videoMetadata"] == {"fps": 2.0}
    assert response.text == "3 m/s"


def test_vllm_gets_a_video_url_and_media_io_kwargs_as_the_openai_sdk_sends_them(clip):
    from openai import OpenAI

    video = open(clip, "rb").read()
    url = "data:video/mp4;base64," + base64.b64encode(video).decode()
    for transport in ("sdk", "aiohttp"):
        with OpenAILoopback(responder=lambda body: "3 m/s") as server:
            backend = get_backend(
                "vllm:Qwen/Qwen2.5-VL-7B-Instruct",
                base_url=server.base_url,
                video="native",
                transport=transport,
                **FAST,
            )
            response = run(backend.generate(_request(VideoPart(path=clip, fps=2.0))))
            client = OpenAI(api_key="EMPTY", base_url=server.base_url, max_retries=0)
            client.chat.completions.create(
                model="Qwen/Qwen2.5-VL-7B-Instruct",
                messages=[
                    {
                        "role": "user",
                        "content": [
                            {"type": "video_url", "video_url": {"url": url}},
                            {"type": "text", "text": "How fast?"},
                        ],
                    }
                ],
                max_tokens=64,
                temperature=0.0,
                extra_body={"media_io_kwargs": {"video": {"fps": 2.0}}},
            )
        ours, sdks = server.requests[0].body, server.requests[1].body
        assert ours == sdks, transport
        assert ours["messages"][0]["content"][0] == {"type": "video_url", "video_url": {"url": url}}
        assert response.text == "3 m/s"


def _decoded_means(images: list[bytes]) -> list[float]:
    import cv2

    return [float(cv2.imdecode(np.frombuffer(b, np.uint8), cv2.IMREAD_GRAYSCALE).mean()) for b in images]


def test_providers_without_native_video_get_its_frames_at_the_rate_asked(clip):
    # 2 s at 25 fps sampled at 2 fps: t = 0, 0.5, 1.0, 1.5 s -> frames 0, 12, 25, 37 (greys 0, 60, 125, 185)
    part = VideoPart(path=clip, fps=2.0)
    with OpenAILoopback() as server:
        run(
            get_backend("openai:gpt-4o", base_url=server.base_url, api_key="k", **FAST).generate(
                _request(part)
            )
        )
    content = server.requests[0].body["messages"][0]["content"]
    assert [p["type"] for p in content] == ["image_url"] * 4 + ["text"]
    openai_images = [base64.b64decode(p["image_url"]["url"].split(",", 1)[1]) for p in content[:4]]
    with AnthropicLoopback() as server:
        run(
            get_backend(
                "anthropic:claude-sonnet-4-5", base_url=server.base_url, api_key="k", **FAST
            ).generate(_request(part))
        )
    blocks = server.requests[0].body["messages"][0]["content"]
    assert [b["type"] for b in blocks] == ["image"] * 4 + ["text"]
    assert [base64.b64decode(b["source"]["data"]) for b in blocks[:4]] == openai_images
    with GoogleLoopback() as server:  # Gemini without video=native: frames too
        run(
            get_backend("google:gemini-2.5-flash", base_url=server.base_url, api_key="g", **FAST).generate(
                _request(part)
            )
        )
    parts = server.requests[0].body["contents"][0]["parts"]
    assert [_mime_type(p["inlineData"]) for p in parts[:4]] == ["image/jpeg"] * 4 and "text" in parts[4]
    means = _decoded_means(openai_images)
    assert np.all(np.diff(means) > 40) and means[0] < 15  # frames 0, 12, 25, 37 in order


def test_a_video_given_as_bytes_and_counted_frames(clip):
    part = VideoPart(data=open(clip, "rb").read(), num_frames=3)
    with OpenAILoopback() as server:
        run(get_backend("vllm:m", base_url=server.base_url, **FAST).generate(_request(part)))
    content = server.requests[0].body["messages"][0]["content"]
    assert [p["type"] for p in content] == ["image_url"] * 3 + ["text"]  # frames 0, 24, 49 (default: frames)
    assert "media_io_kwargs" not in server.requests[0].body


def test_native_video_is_refused_up_front_where_the_provider_takes_none():
    for spec, options in (
        ("openai:gpt-4o", {"api_key": "k"}),
        ("anthropic:claude-sonnet-4-5", {"api_key": "k"}),
    ):
        with pytest.raises(
            BackendError, match="takes no video whole; video=native works with google and vllm"
        ):
            get_backend(spec, video="native", **options, cache=False)
    with pytest.raises(BackendError, match="video must be 'frames' or 'native', got 'whole'"):
        get_backend("vllm:m", base_url="http://127.0.0.1:9/v1", video="whole", cache=False)


def test_an_unreadable_video_fails_that_request_as_an_input_error(tmp_path):
    with OpenAILoopback() as server:
        backend = get_backend("openai:gpt-4o", base_url=server.base_url, api_key="k", **FAST)
        with pytest.raises(BackendError, match="missing or unreadable video") as info:
            run(backend.generate(_request(VideoPart(path=str(tmp_path / "gone.mp4"), fps=2.0))))
    assert info.value.status == "input_error" and server.received == 0


def test_the_cache_key_holds_the_videos_bytes_and_rate(clip):
    data = open(clip, "rb").read()
    key = lambda part: request_key("vllm", "m", {}, _request(part))  # noqa: E731
    assert key(VideoPart(data=data, fps=2.0)) == key(VideoPart(path=clip, fps=2.0))
    assert key(VideoPart(data=data, fps=2.0)) != key(VideoPart(data=data, fps=1.0))
    assert key(VideoPart(data=data, fps=2.0)) != key(VideoPart(data=data[:-1] + b"x", fps=2.0))
    with pytest.raises(ValueError, match="exactly one of data= or path="):
        VideoPart()


def test_a_local_model_sees_the_frames_the_video_samples_to(clip, tiny_vlm_dir):
    # every 25th frame of the 2 s clip (1 fps: frames 0 and 25), as images, must give the same answer
    from kinegraph.agents import encode_image
    from kinegraph.media import read_video

    backend = get_backend(f"transformers:{tiny_vlm_dir}", cache=False)
    as_video = run(backend.generate(_request(VideoPart(path=clip, fps=1.0))))
    frames, _ = read_video(clip, [0, 25])
    images = [encode_image(f) for f in frames]
    as_images = GenerateRequest(
        messages=[Message(role="user", content=[*images, TextPart(text="How fast?")])], max_tokens=64
    )
    direct = run(backend.generate(as_images))
    assert (as_video.text, as_video.usage.input_tokens) == (direct.text, direct.usage.input_tokens)
    with pytest.raises(BackendError, match="takes no video whole"):
        get_backend(f"transformers:{tiny_vlm_dir}", cache=False, video="native")
