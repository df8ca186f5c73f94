"""A run is resolved once (`run/plan.py`): its graph, suite, seed, role models and parsed model specs; the
stages after it read the plan and never look a graph, suite or model spec up again."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kinegraph.run
from kinegraph.agents.providers import UnknownModelError
from kinegraph.registry import UnknownEntryError
from kinegraph.run.plan import plan_run
from kinegraph.types import RoleModel, RunConfig


def config(**fields) -> RunConfig:
    return RunConfig(**{"benchmark": "tad", "data": "unused", "out_dir": "unused", **fields})


def test_a_plan_holds_the_graph_suite_roles_and_parsed_models():
    plan = plan_run(
        config(
            graph="tad.scene_cot",
            model="openai:gpt-4o",
            roles={"captioner": RoleModel(model="vllm:Qwen/Qwen2.5-VL-7B:latest")},
        )
    )
    assert plan.graph.name == "tad.scene_cot" and plan.suite.name == "tad"
    assert dict(plan.role_models) == {
        "captioner": "vllm:Qwen/Qwen2.5-VL-7B:latest",
        "answerer": "openai:gpt-4o",
    }
    assert dict(plan.models) == {
        "openai:gpt-4o": ("openai", "gpt-4o"),
        "vllm:Qwen/Qwen2.5-VL-7B:latest": ("vllm", "Qwen/Qwen2.5-VL-7B:latest"),
    }
    assert plan.needs_default_model and plan.provider("openai:gpt-4o") == "openai"
    with pytest.raises(TypeError):
        plan.role_models["answerer"] = "x:y"  # type: ignore[index]


def test_the_run_seed_fills_the_graph_seed_option_unless_given():
    plan = plan_run(config(benchmark="egodyn", graph="egodyn.shuffled", model="openai:gpt-4o", seed=7))
    assert plan.config.options["seed"] == 7
    given = plan_run(
        config(
            benchmark="egodyn", graph="egodyn.shuffled", model="openai:gpt-4o", seed=7, options={"seed": 1}
        )
    )
    assert given.config.options["seed"] == 1
    no_seed_option = plan_run(config(benchmark="egodyn", graph="egodyn.oracle", seed=7))
    assert "seed" not in no_seed_option.config.options and dict(no_seed_option.role_models) == {}


@pytest.mark.parametrize(
    ("fields", "error", "words"),
    [
        ({"graph": "tad.nope"}, UnknownEntryError, "tad.nope"),
        ({"graph": "tad.baseline", "benchmark": "nope"}, UnknownEntryError, "nope"),
        ({"graph": "tad.baseline"}, ValueError, "needs a model: pass --model PROVIDER:MODEL"),
        ({"graph": "tad.baseline", "model": "gpt-4o"}, UnknownModelError, "is not PROVIDER:MODEL"),
        (
            {"graph": "tad.baseline", "model": "a:b", "roles": {"judge": RoleModel(model="a:b")}},
            ValueError,
            "judge",
        ),
    ],
)
def test_a_run_that_cannot_be_planned_is_refused_in_one_line(fields, error, words):
    with pytest.raises(error, match=words.replace("(", r"\(").replace(")", r"\)")) as refused:
        plan_run(config(**fields))
    assert "\n" not in str(refused.value)


#: The lookups only the plan makes (a sweep's expansion checks its own entries before any run).
LOOKUPS = {"graph_spec", "parse_model_spec", "resolve_roles"}
PLANNERS = {"plan.py", "sweep_spec.py"}


def lookups_outside_the_plan(package: Path) -> list[str]:
    """`file:line name` for each call of a plan lookup, or of `suites.get`, in `package` outside PLANNERS."""
    found = []
    for path in sorted(package.glob("*.py")):
        if path.name in PLANNERS:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
            owner = (
                func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else ""
            )
            if name in LOOKUPS or (owner, name) == ("suites", "get"):
                found.append(f"{path.name}:{node.lineno} {name}")
    return found


def test_no_stage_of_a_run_looks_its_graph_suite_or_models_up_again():
    assert lookups_outside_the_plan(Path(kinegraph.run.__file__).parent) == []


def test_a_second_lookup_is_found(tmp_path):
    (tmp_path / "local.py").write_text(
        "def f(config):\n    return graph_spec(config.graph), suites.get('x')\n"
    )
    (tmp_path / "plan.py").write_text("def g(config):\n    return graph_spec(config.graph)\n")
    assert lookups_outside_the_plan(tmp_path) == ["local.py:2 graph_spec", "local.py:2 get"]
