"""A stand-in VLM for loopback servers: the built-in `reader` model's rules behind a wire body.

It reads only the prompt text (it cannot see images); the rules live in `kinegraph.agents.reader`.
"""

from __future__ import annotations

from typing import Any

from kinegraph.agents.reader import QUESTION, answer_text

__all__ = ["QUESTION", "answer_text", "prompt_text", "text_reader"]


def prompt_text(body: dict[str, Any]) -> str:
    parts = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        else:
            parts += [c.get("text", "") for c in content if c.get("type") == "text"]
    return "\n".join(parts)


def text_reader(body: dict[str, Any]) -> str:
    """Answer the prompt's question(s) from its text alone: tool readings first, then the numbers."""
    return answer_text(prompt_text(body))
