"""Private copies of files opened by descriptor."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kinegraph.paths import private_copy, private_directory

SHM = Path("/dev/shm")


def opened(path: Path) -> int:
    return os.open(path, os.O_RDONLY | os.O_CLOEXEC)


def test_the_copy_is_of_the_opened_file_whatever_its_name_became(tmp_path: Path) -> None:
    source = tmp_path / "data" / "clip.bin"
    source.parent.mkdir()
    source.write_bytes(b"frames" * 1000)
    fd = opened(source)
    try:
        source.rename(tmp_path / "data" / "moved.bin")  # the name is gone; the descriptor still holds it
        source.write_bytes(b"another file under the old name")
        copy = private_copy(fd, tmp_path / "private" / "clip.bin")
    finally:
        os.close(fd)
    assert copy.read_bytes() == b"frames" * 1000
    assert (tmp_path / "private").stat().st_mode & 0o077 == 0


@pytest.mark.skipif(
    not SHM.is_dir() or not os.access(SHM, os.W_OK), reason="needs a second file system (/dev/shm)"
)
def test_a_file_on_another_file_system_is_copied_from_its_descriptor(tmp_path: Path) -> None:
    source = tmp_path / "clip.bin"
    data = os.urandom(3 * (1 << 20) + 17)
    source.write_bytes(data)
    if os.stat(SHM).st_dev == source.stat().st_dev:
        pytest.skip("/dev/shm is on the same file system here")
    fd = opened(source)
    try:
        with private_directory(dir=SHM) as private:
            copy = private_copy(fd, private / "nested" / "clip.bin")
            assert copy.read_bytes() == data
            assert copy.stat().st_ino != source.stat().st_ino
        assert not private.exists()
    finally:
        os.close(fd)


def test_a_name_made_earlier_in_the_same_directory_is_kept(tmp_path: Path) -> None:
    (tmp_path / "a.bin").write_bytes(b"first")
    (tmp_path / "b.bin").write_bytes(b"second")
    first, second = opened(tmp_path / "a.bin"), opened(tmp_path / "b.bin")
    try:
        made = private_copy(first, tmp_path / "private" / "x.bin")
        assert private_copy(second, tmp_path / "private" / "x.bin") == made
    finally:
        os.close(first)
        os.close(second)
    assert made.read_bytes() == b"first"
