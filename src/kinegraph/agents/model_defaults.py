"""Per-family defaults: how many output tokens a model gets when a request does not say.

Reasoning models spend output tokens on hidden thinking before the answer, so they get a larger default;
a too-small budget returns an empty answer, which would be scored as a failure for the wrong reason.
"""

from __future__ import annotations

import re

DEFAULT_MAX_TOKENS = 2048
REASONING_MAX_TOKENS = 16384

# Families that think before answering (matched against the model name, case-insensitive).
_REASONING = re.compile(
    r"(^|[/:_-])(o1|o3|o4)([-_.]|$)|gpt-5|thinking|reason|deepseek-r1|qwq|gemini-(2\.5|3)|glm-4\.\dv",
    re.IGNORECASE,
)


def is_reasoning_model(model: str) -> bool:
    """True for families that reason before answering (o-series, gpt-5, *-thinking, R1, Gemini 2.5+, ...)."""
    return bool(_REASONING.search(model))


def default_max_tokens(model: str) -> int:
    """The output-token budget a request gets when it leaves `max_tokens` unset."""
    return REASONING_MAX_TOKENS if is_reasoning_model(model) else DEFAULT_MAX_TOKENS
