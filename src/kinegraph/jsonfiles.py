"""Read JSON and JSON Lines files; every failure is a DataError naming the file and line.

JSON Lines are split on b"\\n" only: U+2028, U+2029 and U+0085 are legal raw characters inside a JSON string
and `str.splitlines()` would cut a valid line there. Only regular files are read (a FIFO would hang, a
device never end), at most MAX_DATA_FILE_BYTES of them, and a JSON line at most MAX_JSONL_LINE_BYTES long.
Inside `collecting_bad_lines()` a bad JSON line is recorded and skipped instead of raised, so `data check`
reports every one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from kinegraph.bounded_read import TooLarge, read_bounded, read_descriptor_bounded
from kinegraph.errors import DataError

MAX_DATA_FILE_BYTES = 2 * 2**30
MAX_JSONL_LINE_BYTES = 16 * 2**20
_bad_lines: ContextVar[list[DataError] | None] = ContextVar("bad_lines", default=None)


@contextmanager
def collecting_bad_lines() -> Iterator[list[DataError]]:
    """While open, `read_jsonl` appends each bad line's DataError to the yielded list and skips it."""
    found: list[DataError] = []
    token = _bad_lines.set(found)
    try:
        yield found
    finally:
        _bad_lines.reset(token)


def read_text(path: str | Path) -> str:
    """The file's UTF-8 text (a leading BOM dropped); unreadable or non-UTF-8 bytes are a DataError."""
    path = Path(path)
    return _text(_bounded(lambda: read_bounded(path, MAX_DATA_FILE_BYTES), path), path)


def read_descriptor_text(fd: int, path: str | Path) -> str:
    """`read_text` of the regular file open at `fd` (`path` names it in messages only)."""
    path = Path(path)
    return _text(_bounded(lambda: read_descriptor_bounded(fd, MAX_DATA_FILE_BYTES), path), path)


def _bounded(read: Callable[[], bytes], path: Path) -> bytes:
    """`read()`'s bytes; an OS error or a file over the limit is a DataError naming `path`."""
    try:
        return read()
    except OSError as exc:
        raise DataError(f"cannot read ({exc.strerror})", path=path) from exc
    except TooLarge as exc:
        raise DataError(str(exc), path=path) from None


def _text(data: bytes, path: Path) -> str:
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
    collected = _bad_lines.get()
    for lineno, line in enumerate(read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = _json_line(line, path, lineno)
        except DataError as exc:
            if collected is None:
                raise
            collected.append(exc)
            continue
        yield lineno, obj


def _json_line(line: str, path: Path, lineno: int) -> dict[str, Any]:
    if len(line) > MAX_JSONL_LINE_BYTES:  # characters: at least as many bytes
        raise DataError(f"a line over the limit of {MAX_JSONL_LINE_BYTES:,} bytes", path=path, line=lineno)
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DataError(f"not valid JSON ({exc.msg})", path=path, line=lineno) from exc
    except RecursionError as exc:
        raise DataError("JSON nested too deeply", path=path, line=lineno) from exc
    if not isinstance(obj, dict):
        raise DataError(f"expected a JSON object, got {type(obj).__name__}", path=path, line=lineno)
    return obj


def without_float_noise(value: Any, digits: int = 12) -> Any:
    """`value` with every float cut to `digits` significant digits, so printed JSON reads 0.44, not
    0.43999999999999995 (the binary rounding of a sum); containers are copied, other values kept."""
    if isinstance(value, float):
        return float(f"{value:.{digits}g}")
    if isinstance(value, dict):
        return {k: without_float_noise(v, digits) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [without_float_noise(v, digits) for v in value]
    return value
