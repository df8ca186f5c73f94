"""Every catalog graph in Studio: listed in langgraph.json, a JSON input schema, input checked at the edge."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.cli import app
from kinegraph.graphs import graphs
from kinegraph.media import write_video
from kinegraph.studio import graphs as studio
from kinegraph.studio.inputs import StudioInputError, read_samples
from tests.support.run_data import write_egodyn_world

ROOT = Path(__file__).resolve().parents[2]
NAMES = graphs.names()


def test_langgraph_json_lists_every_catalog_graph_and_nothing_else() -> None:
    listed = json.loads((ROOT / "langgraph.json").read_text())["graphs"]
    assert sorted(listed) == sorted(name.replace(".", "_") for name in NAMES)
    for name in NAMES:
        attribute = name.replace(".", "_")
        assert listed[attribute]["path"] == f"kinegraph.studio.graphs:{attribute}"
    # regenerate with: python -m kinegraph.studio.graphs > langgraph.json
    assert json.loads((ROOT / "langgraph.json").read_text()) == studio.langgraph_config()


@pytest.mark.parametrize("name", NAMES)
def test_every_graph_has_a_json_input_schema(name: str) -> None:
    graph = getattr(studio, name.replace(".", "_"))
    schema = graph.get_input_jsonschema()
    assert schema["required"] == ["samples"]
    sample = schema["$defs"][schema["properties"]["samples"]["items"]["$ref"].rsplit("/", 1)[-1]]
    assert sample["required"] == ["question"] and sample["additionalProperties"] is False
    assert set(graph.get_output_jsonschema()["properties"]) == {"predictions"}


@pytest.fixture(scope="module")
def model():
    with OpenAILoopback(responder=lambda body: "left") as server:
        yield server


def run(name: str, value: dict, configurable: dict | None = None) -> dict:
    graph = getattr(studio, name.replace(".", "_"))
    return asyncio.run(graph.ainvoke(value, config={"configurable": configurable or {}}))


@pytest.mark.parametrize("name", NAMES)
def test_every_graph_takes_a_minimal_input_and_refuses_a_bad_one(
    name: str, model: OpenAILoopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KINEGRAPH_MODEL", raising=False)
    configurable = {"model": "vllm:loopback-vlm", "base_url": model.base_url}
    if graphs.get(name).own_model_roles:
        configurable["roles"] = {role: "vllm:loopback-vlm" for role in graphs.get(name).own_model_roles}
    out = run(name, {"samples": [{"id": "q1", "question": "Which way?"}]}, configurable)
    [prediction] = out["predictions"]
    assert prediction["sample_id"] == "q1" and prediction["graph"] == name
    json.dumps(out)  # plain JSON all the way
    with pytest.raises(StudioInputError, match=r"^samples\.0\.question: Field required"):
        run(name, {"samples": [{"id": "q1", "qestion": "Which way?"}]}, configurable)


def test_a_model_graph_without_a_model_says_how_to_configure_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KINEGRAPH_MODEL", raising=False)
    with pytest.raises(studio.StudioConfigError, match=r"configurable `model` or \$KINEGRAPH_MODEL"):
        run("egodyn.vision", {"samples": [{"question": "Which way?"}]})


def test_the_model_comes_from_the_environment_when_the_run_names_none(
    model: OpenAILoopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KINEGRAPH_MODEL", "vllm:loopback-vlm")
    monkeypatch.setenv("KINEGRAPH_BASE_URL", model.base_url)
    [prediction] = run("egodyn.blind", {"samples": [{"question": "Which way?"}]})["predictions"]
    assert prediction["model"] == "vllm:loopback-vlm" and prediction["raw"] == "left"


def test_a_graph_role_without_a_model_is_refused_in_one_line(model: OpenAILoopback) -> None:
    configurable = {"model": "vllm:loopback-vlm", "base_url": model.base_url}
    with pytest.raises(studio.StudioConfigError, match="analyzer"):
        run("autodridm.explained", {"samples": [{"question": "Which way?"}]}, configurable)


def test_a_runs_options_reach_the_graph_built_once_per_distinct_options(model: OpenAILoopback) -> None:
    configurable = {"model": "vllm:loopback-vlm", "base_url": model.base_url}
    clip = {"samples": [{"id": "q1", "question": "Turning?"}, {"id": "q2", "question": "Braking?"}]}
    before = len(model.requests)
    run("egodyn.blind", clip, configurable)  # default options: one request per question
    assert len(model.requests) - before == 2
    before = len(model.requests)
    out = run("egodyn.blind", clip, {**configurable, "options": {"grouped": True}})  # the clip's in one
    assert len(model.requests) - before == 1 and [p["sample_id"] for p in out["predictions"]] == ["q1", "q2"]

    grouped = studio.compiled_graph("egodyn.vision", {"grouped": True, "num_frames": 4})
    assert studio.compiled_graph("egodyn.vision", {"num_frames": 4, "grouped": True}) is grouped
    assert studio.compiled_graph("egodyn.vision", {}) is not grouped


def test_a_bad_option_fails_the_run_with_the_line_the_cli_gives(
    model: OpenAILoopback, tmp_path: Path
) -> None:
    configurable = {"model": "vllm:loopback-vlm", "base_url": model.base_url}
    data = write_egodyn_world(tmp_path / "data", n_clips=1)
    cases = {
        "bogus=1": ({"bogus": 1}, "graph egodyn.blind has no option 'bogus' (options: grouped)"),
        'grouped="yes"': ({"grouped": "yes"}, "graph egodyn.blind option grouped: expected bool, got 'yes'"),
    }
    for cli_option, (options, line) in cases.items():
        with pytest.raises(studio.StudioConfigError) as caught:
            run("egodyn.blind", {"samples": [{"question": "q"}]}, {**configurable, "options": options})
        assert str(caught.value) == line
        argv = [
            "run",
            "egodyn",
            "--graph",
            "egodyn.blind",
            "--model",
            "vllm:loopback-vlm",
            "--data",
            str(data),
        ]
        cli = CliRunner().invoke(app, [*argv, "--out", str(tmp_path / "out"), "-O", cli_option])
        assert cli.exit_code == 2 and cli.stderr == f"error: {line}\n"
    with pytest.raises(studio.StudioConfigError, match=r"^configurable options: expected an object"):
        run("egodyn.blind", {"samples": [{"question": "q"}]}, {**configurable, "options": ["grouped"]})


def test_files_are_read_only_under_the_media_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "media"
    root.mkdir()
    write_video(root / "clip.mp4", np.zeros((3, 8, 8, 3), np.uint8), fps=2.0)
    (tmp_path / "secret.npz").write_bytes(b"")
    (root / "link.npz").symlink_to(tmp_path / "secret.npz")
    monkeypatch.setenv("KINEGRAPH_MEDIA_ROOT", str(root))
    [sample] = read_samples("egodyn", {"samples": [{"question": "q"}], "media": {"video_path": "clip.mp4"}})
    assert sample.media.kind == "video" and sample.media.video_path == str((root / "clip.mp4").resolve())
    refused = {
        "media.video_path: path escapes $KINEGRAPH_MEDIA_ROOT": {
            "samples": [{"question": "q"}],
            "media": {"video_path": "../secret.npz"},
        },
        "samples.0.context.arrays_path: path escapes $KINEGRAPH_MEDIA_ROOT": {
            "samples": [{"question": "q", "context": {"arrays_path": "link.npz"}}]
        },
        "media.frame_paths.0: must be a relative path under $KINEGRAPH_MEDIA_ROOT": {
            "samples": [{"question": "q"}],
            "media": {"frame_paths": [str(root / "clip.mp4")]},
        },
        "media.video_path: no such file under $KINEGRAPH_MEDIA_ROOT: 'other.mp4'": {
            "samples": [{"question": "q"}],
            "media": {"video_path": "other.mp4"},
        },
        "samples.0.context.speed: Extra inputs are not permitted": {
            "samples": [{"question": "q", "context": {"speed": 3}}]
        },
        "samples: give at least one question": {"samples": []},
    }
    for message, value in refused.items():
        with pytest.raises(StudioInputError) as caught:
            read_samples("egodyn", value)
        assert str(caught.value) == message
    monkeypatch.delenv("KINEGRAPH_MEDIA_ROOT")
    no_root = r"^media\.video_path: file references need \$KINEGRAPH_MEDIA_ROOT"
    with pytest.raises(StudioInputError, match=no_root):
        read_samples("egodyn", {"samples": [{"question": "q"}], "media": {"video_path": "clip.mp4"}})
