"""One confinement for every door: a bad file reference (a NUL byte, `..`, an absolute path, an over-long or
undecodable name, a link out of the root) gets the same one-line refusal from serve, MCP and Studio."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kinegraph.media_limits import InputRefused
from kinegraph.paths import resolve_under
from kinegraph.serve.errors import ServeError
from kinegraph.serve.inputs import Uploads, build_media
from kinegraph.serve.schemas import QARequest
from kinegraph.serve.settings import ServeSettings
from kinegraph.studio.inputs import StudioInputError, read_samples
from kinegraph.tool_registry import DataRootMedia, MediaLimits, ToolError

REFUSED = [
    ("clip\x00.png", "must be a relative path under ROOT"),
    ("../outside.png", "path escapes ROOT"),
    ("/etc/passwd", "must be a relative path under ROOT"),
    ("", "must be a relative path under ROOT"),
    ("a" * 256, "a path component is 256 bytes long; the limit is 255"),
    ("\udc80.png", "not valid UTF-8 text"),
    ("link.png", "path escapes ROOT"),
]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A data root holding a link to a file outside it."""
    (tmp_path / "outside.png").write_bytes(b"not inside")
    inside = tmp_path / "root"
    inside.mkdir()
    (inside / "link.png").symlink_to(tmp_path / "outside.png")
    return inside


@pytest.mark.parametrize(("reference", "words"), REFUSED, ids=repr)
def test_every_door_refuses_a_bad_reference_in_the_same_words(root: Path, reference: str, words: str) -> None:
    with pytest.raises(InputRefused) as direct:
        resolve_under(root, reference, "p")
    with pytest.raises(ServeError) as served:
        build_media(
            QARequest(question="q", frame_paths=[reference]), Uploads(), ServeSettings(data_root=root), root
        )
    with pytest.raises(ToolError) as tool:
        DataRootMedia(MediaLimits(root)).image(reference)
    with pytest.raises(StudioInputError) as studio:
        read_samples("dsi", {"samples": [{"question": "q"}], "media": {"frame_paths": [reference]}}, root)
    assert direct.value.message == "p: " + words.replace("ROOT", "the data root")
    assert served.value.message == "frame_paths[0]: " + words.replace("ROOT", "the data root")
    assert str(tool.value) == "image_path: " + words.replace("ROOT", "the data root")
    assert str(studio.value) == "media.frame_paths.0: " + words.replace("ROOT", "$KINEGRAPH_MEDIA_ROOT")


def test_a_folder_is_copied_with_its_regular_files_only(root: Path, tmp_path: Path) -> None:
    from kinegraph.paths import copy_under

    world = root / "world"
    (world / "sub").mkdir(parents=True)
    (world / "truth.json").write_text("{}")
    (world / "sub" / "deeper.json").write_text("{}")
    (world / "out.json").symlink_to(tmp_path / "outside.png")
    os.mkfifo(world / "pipe")
    copied = copy_under(root, "world", "source_dir", tmp_path / "private", folders=True)
    assert copied == tmp_path / "private" / "world"
    assert sorted(p.name for p in copied.iterdir()) == ["truth.json"]
    with pytest.raises(InputRefused, match="^source_dir: no such file under the data root$"):
        copy_under(root, "world", "source_dir", tmp_path / "private")  # a folder only where asked for


def test_a_files_identity_changes_with_the_file_not_its_name(root: Path) -> None:
    from kinegraph.paths import file_identity, open_under

    def identity() -> tuple[int, int, int, int]:
        fd = open_under(root, "table.json", "table")
        try:
            return file_identity(fd)
        finally:
            os.close(fd)

    (root / "table.json").write_text("[1]")
    first = identity()
    assert identity() == first
    (root / "table.json").write_text("[12]")
    assert identity() != first
