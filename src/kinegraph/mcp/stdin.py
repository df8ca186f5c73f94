"""The MCP server's stdin, one JSON-RPC message a line, with lone UTF-16 surrogate escapes (`"\\ud800"`)
rewritten as U+FFFD. The SDK's strict parser refuses such a line without reading its id, so the call would
never be answered; rewritten, it is answered like any other (here: a tool error naming no such file)."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator
from io import TextIOWrapper

import anyio

from kinegraph.unicode_text import scrub_json

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def scrub_line(line: str) -> str:
    """`line` with lone surrogates in its JSON strings replaced by U+FFFD; other lines unchanged."""
    if _SURROGATE_ESCAPE.search(line) is None:
        return line
    try:
        value, n = scrub_json(json.loads(line))
    except ValueError:
        return line  # not JSON: the SDK answers its parse error as before
    return json.dumps(value, ensure_ascii=False) + "\n" if n else line


class ScrubbedStdin:
    """An async line iterator over the process's stdin (UTF-8, bad bytes replaced), lines scrubbed."""

    def __init__(self) -> None:
        self._file = anyio.wrap_file(TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._file:
            yield scrub_line(line)
