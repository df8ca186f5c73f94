"""File references confined to a root: the one implementation `serve`, MCP and Studio resolve paths with.

A reference is a relative path; `..`, absolute paths and symlinks that lead outside the root are refused.
The path is resolved, then walked again component by component from a descriptor of the root with
`O_NOFOLLOW`, so a directory swapped for a symlink between the check and the open is refused instead of
followed. `copy_under` makes a private copy of the file (or the folder's files) opened that way for
decoders and graphs to read: nothing is reopened by a name under the root, so a swap after the open
changes nothing either; `open_under` hands out the descriptor itself (`file_identity` names its file for
a cache). `resolve_under` (a path) only checks a reference, for a caller that reads nothing by it.

Decoders (OpenCV, Pillow, numpy) take paths, so the descriptor's bytes are copied to a private name (in
the kernel, `sendfile`) in a directory only this process writes (`private_directory`: `tempfile` makes it
mode 0700): what is decoded is the file that was opened, whatever happens to the root's directories
afterwards. (A hard link made from `/proc/self/fd/N` would save the copy, but `linkat` refuses it across
mounts, and the temporary folder is usually on another one.)
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from kinegraph.media_limits import InputRefused, invalid

NAME_MAX_BYTES = 255  # longest file name Linux file systems allow (NAME_MAX)
PATH_MAX_BYTES = 4096  # longest path Linux system calls take, its final NUL included (PATH_MAX)
_NOFOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK  # a FIFO must not block the open
_CHUNK_BYTES = 1 << 24


def forbidden(message: str) -> InputRefused:
    return InputRefused(403, message, "forbidden")


def resolve_under(
    root: Path | None, reference: str, where: str, *, root_name: str = "the data root", regular: bool = True
) -> Path:
    """`reference` (relative to `root`) as an existing file (any path when not `regular`) inside `root`,
    symlinks resolved and the result reached again by descriptor."""
    fd, relative = _open_beneath(root, reference, where, root_name, regular)
    os.close(fd)
    return Path(root).resolve() / relative  # type: ignore[arg-type]


def open_under(root: Path | None, reference: str, where: str, *, root_name: str = "the data root") -> int:
    """A read-only descriptor of the regular file `reference` names inside `root` (the caller closes it)."""
    return _open_beneath(root, reference, where, root_name, True)[0]


def file_identity(fd: int) -> tuple[int, int, int, int]:
    """What names the file open at `fd` for a cache: (device, inode, modification time in ns, size). A
    name under the root can lead to another file by the next lookup; this cannot."""
    info = os.fstat(fd)
    return info.st_dev, info.st_ino, info.st_mtime_ns, info.st_size


def copy_under(
    root: Path | None,
    reference: str,
    where: str,
    private: Path,
    *,
    root_name: str = "the data root",
    folders: bool = False,
) -> Path:
    """The regular file `reference` names inside `root`, opened by descriptor and copied into the
    private directory `private` at its path relative to the root (`private/clip/frame_0.png`). With
    `folders`, a folder too: opened the same way, its regular files (not its subfolders, never a link)
    are each opened from its descriptor and copied (`private/world/truth.json`)."""
    fd, relative = _open_beneath(root, reference, where, root_name, not folders)
    try:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            return _copy_folder(fd, private / relative)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputRefused(404, f"{where}: no such file or folder under {root_name}", "not_found")
        return private_copy(fd, private / relative)
    except OSError as exc:
        raise invalid(f"{where}: cannot be read under {root_name} ({exc.strerror})") from None
    finally:
        os.close(fd)


def _copy_folder(fd: int, dest: Path) -> Path:
    """`dest`, a private directory holding a copy of each regular file directly in the folder open at
    `fd`; links (`O_NOFOLLOW`), subfolders, FIFOs and devices are left out."""
    dest.mkdir(mode=0o700, parents=True, exist_ok=True)
    for name in sorted(os.listdir(fd)):
        try:
            child = os.open(name, _NOFOLLOW, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOENT):  # a link, or gone since the listing
                continue
            raise
        try:
            if stat.S_ISREG(os.fstat(child).st_mode):
                private_copy(child, dest / name)
        finally:
            os.close(child)
    return dest


def _open_beneath(
    root: Path | None, reference: str, where: str, root_name: str, regular: bool
) -> tuple[int, Path]:
    """The open descriptor of `reference` and its resolved path relative to the root."""
    if root is None:
        raise InputRefused(400, f"{where}: file references are disabled (no {root_name} is set)")
    if not reference or "\x00" in reference or Path(reference).is_absolute():
        raise forbidden(f"{where}: must be a relative path under {root_name}")
    try:
        longest = max((len(part.encode()) for part in Path(reference).parts), default=0)
    except UnicodeEncodeError:
        raise invalid(f"{where}: not valid UTF-8 text") from None
    if longest > NAME_MAX_BYTES:
        raise invalid(f"{where}: a path component is {longest} bytes long; the limit is {NAME_MAX_BYTES}")
    base = Path(root).resolve()
    try:
        path = (base / reference).resolve()
    except (OSError, RuntimeError):
        raise forbidden(f"{where}: cannot be resolved under {root_name}") from None
    if not path.is_relative_to(base):
        raise forbidden(f"{where}: path escapes {root_name}")
    if len(str(path).encode()) >= PATH_MAX_BYTES:
        raise invalid(f"{where}: cannot be read under {root_name} ({os.strerror(errno.ENAMETOOLONG)})")
    relative = path.relative_to(base)
    fd = _walk(base, relative.parts, where, root_name)
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        os.close(fd)
        raise
    if regular and not stat.S_ISREG(mode):
        os.close(fd)
        raise InputRefused(404, f"{where}: no such file under {root_name}", "not_found")
    return fd, relative


def _walk(base: Path, parts: tuple[str, ...], where: str, root_name: str) -> int:
    """The descriptor of base/parts..., each component opened from its parent's descriptor, never a link."""
    try:
        fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise invalid(f"{where}: cannot be read under {root_name} ({exc.strerror})") from None
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        try:
            child = os.open(part, _NOFOLLOW | (0 if last else os.O_DIRECTORY), dir_fd=fd)
        except FileNotFoundError:
            raise InputRefused(404, f"{where}: no such file under {root_name}", "not_found") from None
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # became a link or a file since resolving
                raise forbidden(f"{where}: a path component changed while it was opened") from None
            raise invalid(f"{where}: cannot be read under {root_name} ({exc.strerror})") from None
        finally:
            os.close(fd)
        fd = child
    return fd


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
