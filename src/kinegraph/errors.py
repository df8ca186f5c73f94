"""Errors for bad input: every message names the file, the line or row, and the field."""

from __future__ import annotations

from pathlib import Path


class DataError(ValueError):
    """Bad input data. `str()` is one line: `FILE:LINE: field 'X': what is wrong`."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        self.message = message
        super().__init__(self._format())

    def _format(self) -> str:
        where = self.path or "<input>"
        if self.line is not None:
            where += f":{self.line}"
        what = f"field {self.field!r}: " if self.field else ""
        return f"{where}: {what}{self.message}"


class UsageError(ValueError):
    """A bad command-line value (e.g. `--thresholds bogus`); `str()` is the one-line message."""
