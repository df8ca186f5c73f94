"""The transformers provider on a tiny random LLaVA saved to disk: the same path a real checkpoint takes."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from kinegraph.agents import (
    BackendError,
    GenerateRequest,
    Message,
    UnknownModelError,
    get_backend,
    user_message,
)
from kinegraph.agents.transformers_local import chat_template_messages
from tests.support.event_loop import run
from tests.support.lazy import lazy_or_skip

lazy_or_skip("transformers", "the local provider's extra: pip install 'kinegraph[local]'")


def _request(text: str, frames: np.ndarray, max_tokens: int = 6) -> GenerateRequest:
    return GenerateRequest(messages=[user_message(text, frames)], max_tokens=max_tokens)


def test_chat_template_messages_places_one_placeholder_per_frame(frames):
    request = GenerateRequest(
        messages=[Message(role="system", content="be brief"), user_message("turn?", frames)]
    )
    messages, images = chat_template_messages(request)
    assert [c["type"] for c in messages[1]["content"]] == ["image", "image", "image", "text"]
    assert messages[0] == {"role": "system", "content": [{"type": "text", "text": "be brief"}]}
    assert len(images) == 3 and images[0].shape == (48, 64, 3) and images[0].dtype == np.uint8


def test_batched_generation_matches_one_by_one_greedy(tiny_vlm_dir, frames):
    backend = get_backend(f"transformers:{tiny_vlm_dir}", cache=False, max_batch_size=8)
    requests = [
        _request("turn?", frames[:1]),
        _request("is the car slowing down?", frames),
        _request("hi", frames[1:]),
    ]

    async def together():
        return await asyncio.gather(*(backend.generate(r) for r in requests))

    batched = run(together())
    single = [run(backend.generate(r)) for r in requests]
    assert [r.text for r in batched] == [r.text for r in single]
    assert all(0 < r.usage.output_tokens <= 6 for r in batched)
    # longer prompts (more text, more frames) count more input tokens
    assert batched[1].usage.input_tokens > batched[0].usage.input_tokens
    assert backend.usage.requests == 6 and backend.usage.cost_usd == 0.0


def test_generation_is_what_the_checkpoint_produces_directly(tiny_vlm_dir, frames):
    """The backend's answer equals a hand-written AutoProcessor + generate call on the same directory."""
    backend = get_backend(f"transformers:{tiny_vlm_dir}", cache=False)
    answer = run(backend.generate(_request("turn?", frames[:2]))).text

    from transformers import AutoModelForImageTextToText, AutoProcessor

    processor = AutoProcessor.from_pretrained(tiny_vlm_dir)
    model = AutoModelForImageTextToText.from_pretrained(tiny_vlm_dir)
    prompt = "user: <image><image>turn?\nassistant: "
    decoded_frames = chat_template_messages(_request("turn?", frames[:2]))[1]
    inputs = processor(text=[prompt], images=[decoded_frames], return_tensors="pt")
    out = model.generate(**inputs, max_new_tokens=6, do_sample=False, pad_token_id=0)
    expected = processor.tokenizer.decode(out[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True)
    assert answer == expected


def test_cache_serves_a_repeated_local_request(tiny_vlm_dir, frames, tmp_path):
    backend = get_backend(f"transformers:{tiny_vlm_dir}", cache=tmp_path / "c.sqlite")
    first = run(backend.generate(_request("turn?", frames[:1])))
    second = run(backend.generate(_request("turn?", frames[:1])))
    assert (first.cached, second.cached) == (False, True)
    assert second.text == first.text


def test_missing_directory_and_schema_are_clear_errors(tiny_vlm_dir, tmp_path, frames):
    with pytest.raises(UnknownModelError, match="no local weights directory"):
        get_backend(f"transformers:{tmp_path / 'nope'}")
    backend = get_backend(f"transformers:{tiny_vlm_dir}", cache=False)
    request = _request("x", frames[:1]).model_copy(update={"response_schema": {"type": "object"}})
    with pytest.raises(BackendError, match="response_schema"):
        run(backend.generate(request))


@pytest.mark.gpu
def test_runs_on_cuda_when_present(tiny_vlm_dir, frames):
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    backend = get_backend(f"transformers:{tiny_vlm_dir}", cache=False)
    assert backend.inner.device == "cuda"
    cpu = get_backend(f"transformers:{tiny_vlm_dir}", cache=False, device="cpu")
    request = _request("turn?", frames[:1])
    assert run(backend.generate(request)).text == run(cpu.generate(request)).text
