"""Real servers for the serve tests: uvicorn on 127.0.0.1 in front of a loopback OpenAI-compatible model."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.media import write_image, write_video
from kinegraph.serve import BackgroundServer
from tests.support.serving import RAISING_GRAPH, png_bytes, running
from tests.support.text_reader_model import text_reader


@pytest.fixture(scope="session")
def data_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """clip/frame_0..4.png and clip.mp4 inside the root; a secret outside it, and a link pointing there."""
    base = tmp_path_factory.mktemp("serve")
    root = base / "data"
    for i in range(5):
        write_image(root / "clip" / f"frame_{i}.png", np.full((24, 32, 3), 40 * i, np.uint8))
    write_video(root / "clip.mp4", np.zeros((12, 24, 32, 3), np.uint8), fps=4.0)
    (root / "notes.txt").write_text("not an image")
    (base / "secret.png").write_bytes(png_bytes())
    os.symlink(base / "secret.png", root / "escape.png")
    return root


@pytest.fixture(scope="session")
def graph_modules(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A directory on sys.path with a VLM-free graph (first option) and a graph that raises."""
    import sys

    from tests.support.run_data import write_graph_module

    directory = tmp_path_factory.mktemp("graphs")
    write_graph_module(directory, "first_option_graph")
    (directory / "raising_graph.py").write_text(RAISING_GRAPH)
    sys.path.insert(0, str(directory))
    yield directory
    sys.path.remove(str(directory))


@pytest.fixture(scope="session")
def text_model() -> Iterator[OpenAILoopback]:
    """A loopback VLM that answers from the prompt text only."""
    with OpenAILoopback(responder=text_reader) as server:
        yield server


@pytest.fixture(scope="module")
def server(text_model: OpenAILoopback, data_root: Path, graph_modules: Path) -> Iterator[BackgroundServer]:
    """The main server: every registered graph plus two user graphs, small limits for the tests."""
    graphs = ("egodyn.vision", "egodyn.trajectory", "egodyn.text_only", "first_option_graph:build")
    with running(
        text_model,
        data_root=data_root,
        graphs=(*graphs, "raising_graph:build"),
        max_body_bytes=2**20,
        max_image_pixels=640 * 480,
        max_frames=8,
        max_video_frames=100,
    ) as srv:
        yield srv
