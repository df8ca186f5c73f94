"""Every `<suite>.agent` end to end on both wire formats: `kinegraph run` against a loopback model that calls
the suite's tools, then the answers, the traced calls, and the tool use `kinegraph compare` prints."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from kinegraph.agents.loopback import AnthropicLoopback, OpenAILoopback
from kinegraph.report.cells import fmt
from kinegraph.suites import suites
from tests.support import agent_models
from tests.support.agent_models import VO_QUESTIONS
from tests.support.tool_caller_model import has_tool_result, offered_tools

WIRES = {
    "openai": ("vllm:loopback-vlm", OpenAILoopback),
    "anthropic": ("anthropic:claude-haiku-4-5", AnthropicLoopback),
}


class Case(NamedTuple):
    baseline: str  # the suite's plain graph: offered no tools, the stand-in model answers blind
    offered: set[str]  # the tools the agent graph offers
    called: set[str]  # the tools the stand-in model calls
    limit: int


VO, SCALE = "visual_odometry", "pixel_scale_calculator"
CASES = {
    "egodyn": Case("egodyn.vision", {VO, "optical_flow", "ego_trajectory"}, {VO}, 14),
    "quantiphy": Case("quantiphy.zero_shot", {SCALE, "track_objects"}, {SCALE}, 16),
    "tad": Case("tad.baseline", {"ego_motion_map", "camera_motion"}, {"ego_motion_map", "camera_motion"}, 8),
    "stsbench": Case("stsbench.baseline", {"ego_motion_map", "camera_motion"}, {"ego_motion_map"}, 8),
    "dsi": Case("dsi.baseline", {"camera_motion", "ego_trajectory"}, {"camera_motion"}, 12),
    "autodridm": Case("autodridm.baseline", {"image_cues"}, {"image_cues"}, 18),
}  # fmt: skip


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """suite -> (`--data`, `--data-option`s), each world written on first use."""
    from kinegraph.benchmarks.stsbench.world import write_stsbench_world
    from kinegraph.benchmarks.tad.world import write_tad_world

    class Worlds(dict):
        def __missing__(self, suite: str) -> tuple[Path, list[str]]:
            root = tmp_path_factory.mktemp(suite)
            if suite == "tad":
                tad, nus = write_tad_world(root, n_scenes=2, seed=0)
                self[suite] = (tad, ["--data-option", f"nuscenes_root={nus}"])
            elif suite == "stsbench":
                path = write_stsbench_world(root, n_records=8, seed=0)
                self[suite] = (path, ["--data-option", f"data_root={path.parent}"])
            elif suite == "quantiphy":
                world = suites.get(suite).generate(root, n=4, seed=2)
                self[suite] = (world / "quantiphy_validation.csv", [])
            else:
                self[suite] = (suites.get(suite).generate(root, n={"egodyn": 2}.get(suite, 3), seed=3), [])
            return self[suite]

    return Worlds()


def model_for(suite: str, data: Path) -> agent_models.Responder:
    if suite == "quantiphy":
        return agent_models.quantiphy_model(data.parent)
    return getattr(agent_models, f"{suite}_model")()


def predictions(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().splitlines()]


def calls_of(prediction: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in prediction["trace"] if "tool" in e]


def tool_use_row(printed: str, graph: str) -> list[str]:
    """The cells of `graph`'s row in the tool-use table `kinegraph compare` printed."""
    table = printed[printed.index("Tool use") :]
    line = next(line for line in table.splitlines() if line.startswith("│ ") and graph in line)
    return [cell.strip() for cell in line.strip("│ ").split("│")]


@pytest.fixture(scope="module")
def baselines(worlds: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """suite -> its baseline run with the same stand-in model (offered no tools, it answers blind)."""
    from typer.testing import CliRunner

    from kinegraph.cli import app

    class Baselines(dict):
        def __missing__(self, suite: str) -> Path:
            data, options = worlds[suite]
            out = tmp_path_factory.mktemp(f"{suite}_base") / "run"
            graph, limit = CASES[suite].baseline, CASES[suite].limit
            with OpenAILoopback(responder=model_for(suite, Path(data))) as server:
                result = CliRunner().invoke(app, [
                    "run", suite, "--graph", graph, "--model", "vllm:loopback-vlm", "--base-url",
                    server.base_url, "--data", str(data), *options, "--out", str(out), "--no-cache",
                    "--no-progress", "--limit", str(limit),
                ])  # fmt: skip
            assert result.exit_code == 0, result.output
            self[suite] = out
            return out

    return Baselines()


@pytest.mark.slow
@pytest.mark.parametrize("wire", sorted(WIRES))
@pytest.mark.parametrize("suite", list(CASES))
def test_agent_calls_tools_answers_from_them_and_compare_counts_the_calls(
    suite, wire, worlds, baselines, kinegraph, tmp_path, monkeypatch
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "loopback-key")
    data, options = worlds[suite]
    _, offered, called, limit = CASES[suite]
    model, server_class = WIRES[wire]
    with server_class(responder=model_for(suite, Path(data))) as server:
        kinegraph(
            "run", suite, "--graph", f"{suite}.agent", "--model", model, "--base-url", server.base_url,
            "--data", data, *options, "--out", tmp_path / "agent", "--no-cache", "--no-progress",
            "--limit", limit,
        )  # fmt: skip
        bodies = [r.body for r in server.requests]
    assert set(offered_tools(bodies[0])) == offered
    follow = [b for b in bodies if has_tool_result(b)]
    assert follow and len(bodies) == limit + len(follow)  # a question with calls asks twice

    agent = predictions(tmp_path / "agent")
    assert len(agent) == limit and {p["status"] for p in agent} == {"ok"}
    for p in agent:
        calls = calls_of(p)
        assert {c["tool"] for c in calls} <= called and all(c["round"] == 1 for c in calls)
        assert not any(c["output"].startswith("Error") for c in calls)
        assert p["usage"]["requests"] == (2 if calls else 1)
        if suite == "egodyn" and calls:  # the answer is the one visual odometry gave
            assert p["question_id"] in VO_QUESTIONS
            assert p["answer"] == json.loads(calls[0]["output"])["answers"][p["question_id"]]
        if suite == "quantiphy":  # the calculator's value
            assert p["answer"] == pytest.approx(json.loads(calls[0]["output"])["value"], rel=1e-5)

    # the tool use compare prints, against what the traces hold
    counts = Counter(c["tool"] for p in agent for c in calls_of(p))
    with_calls = sum(bool(calls_of(p)) for p in agent)
    printed = kinegraph("compare", baselines[suite], tmp_path / "agent").output
    row = tool_use_row(printed, f"{suite}.agent")
    assert row[1] == f"{sum(counts.values()) / limit:.2f}"
    assert row[2] == ", ".join(f"{name} {n}" for name, n in counts.most_common())
    assert row[3] == f"{with_calls / limit:.1%} ({with_calls}/{limit})"
    assert tool_use_row(printed, CASES[suite].baseline)[1:4] == ["0.00", "—", f"0.0% (0/{limit})"]
    primary = suites.get(suite).primary
    kinegraph("compare", baselines[suite], tmp_path / "agent", "--out", tmp_path / "r.json")
    base_run, agent_run = json.loads((tmp_path / "r.json").read_text())["runs"]
    use, score = agent_run["tool_use"], agent_run["headline"][primary]
    if with_calls == limit:  # every question called: the score with calls is the run's
        assert row[5] == "—" and use["primary_with_calls"] == pytest.approx(score)
    else:  # the scores with and without calls, as printed (a metric over tasks needs all of them)
        assert row[4:6] == [fmt(use["primary_with_calls"]), fmt(use["primary_without_calls"])]
        if suite in ("egodyn", "dsi"):  # per-question metrics: both subsets score
            assert use["primary_with_calls"] is not None and use["primary_without_calls"] is not None
    assert score > base_run["headline"][primary]  # what the tools measured reached the answers
