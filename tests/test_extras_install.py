"""The core install works without any extra, and each extra's features, where it is missing, fail in one
line naming it (exit 2, no traceback). Two environments are built once and cached (tests/support/venvs):
`core` (pyproject's dependencies only) and `vision` (core + [vision], the base every other extra's
features need); each extra is probed in one that was built without it. The `studio` extra has no probe:
it carries LangGraph's own `langgraph dev` server, which no kinegraph import needs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.support.venvs import ROOT, announcer, cached_venv, pip

pytestmark = pytest.mark.slow

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
#: What the core install must leave out (the issue of a slim install, in distribution names).
NOT_IN_CORE = (
    "torch", "transformers", "opencv-python-headless", "langgraph-api", "langgraph-cli", "ray", "openai",
    "anthropic", "google-genai", "fastapi", "uvicorn", "mcp", "huggingface-hub", "pyarrow", "scipy",
)  # fmt: skip


def requirements(extra: str | None) -> list[str]:
    """The requirements of the core (extra None) or of `extra`, with `kinegraph[...]` references expanded."""
    if extra is None:
        return list(PROJECT["dependencies"])
    out: list[str] = []
    for requirement in PROJECT["optional-dependencies"][extra]:
        nested = re.fullmatch(r"kinegraph\[(.+)\]", requirement)
        out += [r for e in nested[1].split(",") for r in requirements(e)] if nested else [requirement]
    return out


def _build(*extras: str):
    def fill(python: Path) -> None:
        pip(python, "--no-deps", "-e", str(ROOT))
        pip(python, *requirements(None), *[r for e in extras for r in requirements(e)])

    return fill


@pytest.fixture(scope="module")
def core(request: pytest.FixtureRequest) -> Path:
    return cached_venv("core", _build(), announcer(request.config))


@pytest.fixture(scope="module")
def vision(request: pytest.FixtureRequest) -> Path:
    return cached_venv("vision", _build("vision"), announcer(request.config))


def kinegraph(python: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    command = [str(python.parent / "kinegraph"), *args]
    return subprocess.run(command, capture_output=True, text=True, env={**os.environ, **env}, timeout=300)


def one_line_naming(result: subprocess.CompletedProcess[str], extra: str) -> str:
    """The single stderr line of a failed command, checked to name `extra`'s install command."""
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].endswith(f"pip install 'kinegraph[{extra}]'"), lines[0]
    return lines[0]


def installed(python: Path) -> set[str]:
    listing = subprocess.run(
        [str(python), "-m", "pip", "list", "--format", "json"], capture_output=True, text=True, check=True
    ).stdout
    return {row["name"].lower().replace("_", "-") for row in json.loads(listing)}


def test_the_core_install_leaves_out_the_heavy_packages(core):
    assert not installed(core) & set(NOT_IN_CORE)


def test_the_core_install_scores_lists_and_describes(core, tmp_path):
    assert kinegraph(core, "--help").returncode == 0
    row = {"clip_id": "c1", "question_id": "speed_trend", "oracle_label": "steady", "model_answer": "steady"}
    (tmp_path / "p.jsonl").write_text(json.dumps(row) + "\n")
    scored = kinegraph(core, "evaluate", "egodyn", str(tmp_path / "p.jsonl"))
    assert scored.returncode == 0, scored.stderr
    assert json.loads(scored.stdout)["n_total"] == 1
    listed = kinegraph(core, "list", "graphs")
    assert listed.returncode == 0 and "egodyn.gpu_flow" in listed.stdout, listed.stderr
    benchmarks = kinegraph(core, "list", "benchmarks")
    assert benchmarks.returncode == 0 and "quantiphy" in benchmarks.stdout, benchmarks.stderr


def test_the_core_install_compares_runs(core, tmp_path):
    from tests.support.suite_runs import suite_run  # runs made here, with every extra; compared there

    runs = suite_run("egodyn", tmp_path, seeds=(0, 1))
    report = tmp_path / "report.html"
    compared = kinegraph(core, "compare", *map(str, runs), "--out", str(report))
    assert compared.returncode == 0, compared.stderr
    assert "<img" in report.read_text() or "<svg" in report.read_text()


def test_describing_a_graph_without_its_tools(core):
    one_line_naming(kinegraph(core, "describe", "egodyn.gpu_flow"), "vision")


def test_vision_missing(core, tmp_path):
    line = one_line_naming(kinegraph(core, "synth", "egodyn", "--out", str(tmp_path / "w")), "vision")
    assert "needs scipy" in line or "needs opencv-python-headless" in line


@pytest.fixture(scope="module")
def egodyn_world(vision, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("world") / "egodyn"
    made = kinegraph(vision, "synth", "egodyn", "--out", str(out), "--n", "2")
    assert made.returncode == 0, made.stderr
    return out


def test_gpu_missing_fails_once_before_any_clip(vision, egodyn_world, tmp_path):
    run = kinegraph(
        vision, "run", "egodyn", "--graph", "egodyn.gpu_flow", "--data", str(egodyn_world),
        "--out", str(tmp_path / "r"),
    )  # fmt: skip
    assert one_line_naming(run, "gpu") == "error: egodyn.gpu_flow needs torch: pip install 'kinegraph[gpu]'"


def test_ray_missing(vision, egodyn_world, tmp_path):
    run = kinegraph(
        vision, "run", "egodyn", "--graph", "egodyn.flow", "--data", str(egodyn_world),
        "--out", str(tmp_path / "r"), "--ray",
    )  # fmt: skip
    one_line_naming(run, "ray")


@pytest.mark.parametrize(("extra", "args"), [("serve", ["serve"]), ("mcp", ["mcp"])])
def test_doors_missing(vision, extra, args):
    one_line_naming(kinegraph(vision, *args), extra)


def test_data_missing(vision, tmp_path):
    one_line_naming(kinegraph(vision, "data", "fetch", "tad", "--to", str(tmp_path / "d")), "data")


@pytest.mark.parametrize(
    ("extra", "spec"),
    [
        ("openai", "openai:gpt-4o"),
        ("anthropic", "anthropic:claude-haiku-4-5"),
        ("google", "google:gemini-2.0-flash"),
        ("local", "transformers:{weights}"),
    ],
)
def test_provider_sdk_missing(vision, egodyn_world, tmp_path, extra, spec):
    keys = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k", "GOOGLE_API_KEY": "k"}
    run = kinegraph(
        vision, "run", "egodyn", "--graph", "egodyn.vision", "--model", spec.format(weights=tmp_path),
        "--data", str(egodyn_world), "--out", str(tmp_path / "r"), **keys,
    )  # fmt: skip
    one_line_naming(run, extra)
