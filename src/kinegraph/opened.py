"""Private copies of files opened by descriptor, so that decoders never reopen a name someone can swap.

A door opens a referenced file once, by descriptor, under its data root (`kinegraph.confined`). Decoders
(OpenCV, Pillow, numpy) take paths, so the descriptor's bytes are copied to a private name (in the
kernel, `sendfile`) in a directory only this process writes (`tempfile` makes it mode 0700): what is
decoded is the file that was opened, whatever happens to the data root's directories afterwards. (A hard
link made from `/proc/self/fd/N` would save the copy, but `linkat` refuses it across mounts, and the
temporary folder is usually on another one.)
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

_CHUNK_BYTES = 1 << 24


def private_copy(fd: int, dest: Path) -> Path:
    """`dest`, a new name in a private directory holding a copy of the regular file open at `fd`. A `dest`
    this request already made is kept as it is."""
    dest.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if dest.exists():
        return dest
    out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        _copy(fd, out)
    finally:
        os.close(out)
    return dest


def _copy(src: int, dst: int) -> None:
    """Every byte of `src` from offset 0 into `dst`, in the kernel where it can (sendfile)."""
    offset = 0
    try:
        while sent := os.sendfile(dst, src, offset, _CHUNK_BYTES):
            offset += sent
        return
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP) or offset:
            raise
    while chunk := os.pread(src, _CHUNK_BYTES, offset):
        offset += len(chunk)
        view = memoryview(chunk)
        while view:
            view = view[os.write(dst, view) :]


@contextlib.contextmanager
def private_directory(prefix: str = "kinegraph-media-", dir: Path | None = None) -> Iterator[Path]:
    """A directory (under `dir`, else the system's temporary folder) for one call's private names, removed
    with everything in it on exit."""
    with tempfile.TemporaryDirectory(prefix=prefix, dir=dir, ignore_cleanup_errors=True) as name:
        yield Path(name)
