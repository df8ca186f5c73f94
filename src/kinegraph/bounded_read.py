"""Reading a file the user named, with bounds: only a regular file is opened for reading (a FIFO would
block forever, `/dev/zero` never ends), and never more than a given number of bytes is read."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
         stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a directory"}  # fmt: skip


class NotRegularFile(OSError):
    """The path names a FIFO, a device, a socket or a directory; `strerror` says which."""


class TooLarge(ValueError):
    """A file longer than the bound it is read with."""


def open_regular(path: str | Path, dir_fd: int | None = None) -> BinaryIO:
    """`path` opened for binary reading, refused (NotRegularFile) unless it is a regular file.

    Opened non-blocking, so a FIFO without a writer does not hang the open; checked on the descriptor, so
    what is read is what was checked.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = KINDS.get(stat.S_IFMT(mode), "not a regular file")
            raise NotRegularFile(0, f"{kind}, not a regular file", str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bounded(path: str | Path, max_bytes: int) -> bytes:
    """The bytes of the regular file `path`; TooLarge when it holds more than `max_bytes`."""
    with open_regular(path) as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise TooLarge(f"larger than the limit of {max_bytes:,} bytes")
    return data


def read_descriptor_bounded(fd: int, max_bytes: int) -> bytes:
    """The bytes of the regular file open at `fd`, from offset 0 (its position untouched); TooLarge when
    it holds more than `max_bytes`."""
    chunks, size = [], 0
    while size <= max_bytes:
        chunk = os.pread(fd, min(1 << 24, max_bytes + 1 - size), size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > max_bytes:
        raise TooLarge(f"larger than the limit of {max_bytes:,} bytes")
    return b"".join(chunks)
