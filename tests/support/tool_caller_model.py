"""A stand-in VLM that may call tools; like `text_reader_model` it reads text only (it cannot see images).

Offered tools and no tool result in the conversation yet, it calls the tools relevant to its question(s):
`visual_odometry` for the questions visual odometry answers (turn, speed trend, heading change, lateral
acceleration, stop-and-go, brake-then-turn), `ego_motion_summary` for the others. Otherwise it answers
from the conversation's text, tool results included, with `text_reader_model.answer_text`.
Reads request bodies of the OpenAI Chat Completions and Anthropic Messages wire formats.
"""

from __future__ import annotations

from typing import Any

from kinegraph.agents.loopback_wire import Reply
from tests.support.text_reader_model import QUESTION, answer_text

VO_TOPICS = ("turning", "accelerating", "heading", "lateral", "stop-and-go", "brake and then turn")


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    texts = []
    for block in content or []:
        if block.get("type") == "text":
            texts.append(block.get("text", ""))
        elif block.get("type") == "tool_result":  # Anthropic: a tool's output inside a user turn
            texts += _texts(block.get("content"))
    return texts


def conversation_text(body: dict[str, Any]) -> str:
    """Every text the conversation holds: prompts, and tool outputs in either wire format."""
    return "\n".join(t for m in body.get("messages", []) for t in _texts(m.get("content")))


def offered_tools(body: dict[str, Any]) -> list[str]:
    """Names of the tools the request offers (OpenAI `function` wrappers or Anthropic plain tools)."""
    return [t.get("function", t).get("name", "") for t in body.get("tools") or []]


def has_tool_result(body: dict[str, Any]) -> bool:
    for message in body.get("messages", []):
        if message.get("role") == "tool":
            return True
        content = message.get("content")
        if isinstance(content, list) and any(b.get("type") == "tool_result" for b in content):
            return True
    return False


def relevant_tools(text: str) -> list[str]:
    """The tools this model wants for the questions in `text`."""
    wanted = []
    for question, _ in QUESTION.findall(text):
        tool = "visual_odometry" if any(t in question for t in VO_TOPICS) else "ego_motion_summary"
        if tool not in wanted:
            wanted.append(tool)
    return wanted


def tool_caller(body: dict[str, Any]) -> str | Reply:
    """Call the relevant offered tools first; answer from the text once their results are in."""
    text = conversation_text(body)
    if body.get("tools") and not has_tool_result(body):
        calls = [name for name in relevant_tools(text) if name in offered_tools(body)]
        if calls:
            return Reply(text="", tool_calls=[(name, {}) for name in calls])
    return answer_text(text)
