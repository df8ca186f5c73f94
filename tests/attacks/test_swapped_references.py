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
import os
from pathlib import Path

from langgraph.graph import END, START, StateGraph

from kinegraph.graphs.nodes import prediction
from kinegraph.graphs.state import GraphContext, GroupState


def one_node(name, node):
    graph = StateGraph(GroupState, context_schema=GraphContext)
    graph.add_node(name, node)
    graph.add_edge(START, name)
    graph.add_edge(name, END)
    return graph.compile()


def build():
    def height(state: GroupState) -> dict:
        z = state["samples"][0].context["ego_poses"]["translation_m"][0][2]
        return {"results": [prediction(s, raw=f"{z:g}", answer=f"{z:g}") for s in state["samples"]]}

    return one_node("height", height)


build.needs_model = False
build.family = "tad"


def build_weighted(weights: str = "none"):
    if os.environ.get("SWAP_ROOT"):  # the attacker, between the server's check and the builder's read
        root = Path(os.environ["SWAP_ROOT"])
        os.rename(root / "w", root / "w.held")
        os.symlink(root.parent / "outside" / "w", root / "w")
    text = Path(weights).read_text() if weights != "none" else "none"  # read when built, as RAFT's are

    def answer(state: GroupState) -> dict:
        return {"results": [prediction(s, raw=text, answer=text) for s in state["samples"]]}

    return one_node("answer", answer)


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


@pytest.fixture
def weights_root(tmp_path: Path, graph_module: None) -> Path:
    """data/w/weights.txt ("inside") in the root, outside/w/weights.txt ("outside") beside it."""
    for where in ("data", "outside"):
        (tmp_path / where / "w").mkdir(parents=True)
        (tmp_path / where / "w" / "weights.txt").write_text(where if where == "outside" else "inside")
    return tmp_path / "data"


def unswap_weights(root: Path) -> None:
    if (root / "w.held").exists():
        (root / "w").unlink()
        os.rename(root / "w.held", root / "w")


WEIGHTED = {"question": WHERE, "graph_options": {"weights": "w/weights.txt"}}


def test_a_weights_folder_swapped_while_the_graph_is_built_is_not_followed(
    weights_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = "table_graph:build_weighted"
    with running(None, data_root=weights_root, graphs=(graph,), default_graph=graph) as server:
        monkeypatch.setenv("SWAP_ROOT", str(weights_root))
        try:
            response = ask(server, WEIGHTED)
        finally:
            monkeypatch.delenv("SWAP_ROOT")
            unswap_weights(weights_root)
    assert response.status_code == 200, response.text
    assert response.json()["answer"] == "inside"  # the file that was opened, not the outside one


def test_compiled_graphs_are_kept_by_the_weights_file_opened_not_its_name(weights_root: Path) -> None:
    graph = "table_graph:build_weighted"
    with running(None, data_root=weights_root, graphs=(graph,), default_graph=graph) as server:
        first = ask(server, WEIGHTED)
        (weights_root / "w" / "weights.txt").write_text("changed")  # the same name, another file
        changed = ask(server, WEIGHTED)
        os.rename(weights_root / "w", weights_root / "w.held")
        os.symlink(weights_root.parent / "outside" / "w", weights_root / "w")
        try:
            swapped = ask(server, WEIGHTED)  # a graph built before under this name is no answer either
        finally:
            unswap_weights(weights_root)
    assert [r.status_code for r in (first, changed, swapped)] == [200, 200, 403], swapped.text
    assert (first.json()["answer"], changed.json()["answer"]) == ("inside", "changed")
    assert swapped.json()["error"]["message"] == "graph_options.weights: path escapes the data root"


def test_studio_reads_a_source_dir_from_the_folder_it_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kinegraph.graphs import graph_spec
    from kinegraph.graphs.quantiphy.tools import TRUTH_FILE
    from kinegraph.studio.graphs import studio_samples
    from kinegraph.studio.inputs import MEDIA_ROOT_ENV

    root, outside = tmp_path / "data", tmp_path / "outside"
    for folder, text in (
        (root / "world", '{"truth": "inside"}'),
        (outside / "world", '{"truth": "outside"}'),
    ):
        folder.mkdir(parents=True)
        (folder / TRUTH_FILE).write_text(text)
    (outside / "secret.json").write_text('{"truth": "secret"}')
    os.symlink(outside / "secret.json", root / "world" / "secret.json")  # a link in the folder, to outside
    monkeypatch.setenv(MEDIA_ROOT_ENV, str(root))
    given = {"samples": [{"question": "How fast is the ball?", "context": {"source_dir": "world"}}]}
    private = tmp_path / "private"
    (sample,) = studio_samples(graph_spec("quantiphy.oracle_tracks"), given, private)
    os.rename(root / "world", root / "world.held")  # then the folder is swapped for a link to outside
    os.symlink(outside / "world", root / "world")
    source = Path(sample.context["source_dir"])
    assert json.loads((source / TRUTH_FILE).read_text()) == {"truth": "inside"}  # the graph's read
    assert source.is_relative_to(private)
    assert not (source / "secret.json").exists()  # a link is not followed out of the folder


def test_studio_refuses_a_source_dir_that_became_a_link_outside(tmp_path: Path) -> None:
    from kinegraph.studio.inputs import StudioInputError, read_samples

    root, outside = tmp_path / "data", tmp_path / "outside"
    root.mkdir()
    (outside / "world").mkdir(parents=True)
    os.symlink(outside / "world", root / "world")
    given = {"samples": [{"question": "How fast is the ball?", "context": {"source_dir": "world"}}]}
    with pytest.raises(StudioInputError, match=r"^samples\.0\.context\.source_dir: path escapes "):
        read_samples("quantiphy", given, root, tmp_path / "private")
