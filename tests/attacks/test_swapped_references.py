"""Who may call, through the file system, for the files a request names besides its media: a nuScenes
scene's tables and a graph's `weights` option through a real server, and a Studio input's `source_dir`
folder. A directory under the root swapped for a symlink to outside it must be refused, never read, and
a cache must never answer for a file other than the one opened. The files and the swaps are real."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from kinegraph.benchmarks.tad.world import write_tad_world
from tests.support.serving import AUTH, running

WHERE = "Where do these tables come from?"
TABLES = Path("nuscenes") / "v1.0-trainval"

# A served user graph of the TAD family: it answers with the height (z) of the first ego pose the server
# read from the scene's tables, and, for `weights`, with the text of the file its option names when built.
GRAPH = """
from pathlib import Path

from langgraph.graph import END, START, StateGraph

from kinegraph.graphs.nodes import prediction
from kinegraph.graphs.state import GraphContext, GroupState


def build():
    def height(state: GroupState) -> dict:
        z = state["samples"][0].context["ego_poses"]["translation_m"][0][2]
        return {"results": [prediction(s, raw=f"{z:g}", answer=f"{z:g}") for s in state["samples"]]}

    graph = StateGraph(GroupState, context_schema=GraphContext)
    graph.add_node("height", height)
    graph.add_edge(START, "height")
    graph.add_edge("height", END)
    return graph.compile()


build.needs_model = False
build.family = "tad"


def build_weighted(weights: str = "none"):
    text = Path(weights).read_text() if weights != "none" else "none"  # read when built, as RAFT's are

    def answer(state: GroupState) -> dict:
        return {"results": [prediction(s, raw=text, answer=text) for s in state["samples"]]}

    graph = StateGraph(GroupState, context_schema=GraphContext)
    graph.add_node("answer", answer)
    graph.add_edge(START, "answer")
    graph.add_edge("answer", END)
    return graph.compile()


build_weighted.needs_model = False
"""


@pytest.fixture
def graph_module(tmp_path: Path) -> Iterator[None]:
    (tmp_path / "table_graph.py").write_text(GRAPH)
    sys.path.insert(0, str(tmp_path))
    try:
        yield
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("table_graph", None)


def set_heights(tables: Path, z: float) -> None:
    """Every ego pose of the tables in `tables` at height `z` (the marker the graph answers with)."""
    poses = json.loads((tables / "ego_pose.json").read_text())
    for pose in poses:
        pose["translation"][2] = z
    (tables / "ego_pose.json").write_text(json.dumps(poses))


@pytest.fixture
def scene_root(tmp_path: Path, graph_module: None) -> tuple[Path, str]:
    """A one-scene nuScenes world under data/ (poses at z = 0), and a copy of its tables outside the
    root, outside/v1.0-trainval, whose poses are at z = 9; the scene's token."""
    root = tmp_path / "data"
    write_tad_world(root, n_scenes=1, seed=0)
    shutil.copytree(root / TABLES, tmp_path / "outside" / TABLES.name)
    set_heights(tmp_path / "outside" / TABLES.name, 9.0)
    (scene,) = json.loads((root / TABLES / "scene.json").read_text())
    return root, scene["token"]


def swap_tables(root: Path) -> None:
    """The root's table folder swapped for a link to the outside tables (the folder kept aside)."""
    os.rename(root / TABLES, root / f"{TABLES}.held")
    os.symlink(root.parent / "outside" / TABLES.name, root / TABLES)


def unswap_tables(root: Path) -> None:
    if (root / f"{TABLES}.held").exists():
        (root / TABLES).unlink()
        os.rename(root / f"{TABLES}.held", root / TABLES)


def ask(server, body: dict) -> httpx.Response:
    return httpx.post(server.url + "/v1/qa", headers=AUTH, json=body, timeout=60)


def test_nuscenes_tables_swapped_for_a_link_outside_are_refused(scene_root: tuple[Path, str]) -> None:
    root, scene = scene_root
    body = {"question": WHERE, "options": ["0", "9"], "nuscenes_scene": scene}
    with running(None, data_root=root, graphs=("table_graph:build",), default_graph="table_graph:build",
                 max_frames=64) as server:  # fmt: skip
        swap_tables(root)
        try:
            swapped = ask(server, body)
        finally:
            unswap_tables(root)
        inside = ask(server, body)
    assert swapped.status_code == 403, swapped.text  # not the outside tables' poses (z = 9)
    assert swapped.json()["error"]["message"] == "nuscenes_scene: path escapes the data root"
    assert inside.status_code == 200, inside.text
    assert inside.json()["answer"] == "0"


def test_the_tables_cache_answers_for_the_files_opened_not_their_names(scene_root: tuple[Path, str]) -> None:
    root, scene = scene_root
    body = {"question": WHERE, "options": ["0", "5", "9"], "nuscenes_scene": scene}
    with running(None, data_root=root, graphs=("table_graph:build",), default_graph="table_graph:build",
                 max_frames=64) as server:  # fmt: skip
        first = ask(server, body)
        set_heights(root / TABLES, 5.0)  # the same names, other files
        changed = ask(server, body)
        swap_tables(root)
        try:
            swapped = ask(server, body)  # tables read before under this name are no answer either
        finally:
            unswap_tables(root)
    assert [r.status_code for r in (first, changed, swapped)] == [200, 200, 403], swapped.text
    assert (first.json()["answer"], changed.json()["answer"]) == ("0", "5")
