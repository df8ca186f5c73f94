"""Commands that need no model, tool or server import none of their libraries (`-X importtime`, a fresh
process each): `kinegraph --help`, `evaluate`, `list` and `compare` stay near Python's own start-up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kinegraph
from kinegraph.registry import import_object
from kinegraph.suites import LazyGenerate, suites
from tests.support.tad_runs import write_run

#: Libraries of models, tools, graphs, servers and plots: a command that uses none must import none.
HEAVY = (
    "torch",
    "cv2",
    "av",
    "scipy",
    "langgraph",
    "langchain",
    "langchain_core",
    "ray",
    "aiohttp",
    "openai",
    "anthropic",
    "google.genai",
    "uvicorn",
    "fastapi",
    "starlette",
    "mcp",
    "matplotlib",
    "kinegraph.tools",
    "kinegraph.benchmarks.synthetic",
)
#: Scoring EgoDyn predictions also leaves out numpy and the YAML parser: the whole process is timed
#: against upstream's pure-Python scorer script (perf/startup.py).
EGODYN_LEAN = (*HEAVY, "numpy", "yaml")

RECORD = {
    "qa_id": "qa_00000001",
    "clip_id": "clip_00001",
    "question_id": "yaw_rate_turn_direction",
    "category": "direct_dynamics",
    "oracle_label": "left",
    "model_answer": "The vehicle turns left.",
}


def imported(*args: str | Path) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    """Every module `python -X importtime -m kinegraph.cli ARGS` imports, and the finished process."""
    source_root = str(Path(kinegraph.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([source_root, os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-X", "importtime", "-m", "kinegraph.cli", *map(str, args)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    modules = {
        line.split("|")[2].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "cumulative" not in line
    }
    return modules, done


def offending(modules: set[str], banned: tuple[str, ...]) -> list[str]:
    """The banned packages among `modules` (a package counts with every submodule)."""
    return sorted({b for b in banned for m in modules if m == b or m.startswith(b + ".")})


def test_offending_names_packages_with_their_submodules():
    modules = {"scipy.spatial.transform", "numpyx", "kinegraph.tools.kinematics", "json"}
    assert offending(modules, ("scipy", "numpy", "kinegraph.tools")) == ["kinegraph.tools", "scipy"]


def test_evaluate_egodyn_imports_the_scorer_and_nothing_heavy(tmp_path):
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(json.dumps(RECORD) + "\n")
    modules, done = imported("evaluate", "egodyn", predictions)
    assert done.returncode == 0, done.stderr[-2000:]
    metrics = json.loads(done.stdout)
    assert metrics["n_total"] == 1 and metrics["global"]["accuracy"] == 1.0
    assert "kinegraph.evaluators.egodyn" in modules  # the import list is read
    assert offending(modules, EGODYN_LEAN) == []


@pytest.mark.parametrize(
    "args",
    [
        ("--help",),
        ("evaluate", "--help"),
        ("evaluate", "quantiphy", "--help"),
        ("list", "benchmarks"),
        ("list", "graphs"),
        ("list", "models"),
        ("compare", "--help"),
    ],
    ids=" ".join,
)
def test_help_and_listings_import_nothing_heavy(args):
    modules, done = imported(*args)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "typer" in modules  # the import list is read
    assert offending(modules, HEAVY) == []


def test_help_imports_no_command_implementation():
    modules, done = imported("--help")
    assert done.returncode == 0 and "evaluate" in done.stdout
    assert any(m.startswith("kinegraph.cli.") for m in modules)  # the import list is read
    outside_the_cli = [m for m in modules if m.startswith("kinegraph.") and not m.startswith("kinegraph.cli")]
    assert sorted(outside_the_cli) == []


def test_compare_without_an_html_report_draws_nothing(tmp_path):
    runs = [
        write_run(tmp_path / "base", "tad.baseline", {"mc_action": {0, 1, 2}}),
        write_run(tmp_path / "tools", "tad.tcogmap", {"mc_action": set(range(3, 30))}),
    ]
    modules, done = imported("compare", *runs, "--n-boot", "50", "--out", tmp_path / "report.md")
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "report.md").is_file() and "kinegraph.report.compare" in modules
    assert offending(modules, HEAVY) == []


@pytest.mark.parametrize("name", suites.names())
def test_every_lazy_generator_names_a_function(name):
    generate = suites.get(name).generate
    assert isinstance(generate, LazyGenerate)
    assert callable(import_object(generate.target))
