"""Private copies of files opened by descriptor, so that decoders never reopen a name someone can swap.

A door opens a referenced file once, by descriptor, under its data root (`kinegraph.confined`). Decoders
(OpenCV, Pillow, numpy) take paths, so the descriptor's file is given a private name: a hard link made
from the descriptor where the file system allows it (no bytes copied), else a copy of its bytes. The
private name lives in a directory only this process writes (`tempfile` makes it mode 0700), so what is
decoded is the file that was opened, whatever happens to the data root's directories afterwards.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

_LINK_REFUSED = (errno.EXDEV, errno.EPERM, errno.EACCES, errno.EMLINK, errno.ENOENT, errno.EOPNOTSUPP)
_CHUNK_BYTES = 1 << 24


def private_name(fd: int, dest: Path) -> Path:
    """`dest`, a new name in a private directory for the regular file open at `fd` (linked from the
    descriptor, else copied from it). A `dest` this request already made is kept as it is."""
    dest.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if dest.exists():
        return dest
    try:
        os.link(f"/proc/self/fd/{fd}", dest, follow_symlinks=True)  # linkat(AT_SYMLINK_FOLLOW) on the fd
        return dest
    except OSError as exc:
        if exc.errno not in _LINK_REFUSED:
            raise
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
def private_directory(prefix: str = "kinegraph-media-") -> Iterator[Path]:
    """A directory for one call's private names, removed with everything in it on exit."""
    with tempfile.TemporaryDirectory(prefix=prefix, ignore_cleanup_errors=True) as name:
        yield Path(name)
