"""VLM backends behind one async protocol: `backend = get_backend("openai:gpt-4o")`, then
`await backend.generate(request)`. Providers: openai, anthropic, google, vllm, transformers, replay,
scripted. Every backend comes wrapped in the response cache, retries, rate limits and cost accounting.
A `VideoPart` goes whole to google and vllm with `video="native"`, as frames everywhere else.
"""

from kinegraph.agents.errors import BackendError, MissingAPIKeyError, RetryableError, UnknownModelError
from kinegraph.agents.images import encode_frames, encode_image, user_message
from kinegraph.agents.managed import ManagedBackend, RetryPolicy
from kinegraph.agents.model_defaults import default_max_tokens
from kinegraph.agents.protocol import (
    Backend,
    GenerateRequest,
    GenerateResponse,
    ImagePart,
    Message,
    TextPart,
    ToolCall,
    ToolSpec,
    VideoPart,
)
from kinegraph.agents.providers import get_backend, parse_model_spec, providers

__all__ = [
    "Backend",
    "BackendError",
    "GenerateRequest",
    "GenerateResponse",
    "ImagePart",
    "ManagedBackend",
    "Message",
    "MissingAPIKeyError",
    "RetryPolicy",
    "RetryableError",
    "TextPart",
    "ToolCall",
    "ToolSpec",
    "UnknownModelError",
    "VideoPart",
    "default_max_tokens",
    "encode_frames",
    "encode_image",
    "get_backend",
    "parse_model_spec",
    "providers",
    "user_message",
]
