"""Text that can always be written: a lone UTF-16 surrogate (`"\\ud800"`, legal in JSON escapes and in a
Python `str`, not encodable as UTF-8) is replaced by U+FFFD where text enters (a model's answer, a tool's
argument), so one bad answer never aborts a run's JSON lines or a server's response."""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogates(text: str) -> bool:
    """Whether `text` holds a lone surrogate (a Python str never holds a paired one)."""
    return _SURROGATE.search(text) is not None


def scrub(text: str) -> tuple[str, int]:
    """`text` with each lone surrogate replaced by U+FFFD, and how many were replaced."""
    return _SURROGATE.subn(REPLACEMENT, text)


def scrub_json(value: Any) -> tuple[Any, int]:
    """A JSON value (dicts, lists, strings, numbers) with every string scrubbed, keys included."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        out, n = {}, 0
        for key, item in value.items():
            clean_key, k = scrub(key) if isinstance(key, str) else (key, 0)
            out[clean_key], m = scrub_json(item)
            n += k + m
        return out, n
    if isinstance(value, list | tuple):
        items = [scrub_json(item) for item in value]
        return [item for item, _ in items], sum(n for _, n in items)
    return value, 0
