"""The graph registry: every shipped graph's spec, its option schema, its flags, and users' own builders."""

from __future__ import annotations

import inspect
import typing

import pytest
from langgraph.graph.state import CompiledStateGraph

from kinegraph.graphs import GraphSpec, graph_spec, graphs
from kinegraph.registry import UnknownEntryError
from kinegraph.types import RoleModel

VLM_FREE = {
    "egodyn.oracle",
    "egodyn.vo",
    "egodyn.flow",
    "egodyn.gpu_flow",
    "egodyn.measured",
    "quantiphy.oracle_tracks",
    "quantiphy.tracker",
}
FLAGS = ("needs_model", "needs_gpu", "needs_trajectory")

USER_GRAPH = '''
from langgraph.graph import END, START, StateGraph

from kinegraph.graphs.state import GraphContext, GroupState


async def answer(state: GroupState) -> dict:
    return {"results": []}


def build(depth: int, label: str = "x"):
    """A user's graph that answers nothing.

    More text that is not the description."""
    graph = StateGraph(GroupState, context_schema=GraphContext)
    graph.add_node("answer", answer)
    graph.add_edge(START, "answer")
    graph.add_edge("answer", END)
    return graph.compile()


build.needs_model = False
build.needs_gpu = True
build.needs_trajectory = True


def unmarked():
    return build(1)


NOT_A_BUILDER = 3
'''


@pytest.fixture
def user_module(tmp_path, monkeypatch, request):
    """The name of a fresh importable module holding `USER_GRAPH` (one name per test: no import cache)."""
    name = f"user_graph_{request.node.name.replace('[', '_').replace(']', '').replace('.', '_')}"
    (tmp_path / f"{name}.py").write_text(USER_GRAPH)
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


@pytest.mark.parametrize("name", graphs.names())
def test_every_shipped_graph_has_a_spec_matching_its_builder(name):
    spec = graph_spec(name)
    assert isinstance(spec, GraphSpec) and spec.name == name and spec.family == name.split(".")[0]
    assert spec.description and "\n" not in spec.description
    assert spec.target.startswith(f"kinegraph.graphs.{spec.family}.")  # the family's own package
    builder = spec.builder
    hints = typing.get_type_hints(builder)
    parameters = inspect.signature(builder).parameters.values()
    assert [(o.name, o.annotation, o.default) for o in spec.options] == [
        (p.name, hints[p.name], p.default) for p in parameters
    ]
    assert not any(o.required for o in spec.options)  # a shipped graph builds with no options at all
    assert not any(hasattr(builder, flag) for flag in FLAGS)  # the flags live on the spec only


def test_flags_of_the_shipped_graphs():
    specs = [graph_spec(name) for name in graphs.names()]
    assert {s.name for s in specs if not s.needs_model} == VLM_FREE
    assert {s.name for s in specs if s.needs_gpu} == {"egodyn.gpu_flow"}
    assert {s.name for s in specs if s.needs_trajectory} == {
        "egodyn.trajectory",
        "egodyn.text_only",
        "egodyn.oracle",
    }
    assert {s.model_roles for s in specs if s.name in VLM_FREE} == {()}
    several = {s.name: (s.model_roles, s.own_model_roles) for s in specs if len(s.model_roles) > 1}
    assert several == {
        "tad.scene_cot": (("captioner", "answerer"), ()),
        "stsbench.scene_cot": (("captioner", "answerer"), ()),
        "autodridm.explained": (("backend", "analyzer"), ("analyzer",)),
    }
    assert {s.model_roles for s in specs if s.name not in VLM_FREE | set(several)} == {("backend",)}


# The graphs that reproduce a setting a paper reports or its official code runs, each with the section of
# the spec notes (../shared/spec/<paper>.md) it reproduces. Every other shipped graph is non-official: a new
# graph lands here only on purpose, after someone checked it against the paper.
OFFICIAL = {
    "egodyn.vision",  # egodyn.md §1.5, Table 3: vision-only, 10 uniformly sampled frames
    "egodyn.trajectory",  # egodyn.md §4, Table 4 default (Summary) and the encoding ablation (Tables 4, 8)
    "egodyn.text_only",  # egodyn.md §4.3, Table 4 footnote 1: `--no_images` + summary trajectory (O=∅)
    "egodyn.blind",  # egodyn.md §1.5, Table 3 footnote 2: no frames, no trajectory
    "egodyn.static_first",  # egodyn.md §1.5, Table 3 footnote 3: one static frame
    "egodyn.shuffled",  # egodyn.md §1.5, Table 3 footnote 4: shuffled frames, seed 42
    "egodyn.vo",  # egodyn.md §3.2: the KLT + essential-matrix visual-odometry baseline
    "egodyn.flow",  # egodyn.md §3.1: the Farneback flow heuristic baseline
    "quantiphy.zero_shot",  # quantiphy.md §2.2 and §8.5 A: Table 1, the runner's zero-shot v3
    "quantiphy.prior_only",  # quantiphy.md §6.2 and §8.5 B: Table 2 prior-only, the runner's v1
    "quantiphy.counterfactual",  # quantiphy.md §6.3 and §8.5 C: Table 2 counterfactual, the runner's v2
    "quantiphy.cot",  # quantiphy.md §6.4 and §8.5 D: Table 2 structured CoT (cot_q1..3, then the question)
    "tad.baseline",  # tad.md §2.2: `baseline_{segments,scenes}.py`, Table 4 base rows
    "tad.blind",  # tad.md §4.4: Figure 4 "Blind: Only the question" (upstream's text stand-in)
    "tad.ego_pose",  # tad.md §4.3: Table 4 "+EP" rows (`--raw-for-baseline`)
    "tad.tcogmap",  # tad.md §4.2: Table 4 "+ TCogMap" rows (Algorithm 1)
    "tad.tcogmap_only",  # tad.md §4.4: Figure 4 "TCogMap Only"
    "tad.scene_cot",  # tad.md §4.1: Table 4 "+ Scene-CoT" rows
    "stsbench.baseline",  # tad.md §5.5: Table 6 InternVL3-8B row (STSBench's own VLM prompt)
    "stsbench.tcogmap",  # tad.md §5.5: Table 6 "+ TCogMap" (the paper's undescribed "minimal adaptation")
    "stsbench.scene_cot",  # tad.md §5.5: Table 6 "+ Scene-CoT" (the same undescribed adaptation)
    "dsi.baseline",  # dsi.md §2.1-2.2: RAWQA, Table 1
    "dsi.ffr",  # dsi.md §2.1 and §4.3: FFR, Table 2 and Table A.1
    "autodridm.baseline",  # autodridm.md §2.1: Figure 13 prompts, Table 1 (0-shot)
    "autodridm.few_shot",  # autodridm.md §2.1 and §3: 1/2/5-shot, Tables 8 and 9
    "autodridm.explained",  # autodridm.md §4.3: the analyzer's Prompt 3 (error tags E1-E9), Table 2
}


def test_the_official_graphs_are_the_reviewed_list():
    specs = [graph_spec(name) for name in graphs.names()]
    assert {s.name for s in specs if not s.non_official} == OFFICIAL
    for spec in specs:  # `kinegraph list graphs` says it too
        assert spec.description.startswith("non-official: ") is spec.non_official, spec.name
        assert ("non-official" in spec.description) is spec.non_official, spec.name


def test_roles_are_filled_by_name_else_by_the_runs_model():
    answerer = RoleModel(model="vllm:qwen2.5-14b-instruct-1m")
    assert graph_spec("tad.scene_cot").resolve_roles("vllm:vl", {"answerer": answerer}) == {
        "captioner": "vllm:vl",
        "answerer": "vllm:qwen2.5-14b-instruct-1m",
    }
    assert graph_spec("tad.scene_cot").resolve_roles(None, {"captioner": answerer, "answerer": answerer}) == {
        "captioner": "vllm:qwen2.5-14b-instruct-1m",
        "answerer": "vllm:qwen2.5-14b-instruct-1m",
    }
    assert graph_spec("egodyn.oracle").resolve_roles(None, {}) == {}


@pytest.mark.parametrize(
    ("graph", "model", "roles", "message"),
    [
        (
            "egodyn.vision",
            "vllm:a",
            ["answerer"],
            "graph egodyn.vision has no model role 'answerer' (roles: backend)",
        ),
        (
            "egodyn.oracle",
            None,
            ["backend"],
            "graph egodyn.oracle has no model role 'backend' (roles: none, it",
        ),
        (
            "autodridm.explained",
            "vllm:a",
            [],
            "graph autodridm.explained needs --role analyzer=PROVIDER:MODEL (the",
        ),
        (
            "tad.scene_cot",
            None,
            ["answerer"],
            "graph 'tad.scene_cot' needs a model for role 'captioner': pass",
        ),
        ("egodyn.vision", None, [], "graph 'egodyn.vision' needs a model: pass --model PROVIDER:MODEL"),
    ],
)
def test_a_role_the_graph_lacks_or_cannot_fill_is_refused_in_one_line(graph, model, roles, message):
    named = {role: RoleModel(model="vllm:b") for role in roles}
    with pytest.raises(ValueError) as excinfo:
        graph_spec(graph).resolve_roles(model, named)
    assert str(excinfo.value).startswith(message) and "\n" not in str(excinfo.value)


def test_a_spec_whose_roles_contradict_its_flags_is_refused():
    with pytest.raises(ValueError, match="needs no model but declares roles"):
        GraphSpec(
            "x.y", "kinegraph.graphs.tad.builders:build_baseline", "d", needs_model=False, model_roles=("a",)
        )
    with pytest.raises(ValueError, match="own_model_roles must be among"):
        GraphSpec("x.y", "kinegraph.graphs.tad.builders:build_baseline", "d", own_model_roles=("judge",))


def test_an_unknown_option_is_refused_in_one_line_naming_the_options():
    with pytest.raises(ValueError) as excinfo:
        graph_spec("egodyn.measured").build({"bogus": 1})
    assert str(excinfo.value) == (
        "graph egodyn.measured has no option 'bogus' (options: focal_px, camera_height_m, pitch_deg, "
        "num_frames, correspondences, weights, scene_camera)"
    )
    with pytest.raises(ValueError) as excinfo:
        graph_spec("egodyn.oracle").build({"num_frames": 3})
    assert str(excinfo.value) == "graph egodyn.oracle has no option 'num_frames' (options: none)"


def test_egodyn_tools_has_no_mode_the_calls_are_their_own_graph():
    with pytest.raises(ValueError) as excinfo:
        graph_spec("egodyn.tools").build({"mode": "calls"})
    assert str(excinfo.value) == (
        "graph egodyn.tools has no option 'mode' (options: probes, num_frames, encoding, grouped, max_side, "
        "vo_thresholds, flow_thresholds)"
    )
    calls = graph_spec("egodyn.tool_calls").build({"max_tool_rounds": 2}).get_graph().nodes
    text = graph_spec("egodyn.tools").build({}).get_graph().nodes
    assert "answer_question_with_tools" in calls and "answer_question" in text


def test_option_values_are_checked_against_the_annotations():
    spec = graph_spec("egodyn.vision")
    with pytest.raises(ValueError) as excinfo:
        spec.build({"grouped": "yes"})
    assert str(excinfo.value) == "graph egodyn.vision option grouped: expected bool, got 'yes'"
    with pytest.raises(ValueError, match=r"option encoding: expected Literal\['summary'"):
        graph_spec("egodyn.trajectory").check_options({"encoding": "poetry"})
    assert graph_spec("egodyn.measured").check_options({"focal_px": 800, "num_frames": None}) == {
        "focal_px": 800.0,
        "num_frames": None,
    }
    assert isinstance(spec.build({"num_frames": 3, "grouped": True}), CompiledStateGraph)


def test_option_schema_reads_as_the_user_writes_it():
    options = {o.name: o for o in graph_spec("egodyn.tools").options}
    assert options["probes"].type_name == "Sequence[str]"
    assert options["probes"].default == ("vo", "flow", "tcogmap")
    assert options["max_side"].type_name == "int | None" and options["num_frames"].type_name == "int"


def test_a_users_builder_is_a_spec_with_the_flags_it_declares(user_module):
    spec = graph_spec(f"{user_module}:build")
    assert (spec.name, spec.family, spec.description) == (
        f"{user_module}:build",
        None,
        "A user's graph that answers nothing.",
    )
    assert (spec.needs_model, spec.needs_gpu, spec.needs_trajectory) == (False, True, True)
    assert spec.model_roles == ()
    assert [(o.name, o.required) for o in spec.options] == [("depth", True), ("label", False)]
    assert isinstance(spec.build({"depth": 2}), CompiledStateGraph)
    with pytest.raises(ValueError) as excinfo:
        spec.build({})
    assert str(excinfo.value) == f"graph {user_module}:build needs option 'depth'"
    unmarked = graph_spec(f"{user_module}:unmarked")
    assert (unmarked.needs_model, unmarked.needs_gpu, unmarked.needs_trajectory) == (True, False, False)


def test_a_user_builder_that_cannot_be_used_is_refused_in_one_line(user_module):
    with pytest.raises(ValueError) as excinfo:
        graph_spec("no_such_package.graphs:build")
    assert (
        str(excinfo.value)
        == "cannot import 'no_such_package.graphs:build': No module named 'no_such_package'"
    )
    with pytest.raises(ValueError, match=f"graph builder '{user_module}:NOT_A_BUILDER' is not a function"):
        graph_spec(f"{user_module}:NOT_A_BUILDER")
    with pytest.raises(ValueError, match=f"cannot import '{user_module}:nope': {user_module} has no 'nope'"):
        graph_spec(f"{user_module}:nope")


def test_an_unknown_name_lists_the_registered_graphs():
    with pytest.raises(
        UnknownEntryError, match="unknown graph 'egodyn.nope'; known: autodridm.agent, autodridm.baseline, "
    ):
        graph_spec("egodyn.nope")
