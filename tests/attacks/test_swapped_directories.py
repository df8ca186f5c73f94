"""Who may call, through the file system: a directory under the data root swapped for a symlink to
outside it, after the reference was checked and before its media is decoded, must not make a door decode
the outside file. Inside frames are dark and outside frames bright, so what was decoded is visible in
the answer; the swaps are real renames and symlinks."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest

from kinegraph.graphs import graph_spec
from kinegraph.media import load_frames, write_image, write_video
from kinegraph.studio.inputs import MEDIA_ROOT_ENV, StudioInputError, read_samples
from kinegraph.tool_registry.media import DataRootMedia, MediaLimits, ToolError
from tests.support.serving import AUTH, running

DARK, BRIGHT = 10, 245
WHERE = "Where do these frames come from?"
FRAMES = [f"clip/frame_{i}.png" for i in range(3)]

# A served user graph that answers "inside" or "outside" from the brightness of the frames it decoded.
# With SWAP_ROOT set, its first node swaps the data root's clip/ for a link to the outside clip/ (the
# attacker acting between the server's check and the graph's decoding).
GRAPH = """
import os
from pathlib import Path

from langgraph.graph import END, START, StateGraph

from kinegraph.graphs.nodes import decode_frames, prediction, record_group_error, route_on_error
from kinegraph.graphs.state import GraphContext, GroupState


def swap(state: GroupState) -> dict:
    if os.environ.get("SWAP_ROOT"):
        root, outside = Path(os.environ["SWAP_ROOT"]), Path(os.environ["SWAP_OUTSIDE"])
        os.rename(root / "clip", root / "clip.held")
        os.symlink(outside / "clip", root / "clip")
    return {}


def brightness(state: GroupState) -> dict:
    where = "outside" if float(state["frames"].mean()) > 128 else "inside"
    return {"results": [prediction(s, raw=where, answer=where) for s in state["samples"]]}


def build():
    graph = StateGraph(GroupState, context_schema=GraphContext)
    graph.add_node("swap", swap)
    graph.add_node("decode_frames", decode_frames(3))
    graph.add_node("brightness", brightness)
    graph.add_node("record_group_error", record_group_error)
    graph.add_edge(START, "swap")
    graph.add_edge("swap", "decode_frames")
    targets = ["brightness", "record_group_error"]
    graph.add_conditional_edges("decode_frames", route_on_error("brightness"), targets)
    graph.add_edge("brightness", END)
    graph.add_edge("record_group_error", END)
    return graph.compile()


build.needs_model = False


def build_keyframes():
    return build()


build_keyframes.needs_model = False
build_keyframes.family = "tad"  # a keyframe benchmark: the server samples a video's keyframes first
"""


def write_clip(folder: Path, value: int) -> None:
    for name in FRAMES:
        write_image(folder / name, np.full((24, 32, 3), value, np.uint8))
    write_video(folder / "clip" / "clip.mp4", np.full((6, 24, 32, 3), value, np.uint8), fps=4.0)


@pytest.fixture
def swap_root(tmp_path: Path) -> Iterator[Path]:
    """data/clip/ (dark) inside the root, outside/clip/ (bright) beside it, and the swapping graph on
    sys.path."""
    write_clip(tmp_path / "data", DARK)
    write_clip(tmp_path / "outside", BRIGHT)
    (tmp_path / "swapping_graph.py").write_text(GRAPH)
    sys.path.insert(0, str(tmp_path))
    try:
        yield tmp_path / "data"
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("swapping_graph", None)


def unswap(root: Path) -> None:
    if (root / "clip.held").exists():
        with contextlib.suppress(FileNotFoundError):
            (root / "clip").unlink()
        os.rename(root / "clip.held", root / "clip")


@contextlib.contextmanager
def racing(root: Path) -> Iterator[list[int]]:
    """A thread swapping root/clip for a link to the outside clip/ and back, as fast as it can; yields a
    one-item list counting its swaps."""
    outside, swaps, stop = root.parent / "outside" / "clip", [0], threading.Event()

    def race() -> None:
        while not stop.is_set():
            os.rename(root / "clip", root / "clip.held")
            os.symlink(outside, root / "clip")
            time.sleep(0.0005)
            (root / "clip").unlink()
            os.rename(root / "clip.held", root / "clip")
            time.sleep(0.0005)
            swaps[0] += 1

    thread = threading.Thread(target=race, daemon=True)
    thread.start()
    try:
        yield swaps
    finally:
        stop.set()
        thread.join(10)


@pytest.mark.parametrize(
    "media", [{"frame_paths": FRAMES}, {"video_path": "clip/clip.mp4"}], ids=["frame_paths", "video_path"]
)
def test_a_directory_swapped_after_the_check_is_not_followed_by_serve(
    swap_root: Path, monkeypatch: pytest.MonkeyPatch, media: dict
) -> None:
    body = {"question": WHERE, "options": ["inside", "outside"], **media, "graph": "swapping_graph:build"}
    with running(
        None, data_root=swap_root, graphs=("swapping_graph:build",), default_graph="swapping_graph:build"
    ) as server:
        monkeypatch.setenv("SWAP_ROOT", str(swap_root))
        monkeypatch.setenv("SWAP_OUTSIDE", str(swap_root.parent / "outside"))
        try:
            response = httpx.post(server.url + "/v1/qa", headers=AUTH, json=body, timeout=60)
        finally:
            unswap(swap_root)
    assert (swap_root.parent / "data" / "clip").is_dir()
    assert response.status_code == 200, response.text
    assert response.json()["answer"] == "inside"  # the frames that were checked, not the outside ones
    source = response.json()["frames"]["source"]
    assert source is None or not source.startswith("/"), source  # no server path in the answer


@pytest.mark.parametrize(
    ("graph", "media"),
    [
        ("swapping_graph:build", {"frame_paths": FRAMES}),
        ("swapping_graph:build_keyframes", {"video_path": "clip/clip.mp4", "fps": 4.0}),
    ],
    ids=["frame_paths", "dashcam_video_keyframes"],
)
def test_requests_racing_a_swapping_thread_never_decode_outside_frames(
    swap_root: Path, graph: str, media: dict
) -> None:
    body = {"question": WHERE, "options": ["inside", "outside"], **media}
    answers: dict[str, int] = {}
    with running(None, data_root=swap_root, graphs=(graph,), default_graph=graph) as server:
        with racing(swap_root) as swaps:
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and "outside" not in answers and sum(answers.values()) < 400:
                response = httpx.post(server.url + "/v1/qa", headers=AUTH, json=body, timeout=60)
                key = response.json()["answer"] if response.status_code == 200 else str(response.status_code)
                answers[key] = answers.get(key, 0) + 1
    assert swaps[0] > 0
    assert "outside" not in answers, answers
    assert answers.get("inside", 0) > 0, answers  # the race refuses some requests, never all
    assert set(answers) <= {"inside", "403", "404"}, answers


def test_studio_decodes_the_files_it_opened(swap_root: Path) -> None:
    given = {"samples": [{"question": WHERE}], "media": {"frame_paths": FRAMES}}
    private = swap_root.parent / "private"
    (sample,) = read_samples(None, given, swap_root, private)
    os.rename(swap_root / "clip", swap_root / "clip.held")
    os.symlink(swap_root.parent / "outside" / "clip", swap_root / "clip")
    try:
        frames, _ = load_frames(sample.media)
    finally:
        unswap(swap_root)
    assert float(frames.mean()) < 128
    assert all(Path(p).is_relative_to(private) for p in sample.media.frame_paths)


def test_studio_samples_a_dashcam_videos_keyframes_from_the_file_it_opened(
    swap_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kinegraph.studio.graphs import studio_samples  # here: an older tree fails this case only

    monkeypatch.setenv(MEDIA_ROOT_ENV, str(swap_root))
    question = {"question": WHERE, "options": ["inside", "outside"]}
    given = {"samples": [question], "media": {"video_path": "clip/clip.mp4"}}
    private, made, refused = swap_root.parent / "private", [], []
    with racing(swap_root) as swaps:
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline and len(made) < 100:
            try:
                (sample,) = studio_samples(graph_spec("tad.baseline"), given, private / str(len(made)))
            except StudioInputError as exc:
                refused.append(str(exc))
                continue
            frames, _ = load_frames(sample.media)
            made.append((sample, float(frames.mean())))
            if made[-1][1] > 128:
                break
    assert swaps[0] > 0
    assert made, refused  # the race refuses some samplings, never all
    for i, (sample, brightness) in enumerate(made):
        assert sample.media.kind == "frames" and len(sample.media.frame_paths) >= 2
        assert all(Path(p).is_relative_to(private / str(i)) for p in sample.media.frame_paths)
        assert brightness < 128, f"sampling {i} decoded the outside video"


def test_mcp_tools_racing_a_swapping_thread_never_decode_outside_frames(swap_root: Path) -> None:
    media = DataRootMedia(MediaLimits(data_root=swap_root))
    seen: dict[str, int] = {}
    with racing(swap_root):
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline and sum(seen.values()) < 3000:
            for reference in (FRAMES[0], "clip/clip.mp4"):
                try:
                    pixels = media.image(reference).pixels if reference.endswith(".png") else None
                    pixels = media.clip(reference, 2).frames if pixels is None else pixels
                except ToolError as exc:
                    key = "refused: changed" if "changed" in str(exc) else f"refused: {exc}"
                else:
                    key = "outside" if float(pixels.mean()) > 128 else "inside"
                seen[key] = seen.get(key, 0) + 1
            if "outside" in seen:
                break
    assert "outside" not in seen, seen
    assert seen.get("inside", 0) > 0, seen
