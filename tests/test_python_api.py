"""`import kinegraph as kg`: the README's example in a plain interpreter and in a Jupyter kernel (a running
event loop), runs from a list of samples, and runs read back as pandas frames."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import kinegraph as kg
from kinegraph.suites import suites
from tests.support.run_data import write_egodyn_world

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "python_api.ipynb"
SOURCE_ROOT = str(Path(kg.__file__).resolve().parents[1])


def readme_example() -> str:
    text = (ROOT / "README.md").read_text()
    found = re.search(r"<!-- python-example -->\n```python\n(.*?)```\n<!-- /python-example -->", text, re.S)
    assert found, "README.md lost its marked Python example"
    return found.group(1)


def with_source_path() -> dict[str, str]:
    """This checkout's package first on the path of a child process (a kernel, an interpreter)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([SOURCE_ROOT, os.environ.get("PYTHONPATH", "")])}


def test_the_notebook_runs_the_readme_example_itself():
    import nbformat

    cells = [c.source for c in nbformat.read(NOTEBOOK, as_version=4).cells if c.cell_type == "code"]
    assert readme_example().rstrip("\n") in cells


def test_the_public_face_is_curated_and_lazy():
    assert set(kg.__all__) == {"__version__", *kg._PUBLIC}  # every listed name resolves lazily
    assert {"run_graph", "load_run", "runs_frame", "compare", "describe", "graph_spec"} <= set(kg.__all__)
    assert "egodyn.tools" in kg.graph_names() and "answers:  egodyn questions" in kg.describe("egodyn.tools")
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        kg.nope  # noqa: B018
    lean = subprocess.run(
        [
            sys.executable,
            "-c",
            "import kinegraph, sys; print('pandas' in sys.modules, 'langgraph' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        env=with_source_path(),
        check=True,
    )
    assert lean.stdout.split() == ["False", "False"]  # `import kinegraph` alone loads neither


@pytest.mark.slow
def test_the_readme_example_runs_in_a_plain_interpreter(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", readme_example()],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=with_source_path(),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"egodyn\.vision\s+28\s+28\s+0\.\d+", done.stdout), done.stdout
    assert "yaw_rate_turn_direction" in done.stdout


@pytest.mark.slow
def test_the_example_notebook_runs_in_a_jupyter_kernel(tmp_path):
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": tmp_path}}
    )
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = with_source_path()["PYTHONPATH"]  # the kernel is a child process
    try:
        client.execute()
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH")
        else:
            os.environ["PYTHONPATH"] = saved
    printed = [
        "".join(o.get("text", "") for o in c.get("outputs", []))
        for c in notebook.cells
        if c.cell_type == "code"
    ]
    assert "event loop running: True" in printed[0]  # where asyncio.run() would refuse to start
    assert "egodyn.tools" in printed[1] and "yaw_rate_turn_direction" in printed[1], printed[1]
    assert (tmp_path / "kg_example" / "egodyn.tools" / "predictions.jsonl").exists()


def test_a_run_over_samples_reads_back_as_frames_with_its_coverage(tmp_path):
    data = write_egodyn_world(tmp_path / "data", n_clips=1)
    samples = suites.get("egodyn").load(str(data))
    vo = kg.run_graph("egodyn", "egodyn.vo", samples=samples, out=tmp_path / "vo")
    oracle = kg.run_graph("egodyn", "egodyn.oracle", samples=samples[:14], out=tmp_path / "oracle")
    frame = vo.predictions
    assert isinstance(frame, pd.DataFrame) and len(frame) == len(samples)
    assert {
        "sample_id",
        "question_id",
        "status",
        "answered",
        "answer",
        "ground_truth",
        "trace",
        "frames",
    } <= set(frame.columns)
    assert set(frame.status) == {"ok", "skipped"}  # VO answers only what it can measure
    metrics = vo.metrics
    assert metrics.index.name == "question_id" and "balanced_acc" in metrics.columns
    runs = kg.runs_frame([tmp_path / "vo", oracle])
    assert list(runs.graph) == ["egodyn.vo", "egodyn.oracle"]
    assert runs.answered[0] == frame.answered.sum() < runs.asked[0] == len(samples)
    assert runs.coverage[1] == 1.0 and runs.asked[1] == 14 and runs.balanced_acc[1] == 1.0


def test_inside_a_running_event_loop_a_run_still_finishes(tmp_path):
    import asyncio

    data = write_egodyn_world(tmp_path / "data", n_clips=1)

    async def in_a_notebook() -> kg.Run:
        return kg.run_graph("egodyn", "egodyn.oracle", data=data, out=tmp_path / "r", limit=14)

    run = asyncio.run(in_a_notebook())
    assert run.status == "completed" and len(run.predictions) == 14


def test_a_run_needs_data_or_samples_not_both(tmp_path):
    with pytest.raises(ValueError, match="exactly one of data="):
        kg.run_graph("egodyn", "egodyn.oracle", out=tmp_path / "r")
