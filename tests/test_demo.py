"""`kinegraph demo`: the embedded default with no keys, and with a model behind a loopback server."""

from __future__ import annotations

import json

import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.api.frames import load_run
from kinegraph.demo import EGODYN_FREE, EGODYN_READER, EGODYN_VLM, QUANTIPHY_FREE, run_demo
from kinegraph.rundir import read_predictions
from tests.support.tool_caller_model import tool_caller


@pytest.mark.slow
def test_demo_without_keys_shows_what_tools_add_to_the_built_in_reader(tmp_path):
    run_demo(tmp_path, n=2, seed=1)
    for benchmark, graphs in (("egodyn", EGODYN_FREE), ("quantiphy", QUANTIPHY_FREE)):
        report = (tmp_path / f"{benchmark}_report.html").read_text()
        assert report.startswith("<!doctype html>") and "data:image/png;base64," in report
        for graph in graphs:
            info = json.loads((tmp_path / benchmark / "runs" / graph / "run.json").read_text())
            assert info["status"] == "completed" and info["config"]["model"] is None
            assert graph in report
        assert "(ceiling)" in report and "oracle" not in report[: report.index("baseline")]
    oracle = read_predictions(tmp_path / "egodyn" / "runs" / "egodyn.oracle" / "predictions.jsonl")
    assert len(oracle) == 2 * 2 * 14  # n clips per source (nuScenes, CARLA), 14 questions each
    assert all(p.answer == p.ground_truth for p in oracle)
    # the reader alone (baseline) < the reader with the kinematics / tool readings < the oracle (ceiling)
    runs = tmp_path / "egodyn" / "runs"
    alone, *helped = (load_run(runs / f"{g}.reader_text").headline["balanced_acc"] for g in EGODYN_READER)
    assert all(alone < score < 1.0 for score in helped), (alone, helped)
    rows = (tmp_path / "egodyn_model_report.html").read_text()
    rows = rows[rows.index("<tbody>") :]
    assert (
        rows.index("egodyn.vision")
        < rows.index("egodyn.tools")
        < rows.index("egodyn.oracle (non-official) (ceiling)")
    )
    assert not (tmp_path / "quantiphy_model_report.html").exists()  # the reader reads EgoDyn questions only


@pytest.mark.slow
def test_demo_with_a_model_compares_the_vlm_baseline_with_its_tool_graphs(tmp_path):
    with OpenAILoopback(responder=tool_caller) as server:
        run_demo(tmp_path, model="vllm:reader", base_url=server.base_url, n=2, seed=1)
    report = (tmp_path / "egodyn_model_report.html").read_text()
    rows = report[report.index("<tbody>") :]
    positions = [rows.index(graph) for graph in EGODYN_VLM]
    assert positions == sorted(positions) and "baseline" in rows  # the vision run comes first
    assert rows.count("[") >= len(EGODYN_VLM) - 1  # a bootstrap interval for each later run
    calls = read_predictions(
        tmp_path / "egodyn" / "runs" / "egodyn.tool_calls.vllm_reader" / "predictions.jsonl"
    )
    assert len(calls) == 2 * 2 * 14 and any(step.get("tool") for p in calls for step in p.trace)
    assert any(r.body.get("tools") for r in server.requests)
    assert (tmp_path / "quantiphy_model_report.html").exists()
