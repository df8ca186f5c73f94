"""docs/mcp.md lists every registered tool with the schema the server offers."""

from __future__ import annotations

import json
import re
from pathlib import Path

from kinegraph.tool_registry import default_registry

DOC = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"
SECTION = re.compile(r"^### `(?P<name>\w+)`\n.*?```json\n(?P<schema>.*?)\n```", re.S | re.M)


def test_doc_lists_every_tool_with_its_schema() -> None:
    block = DOC.read_text().split("<!-- tools -->", 1)[1].split("<!-- /tools -->", 1)[0]
    documented = {m["name"]: json.loads(m["schema"]) for m in SECTION.finditer(block)}
    registry = default_registry()
    assert sorted(documented) == registry.names()
    for name, schema in documented.items():
        assert schema == json.loads(json.dumps(registry.get(name).schema())), name
