"""The `transformers` provider: a local weights directory run in-process with batched generation.

`transformers:/path/to/weights` loads AutoProcessor + AutoModelForImageTextToText, renders each request
with the model's chat template, and generates for concurrent requests in batches (left padding; greedy
at temperature 0). Device: CUDA when present, else CPU (`device=` overrides). Nothing is downloaded:
the path must be a local directory. Tools are passed to the chat template but tool calls are not
parsed from the text; `response_schema` is refused (no constrained decoding here). A video is sampled to
frames before the call; `video="native"` is refused.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from kinegraph.agents.errors import BackendError, UnknownModelError
from kinegraph.agents.images import decode_image
from kinegraph.agents.limits import LoopLocal
from kinegraph.agents.protocol import GenerateRequest, GenerateResponse, ImagePart, VideoPart
from kinegraph.agents.providers import require_sdk
from kinegraph.agents.video import as_frames, video_input
from kinegraph.microbatch import MicroBatcher
from kinegraph.types import Usage


def chat_template_messages(request: GenerateRequest) -> tuple[list[dict[str, Any]], list[Any]]:
    """Messages in the chat-template format ({"type": "image"} placeholders) and the decoded images
    (RGB uint8 (H, W, 3) arrays) in the order the placeholders appear."""
    messages: list[dict[str, Any]] = []
    images: list[Any] = []
    for message in request.messages:
        content: list[dict[str, Any]] = []
        for part in message.parts:
            if isinstance(part, ImagePart):
                content.append({"type": "image"})
                images.append(decode_image(part))
            elif isinstance(part, VideoPart):
                raise ValueError("the chat template takes frames: sample the video first (agents.video)")
            else:
                content.append({"type": "text", "text": part.text})
        messages.append({"role": message.role, "content": content})
    return messages, images


class TransformersBackend:
    """A local image-text-to-text model; concurrent `generate` calls are batched."""

    provider = "transformers"

    def __init__(
        self,
        model: str,
        *,
        device: str | None = None,
        dtype: Any = None,
        max_batch_size: int = 8,
        batch_wait_s: float = 0.01,
        trust_remote_code: bool = False,
        video: str = "frames",
    ) -> None:
        video_input(f"transformers:{model}", video, native=False)
        path = Path(model).expanduser()
        if not path.is_dir():
            raise UnknownModelError(f"transformers:{model}: no local weights directory at {path}")
        transformers = require_sdk("transformers", "local", "transformers")
        self.torch = require_sdk("torch", "local", "transformers")
        self.model = model
        self.device = device or ("cuda" if self.torch.cuda.is_available() else "cpu")
        if dtype is None:
            dtype = "auto" if self.device.startswith("cuda") else self.torch.float32
        self.processor = transformers.AutoProcessor.from_pretrained(path, trust_remote_code=trust_remote_code)
        self.tokenizer = getattr(self.processor, "tokenizer", self.processor)
        self.tokenizer.padding_side = "left"  # decoder-only batched generation continues from the right
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.network = transformers.AutoModelForImageTextToText.from_pretrained(
            path, dtype=dtype, trust_remote_code=trust_remote_code
        )
        self.network.to(self.device).eval()
        self.params: dict[str, Any] = {"dtype": str(self.network.dtype)}
        self.max_batch_size = max(1, max_batch_size)
        self._lock = threading.Lock()
        self._batchers = LoopLocal(
            lambda: MicroBatcher(
                self._generate_batch,
                self.max_batch_size,
                batch_wait_s,
                key=_batch_key,
                wrap_error=_generation_failed,
            )
        )

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        if request.response_schema is not None:
            raise BackendError(
                f"transformers:{self.model}: response_schema is not supported by this provider"
            )
        request = await as_frames(request)
        batcher = await self._batchers.get()
        return await batcher.submit(request)

    def _generate_batch(self, requests: list[GenerateRequest]) -> list[GenerateResponse]:
        """Render, pad, generate and decode one batch (all with the same decoding settings)."""
        texts, images = [], []
        for request in requests:
            messages, frames = chat_template_messages(request)
            tools = [{"type": "function", "function": t.model_dump()} for t in request.tools or []] or None
            texts.append(
                self.processor.apply_chat_template(
                    messages, tools=tools, add_generation_prompt=True, tokenize=False
                )
            )
            images.append(frames)
        kwargs: dict[str, Any] = {"text": texts, "return_tensors": "pt", "padding": True}
        if any(images):
            kwargs["images"] = images
        inputs = self.processor(**kwargs).to(self.device)
        if "pixel_values" in inputs:
            inputs["pixel_values"] = inputs["pixel_values"].to(self.network.dtype)
        first = requests[0]
        generation: dict[str, Any] = {
            "max_new_tokens": first.max_tokens or 512,
            "do_sample": first.temperature > 0,
        }
        if first.temperature > 0:
            generation["temperature"] = first.temperature
        with self._lock, self.torch.inference_mode():
            output = self.network.generate(**inputs, **generation, pad_token_id=self.tokenizer.pad_token_id)
        new_tokens = output[:, inputs["input_ids"].shape[1] :]
        stops = _stop_ids(self.network, self.tokenizer)
        responses = []
        for row, attention in zip(
            new_tokens.tolist(), inputs["attention_mask"].sum(dim=1).tolist(), strict=True
        ):
            length = next((i for i, token in enumerate(row) if token in stops), len(row))
            responses.append(
                GenerateResponse(
                    text=self.tokenizer.decode(row[:length], skip_special_tokens=True),
                    model=self.model,
                    usage=Usage(input_tokens=int(attention), output_tokens=length),
                    finish_reason="stop" if length < len(row) else "length",
                )
            )
        return responses


def _stop_ids(network: Any, tokenizer: Any) -> set[int]:
    eos = getattr(network.generation_config, "eos_token_id", None)
    ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
    ids.add(tokenizer.pad_token_id)
    return {i for i in ids if i is not None}


def _batch_key(request: GenerateRequest) -> tuple[Any, ...]:
    """Requests batch together only with the same decoding settings and with or without images."""
    has_images = any(isinstance(p, ImagePart) for m in request.messages for p in m.parts)
    return (request.max_tokens, request.temperature, has_images)


def _generation_failed(exc: Exception) -> BackendError:
    return BackendError(f"transformers: generation failed: {exc}")


def create_transformers(model: str, *, base_url: str | None = None, **options: Any) -> TransformersBackend:
    """Factory for `transformers:/path/to/weights`."""
    return TransformersBackend(model, **options)
