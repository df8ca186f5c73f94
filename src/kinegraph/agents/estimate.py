"""Upper estimates of what a request costs before it is sent: prompt tokens from its text and images,
output tokens from its `max_tokens`, priced with the run's price table.

The estimates lean high on purpose (a spending limit must stop before the budget is crossed, not after):
text counts one token per 3 characters (English tokenizers average about 4), and an image counts its
pixels / 750 (Anthropic's published rule, above OpenAI's and Gemini's tile counts for the frame sizes
sent here), between 85 and 1,600 tokens; an image of unknown size counts 1,600. A video counts 1,600 per
frame the model is asked to sample (`video_tokens`).
"""

from __future__ import annotations

import math

from kinegraph.agents.errors import BackendError
from kinegraph.agents.model_defaults import default_max_tokens
from kinegraph.agents.pricing import PriceTable
from kinegraph.agents.protocol import GenerateRequest, GenerateResponse, ImagePart, VideoPart
from kinegraph.types import Status

CHARS_PER_TOKEN = 3
IMAGE_TOKENS_MIN, IMAGE_TOKENS_MAX = 85, 1600
PIXELS_PER_IMAGE_TOKEN = 750


def image_tokens(part: ImagePart) -> int:
    """Upper estimate of one image's prompt tokens."""
    if part.width is None or part.height is None:
        return IMAGE_TOKENS_MAX
    tokens = math.ceil(part.width * part.height / PIXELS_PER_IMAGE_TOKEN)
    return min(IMAGE_TOKENS_MAX, max(IMAGE_TOKENS_MIN, tokens))


def video_tokens(part: VideoPart) -> int:
    """Upper estimate of one video's prompt tokens: 1,600 per frame sampled at `part.fps` (every frame when
    no rate is set, at most `num_frames` when that is), read from the container header."""
    from kinegraph.agents.video import video_file
    from kinegraph.media import video_info

    try:
        with video_file(part) as path:
            n_total, video_fps = video_info(path)
    except (OSError, ValueError) as exc:  # DataError is a ValueError
        message = f"cannot read the video to estimate its cost: {exc}"
        raise BackendError(message, status=Status.input_error) from None
    frames = n_total
    if part.fps is not None and video_fps > 0:
        frames = min(n_total, math.ceil(n_total / video_fps * part.fps) + 1)
    elif part.num_frames is not None:
        frames = min(n_total, part.num_frames)
    return max(1, frames) * IMAGE_TOKENS_MAX


def input_tokens(request: GenerateRequest) -> int:
    """Upper estimate of a request's prompt tokens: its texts, tool specs, schema and images."""
    chars, images = 0, 0
    for message in request.messages:
        for part in message.parts:
            if isinstance(part, ImagePart):
                images += image_tokens(part)
            elif isinstance(part, VideoPart):
                images += video_tokens(part)
            else:
                chars += len(part.text)
        for call in message.tool_calls or []:
            chars += len(call.name) + len(str(call.arguments))
    for tool in request.tools or []:
        chars += len(tool.name) + len(tool.description) + len(str(tool.parameters))
    if request.response_schema is not None:
        chars += len(str(request.response_schema))
    return math.ceil(chars / CHARS_PER_TOKEN) + images


def output_tokens(request: GenerateRequest, model: str) -> int:
    """The most output tokens the request allows (the model family's default when unset)."""
    return request.max_tokens if request.max_tokens is not None else default_max_tokens(model)


def worst_case_cost_usd(prices: PriceTable, provider: str, model: str, request: GenerateRequest) -> float:
    """The request's cost if its prompt is as long as estimated and its answer uses every output token."""
    return prices.cost_usd(provider, model, input_tokens(request), output_tokens(request, model))


class EstimatingBackend:
    """A backend that sends nothing: it tallies each request's estimated tokens and worst-case cost, then
    refuses it, so every model call chain of a graph is counted at its first request (a dry run)."""

    def __init__(self, provider: str, model: str, prices: PriceTable) -> None:
        self.provider = provider
        self.model = model
        self.prices = prices
        self.requests = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.worst_case_cost_usd = 0.0

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        self.requests += 1
        self.input_tokens += input_tokens(request)
        self.output_tokens += output_tokens(request, self.model)
        self.worst_case_cost_usd += worst_case_cost_usd(self.prices, self.provider, self.model, request)
        raise BackendError("dry run: nothing is sent", status=Status.skipped)
