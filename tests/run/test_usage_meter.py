"""Usage counted per model call, whatever a graph writes down; a role a graph's code names but the graph
does not declare is refused in one line, never answered by the default model."""

from __future__ import annotations

import json

import pytest

from kinegraph.run import execute as run
from kinegraph.rundir import read_predictions
from kinegraph.types import RoleModel, RunConfig
from tests.support.run_data import write_egodyn_hf

TWO_CALLS = '''
"""A user's graph that asks the model twice per question and keeps only the second response's usage."""
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from kinegraph.agents.protocol import GenerateRequest, Message
from kinegraph.graphs.nodes import call_model, prediction
from kinegraph.graphs.state import GraphContext, GroupState

ROLE = "ROLE_NAME"


async def answer_all(state: GroupState, runtime: Runtime[GraphContext]) -> dict:
    results = []
    for s in state["samples"]:
        ask = GenerateRequest(messages=[Message(role="user", content="draft " + s.id)])
        draft = await call_model(runtime, ask)
        final = await call_model(
            runtime, GenerateRequest(messages=[Message(role="user", content=draft.text + s.id)]), ROLE
        )
        results.append(prediction(s, raw=final.text, answer=s.options[0], usage=final.usage))
    return {"results": results}


def build():
    graph = StateGraph(GroupState, context_schema=GraphContext)
    graph.add_node("answer_all", answer_all)
    graph.add_edge(START, "answer_all")
    graph.add_edge("answer_all", END)
    return graph.compile()


build.model_roles = ("backend", "judge")
'''


def _graph(tmp_path, monkeypatch, name: str, role: str) -> str:
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / f"{name}.py").write_text(TWO_CALLS.replace("ROLE_NAME", role))
    return f"{name}:build"


def test_a_user_graph_that_keeps_one_of_two_responses_still_reports_every_call(tmp_path, monkeypatch):
    graph = _graph(tmp_path, monkeypatch, "two_calls_graph", "backend")
    data = write_egodyn_hf(tmp_path / "data", n_clips=2)
    out = tmp_path / "run"
    config = RunConfig(
        benchmark="egodyn",
        graph=graph,
        model="scripted:m",
        model_options={"responses": ["a"]},
        data=str(data),
        out_dir=str(out),
        use_cache=False,
    )
    summary = run(config, show_progress=False)
    assert summary.n_predictions == 28 and summary.status_counts == {"ok": 28}
    assert summary.usage.requests == 56  # two calls for each of 28 questions (the graph reports 28)
    totals = json.loads((out / "run.json").read_text())["totals"]
    assert totals["usage"]["requests"] == 56
    first = read_predictions(out / "predictions.jsonl")[0]
    assert (
        first.trace[-1]["node"] == "usage_meter"
        and first.trace[-1]["unreported_usage"]["backend"]["requests"]
    )


def test_usage_a_graph_leaves_out_is_counted_under_the_role_that_made_it(tmp_path, monkeypatch):
    graph = _graph(tmp_path, monkeypatch, "judged_graph", "judge")
    data = write_egodyn_hf(tmp_path / "data", n_clips=1)
    config = RunConfig(
        benchmark="egodyn",
        graph=graph,
        model="scripted:m",
        model_options={"responses": ["a"]},
        roles={"judge": RoleModel(model="scripted:j", options={"responses": ["b"]})},
        data=str(data),
        out_dir=str(tmp_path / "run"),
        use_cache=False,
    )
    summary = run(config, show_progress=False)
    assert summary.usage.requests == 28
    assert {role: u.requests for role, u in summary.usage_by_role.items()} == {"backend": 14, "judge": 14}


def test_a_role_the_graph_does_not_declare_is_refused_not_answered_by_default(tmp_path, monkeypatch):
    graph = _graph(tmp_path, monkeypatch, "misspelt_graph", "juge")
    data = write_egodyn_hf(tmp_path / "data", n_clips=1)
    config = RunConfig(
        benchmark="egodyn",
        graph=graph,
        model="scripted:m",
        model_options={"responses": ["a"]},
        data=str(data),
        out_dir=str(tmp_path / "run"),
    )
    run(config, show_progress=False)
    predictions = read_predictions(tmp_path / "run" / "predictions.jsonl")
    assert {p.status for p in predictions} == {"graph_error"}
    assert predictions[0].error == (
        "ValueError: this graph has no model role 'juge' (roles: backend, judge); "
        "declare it in the builder's model_roles"
    )


def test_a_user_builder_declares_its_roles_so_a_run_can_name_them(tmp_path, monkeypatch):
    from kinegraph.graphs import graph_spec

    spec = graph_spec(_graph(tmp_path, monkeypatch, "declared_graph", "judge"))
    assert spec.model_roles == ("backend", "judge")
    with pytest.raises(ValueError, match="has no model role 'jduge'"):
        spec.resolve_roles("scripted:m", {"jduge": RoleModel(model="scripted:j")})
