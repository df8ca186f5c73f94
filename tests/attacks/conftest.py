"""Fixtures of the attack suite: a data root with a clip, and a loopback VLM that answers from the prompt."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.media import write_image, write_video
from tests.support.text_reader_model import text_reader


@pytest.fixture(scope="session")
def attack_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """clip/frame_0..4.png and clip.mp4 inside the root; secret.txt beside it, outside."""
    base = tmp_path_factory.mktemp("attack")
    root = base / "data"
    for i in range(5):
        write_image(root / "clip" / f"frame_{i}.png", np.full((24, 32, 3), 40 * i, np.uint8))
    write_video(root / "clip.mp4", np.zeros((12, 24, 32, 3), np.uint8), fps=4.0)
    (base / "secret.txt").write_text("outside the root")
    return root


@pytest.fixture(scope="session")
def attack_model() -> Iterator[OpenAILoopback]:
    """A loopback VLM that answers from the prompt text only."""
    with OpenAILoopback(responder=text_reader) as server:
        yield server
