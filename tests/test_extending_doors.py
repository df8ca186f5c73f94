"""docs/extending.md, run as written, through every door: the toy benchmark's card read by `list`,
`describe`, `data fetch|check`, a real server
and Studio; the provider and tool recipes registered and used."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

import httpx
import numpy as np
import pytest
from typer.testing import CliRunner

from kinegraph.agents.providers import providers
from kinegraph.cli import app
from kinegraph.media import write_video
from kinegraph.studio.inputs import StudioInputError
from kinegraph.tool_registry import DataRootMedia, MediaLimits, ToolError
from tests.support.hf_hub import HubRepo, LoopbackHub
from tests.support.serving import AUTH, running
from tests.test_extending import DOC, kinegraph
from tests.test_extending import toy as toy  # the doc's benchmark package, registered

RECIPE = re.compile(
    r"<!-- recipe (file: (?P<path>\S+)|register: (?P<kind>\w+)) -->\n```python\n(?P<code>.*?)```", re.S
)


def recipes() -> tuple[dict[str, str], dict[str, str]]:
    """The doc's recipe modules (path -> source) and registry lines (kind -> line)."""
    files, lines = {}, {}
    for match in RECIPE.finditer(DOC.read_text()):
        if match["path"]:
            files[match["path"]] = match["code"]
        else:
            lines[match["kind"]] = match["code"]
    return files, lines


def documented_output(command: str) -> list[str]:
    """The `# ` lines the doc prints under `command` in a code block."""
    text = DOC.read_text()
    block = text[text.index(command + "\n") + len(command) + 1 :]
    out = []
    for line in block.splitlines():
        if not line.startswith("# "):
            break
        out.append(line[2:])
    return out


@pytest.fixture
def doors(toy, monkeypatch):
    """The toy package with the recipe modules beside it (imported afresh) and the provider registered."""
    files, lines = recipes()
    assert sorted(files) == [
        "toy_bench/adder_provider.py",
        "toy_bench/toy_studio.py",
        "toy_bench/toy_tool.py",
    ]
    for path, code in files.items():
        (toy / "pkg" / path).write_text(code)
    for name in [m for m in sys.modules if m == "toy_bench" or m.startswith("toy_bench.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(
        providers, "_entries", dict(providers._entries)
    )  # the registration ends with the test
    exec(lines["provider"], {"providers": providers})
    return toy


def test_the_toy_is_listed_and_described_from_its_card(doors):
    assert "toy        accuracy       non-official" in kinegraph("list", "benchmarks")
    assert kinegraph("describe", "toy").splitlines() == documented_output("kinegraph describe toy")


def test_the_toy_is_fetched_and_checked_by_data(doors, monkeypatch):
    kinegraph("synth", "toy", "--out", "data", "--n", "4")
    repo = HubRepo(
        "example/toy-sums", {"toy.jsonl": Path("data/toy.jsonl").read_bytes(), "README.md": b"toy"}
    )
    with LoopbackHub(repo) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        fetched = kinegraph("data", "fetch", "toy", "--to", "toy_data")
    assert fetched == f"fetched example/toy-sums@{repo.commit} (1 files) into toy_data\n"
    assert kinegraph("data", "check", "toy", "toy_data") == "ok: toy_data is a complete toy folder\n"
    Path("toy_data/toy.jsonl").write_text('{"id": "q0", "a": 1}\n')
    result = CliRunner().invoke(app, ["data", "check", "toy", "toy_data"])
    assert result.exit_code == 2 and "field 'b': missing" in result.stdout


def test_the_toy_is_served_over_http(doors):
    target = "toy_bench.toy_graph:build"
    with running(None, graphs=(target,), default_graph=target) as server:
        asked = httpx.post(
            server.url + "/v1/qa", headers=AUTH, json={"question": "What is 3 + 4?"}, timeout=60
        )
        refused = httpx.post(
            server.url + "/v1/qa", headers=AUTH, json={"question": "What is three plus four?"}
        )
    assert asked.status_code == 200, asked.text
    assert (asked.json()["answer"], asked.json()["status"], asked.json()["graph"]) == (7.0, "ok", target)
    assert refused.status_code == 422
    assert refused.json()["error"]["message"] == "question: ask 'What is A + B?' with two integers"


def test_the_toy_runs_in_studio(doors):
    from toy_bench.toy_studio import toy_sum

    value = {"samples": [{"id": "q1", "question": "What is 3 + 4?", "context": {"a": 3, "b": 4}}]}
    (prediction,) = asyncio.run(toy_sum.ainvoke(value))["predictions"]
    assert (prediction["sample_id"], prediction["answer"]) == ("q1", 7.0)
    misspelt = {"samples": [{"question": "What is 3 + 4?", "context": {"a": 3, "bb": 4}}]}
    with pytest.raises(StudioInputError, match=r"^samples\.0\.context\.bb: Extra inputs are not permitted"):
        asyncio.run(toy_sum.ainvoke(misspelt))


def test_the_provider_recipe_answers_a_run(doors):
    assert "adder" in kinegraph("list", "models").split()
    kinegraph("synth", "toy", "--out", "data", "--n", "4")
    kinegraph("run", "toy", "--graph", "toy_bench.adder_provider:build_asker", "--model", "adder:v1",
              "--data", "data", "--out", "R3", "--no-progress")  # fmt: skip
    assert json.loads(Path("R3/metrics.json").read_text())["accuracy"] == 1.0
    assert "adder:v1" in Path("R3/run.json").read_text()


def test_the_tool_recipe_is_called_through_the_registry(doors, tmp_path):
    from toy_bench.toy_tool import registry

    write_video(tmp_path / "clip.mp4", np.full((6, 24, 32, 3), 200, np.uint8), fps=5.0)
    tools = registry()
    assert "mean_brightness" in tools.names() and "ego_trajectory" in tools.names()
    media = DataRootMedia(MediaLimits(data_root=tmp_path))
    result = tools.call("mean_brightness", {"video_path": "clip.mp4", "threshold": 100.0}, media)
    assert result["bright"] is True and abs(result["mean_brightness"] - 200) < 3
    assert result["frames_used"]["n_frames"] == 6
    (spec,) = [t for t in tools.openai_tools() if t["function"]["name"] == "mean_brightness"]
    assert spec["function"]["parameters"]["required"] == ["video_path"]
    with pytest.raises(ToolError, match="bad arguments for mean_brightness"):
        tools.call("mean_brightness", {"video_path": "clip.mp4", "threshold": "bright"}, media)
    with pytest.raises(ToolError, match="mean_brightness could not run: threshold must be within 0..255"):
        tools.call("mean_brightness", {"video_path": "clip.mp4", "threshold": 300.0}, media)
