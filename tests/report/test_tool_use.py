"""Tool-use analytics in `compare`: two real EgoDyn runs (vision, tool calls) through a loopback model."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.report import compare, markdown, print_table, write_report
from kinegraph.run import execute as run
from kinegraph.suites import samples_from_predictions, suites
from kinegraph.types import Prediction, RunConfig
from tests.support.text_reader_model import answer_text
from tests.support.tool_caller_model import conversation_text, has_tool_result, relevant_tools, tool_caller


def selective(body):
    """Calls tools only for the questions visual odometry answers; answers the others straight away."""
    text = conversation_text(body)
    if body.get("tools") and not has_tool_result(body) and relevant_tools(text) != ["visual_odometry"]:
        return answer_text(text)
    return tool_caller(body)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """`egodyn.vision` (no tools offered) and `egodyn.tool_calls` on the same 28 questions."""
    data = suites.get("egodyn").generate(tmp_path_factory.mktemp("synth"), n=4, seed=3)
    out = tmp_path_factory.mktemp("runs")
    with OpenAILoopback(responder=selective) as server:
        for graph in ("egodyn.vision", "egodyn.tool_calls"):
            run(
                RunConfig(
                    benchmark="egodyn",
                    graph=graph,
                    model="vllm:reader",
                    base_url=server.base_url,
                    data=str(data),
                    out_dir=str(out / graph),
                    use_cache=False,
                    limit=28,
                ),
                show_progress=False,
            )
    return out / "egodyn.vision", out / "egodyn.tool_calls"


def _predictions(run_dir):
    lines = (run_dir / "predictions.jsonl").read_text().splitlines()
    return [Prediction.model_validate(json.loads(line)) for line in lines]


def _calls(prediction):
    return [
        e["tool"] for e in prediction.trace if e.get("node") == "answer_question_with_tools" and "tool" in e
    ]


def _accuracy(predictions):
    suite = suites.get("egodyn")
    return suite.headline(suite.score(samples_from_predictions(predictions), predictions))[suite.primary]


@pytest.mark.slow
def test_compare_counts_the_calls_in_the_traces_and_scores_both_subsets(runs, tmp_path):
    vision, calls = runs
    predictions = _predictions(calls)
    called = [p for p in predictions if _calls(p)]
    not_called = [p for p in predictions if not _calls(p)]
    n_calls = sum(len(_calls(p)) for p in predictions)
    assert 0 < len(called) < len(predictions) == 28  # the model asked for tools on some questions only
    assert {t for p in predictions for t in _calls(p)} == {"visual_odometry"}
    assert not any(_calls(p) for p in _predictions(vision))

    report = json.loads(write_report(compare([vision, calls]), tmp_path / "r.json").read_text())
    base, agent = (r["tool_use"] for r in report["runs"])
    assert base == {
        "questions": 28,
        "calls": 0,
        "calls_per_question": 0.0,
        "tools": {},
        "questions_with_calls": 0,
        "share_with_calls": 0.0,
        "primary_with_calls": None,
        "primary_without_calls": pytest.approx(_accuracy(_predictions(vision))),
    }
    assert agent == {
        "questions": 28,
        "calls": n_calls,
        "calls_per_question": pytest.approx(n_calls / 28),
        "tools": {"visual_odometry": n_calls},
        "questions_with_calls": len(called),
        "share_with_calls": pytest.approx(len(called) / 28),
        "primary_with_calls": pytest.approx(_accuracy(called)),
        "primary_without_calls": pytest.approx(_accuracy(not_called)),
    }

    comparison = compare([vision, calls])
    row = f"{n_calls / 28:.2f} | visual_odometry {n_calls} | {len(called) / 28:.1%} ({len(called)}/28)"
    assert row in markdown(comparison)
    page = write_report(comparison, tmp_path / "r.html").read_text()
    assert (
        "<h2>Tool use (non-official setting: the model calls tools): calls read from each prediction&#x27;s "
        "trace</h2>" in page
    )
    assert "<td class=long>egodyn.tool_calls · vllm:reader (non-official)</td>" in page  # long: it wraps
    assert "<td>egodyn.vision · vllm:reader</td>" in page
    assert [r["non_official"] for r in report["runs"]] == [False, True]
    assert f"<td>visual_odometry {n_calls}</td>" in page
    console = Console(width=400, record=True)
    print_table(comparison, console)
    assert f"visual_odometry {n_calls}" in console.export_text()


@pytest.mark.slow
def test_runs_without_calls_show_no_tool_use_section(runs):
    vision, _ = runs
    text = markdown(compare([vision, vision]))
    assert "Tool use" not in text and "with calls" not in text
