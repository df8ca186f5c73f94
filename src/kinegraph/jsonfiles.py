"""Read JSON and JSON Lines files; every failure is a DataError naming the file and line.

JSON Lines are split on b"\\n" only: U+2028, U+2029 and U+0085 are legal raw characters inside a JSON string
and `str.splitlines()` would cut a valid line there.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kinegraph.errors import DataError


def read_text(path: str | Path) -> str:
    """The file's UTF-8 text (a leading BOM dropped); unreadable or non-UTF-8 bytes are a DataError."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read ({exc.strerror})", path=path) from exc
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataError(f"not UTF-8 (byte {data[exc.start]:#04x})", path=path, line=line) from exc


def read_json(path: str | Path) -> Any:
    """The parsed document."""
    path = Path(path)
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise DataError(f"not valid JSON ({exc.msg})", path=path, line=exc.lineno) from exc
    except RecursionError as exc:
        raise DataError("JSON nested too deeply", path=path) from exc


def read_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-empty line; a line that is not a JSON object is an error."""
    path = Path(path)
    for lineno, line in enumerate(read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"not valid JSON ({exc.msg})", path=path, line=lineno) from exc
        except RecursionError as exc:
            raise DataError("JSON nested too deeply", path=path, line=lineno) from exc
        if not isinstance(obj, dict):
            raise DataError(f"expected a JSON object, got {type(obj).__name__}", path=path, line=lineno)
        yield lineno, obj
