"""One way to write a report, an export or a run-directory file: to a temporary file beside it, flushed to
disk, then renamed over it. A kill at any point leaves the previous file or the new one, never a torn one;
a write that fails (a full disk, `--out` naming a directory) removes its temporary file and raises
`OutputError`, one line naming the file."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from pathlib import Path


class OutputError(OSError):
    """An output file that cannot be written: `str()` is `PATH: cannot write (why)`. An OSError, so code
    that handles a failed write (a run directory on a full disk) handles this one the same way."""

    def __init__(self, path: Path, why: str, code: int | None = None) -> None:
        super().__init__(code, f"cannot write ({why})")
        self.filename = str(path)

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def write_atomic(path: str | Path, data: str | bytes) -> Path:
    """Write `data` (text is UTF-8) to `path` atomically; its parent directories are made."""
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if path.is_dir():
        raise OutputError(path, "it is a directory; name a file", errno.EISDIR)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666
        )  # the umask applies, as to a plain write
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        why = "it is a directory; name a file" if exc.errno == errno.EISDIR else exc.strerror or str(exc)
        raise OutputError(path, why, exc.errno) from exc
    return path
