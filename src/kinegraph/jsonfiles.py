"""Read JSON and JSON Lines files; every failure is a DataError naming the file and line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kinegraph.errors import DataError


def read_text(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as exc:
        raise DataError(f"cannot read ({exc.strerror})", path=path) from exc


def read_json(path: str | Path) -> Any:
    """The parsed document."""
    path = Path(path)
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise DataError(f"not valid JSON ({exc.msg})", path=path, line=exc.lineno) from exc


def read_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-empty line; a line that is not a JSON object is an error."""
    path = Path(path)
    for lineno, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"not valid JSON ({exc.msg})", path=path, line=lineno) from exc
        if not isinstance(obj, dict):
            raise DataError(f"expected a JSON object, got {type(obj).__name__}", path=path, line=lineno)
        yield lineno, obj
