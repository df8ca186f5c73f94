"""A sweep end to end on a synthetic EgoDyn set with two loopback models: run dirs, reports, resume."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.run.sweep import run_sweep
from kinegraph.rundir import read_predictions
from tests.support.run_data import write_egodyn_world, write_graph_module
from tests.support.text_reader_model import text_reader


@pytest.fixture
def sweep_setup(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = write_graph_module(tmp_path)
    write_egodyn_world(tmp_path / "egodyn", n_clips=3)
    return tmp_path, graph


def sweep_file(tmp_path, graph, reader_url, blind_url):
    path = tmp_path / "sweep.yaml"
    path.write_text(
        textwrap.dedent(
            f"""
            benchmarks:
              egodyn: {{data: egodyn}}
              quantiphy: {{data: no-such-folder}}
            graphs:
              - graph: {graph}
                benchmarks: [egodyn, quantiphy]
              - graph: egodyn.trajectory
                options: {{encoding: [summary, timeseries]}}
            models:
              - {{model: "vllm:reader", base_url: "{reader_url}"}}
              - {{model: "vllm:blind", base_url: "{blind_url}"}}
            run: {{concurrency: 8, cache: cache.sqlite}}
            """
        )
    )
    return path


@pytest.mark.slow
def test_sweep_runs_every_combination_reports_and_resumes(sweep_setup):
    tmp_path, graph = sweep_setup
    out = tmp_path / "out"
    with (
        OpenAILoopback(responder=text_reader) as reader,
        OpenAILoopback(responder=lambda body: "I cannot tell.") as blind,
    ):
        path = sweep_file(tmp_path, graph, reader.base_url, blind.base_url)
        result = run_sweep(path, out, show_progress=False, n_boot=200)
        assert len(reader.requests) == len(blind.requests) == 2 * 42  # two encodings, 42 questions each

        by_name = {f"{r.benchmark}/{r.name}": r for r in result.runs}
        assert list(by_name) == [
            "egodyn/first_option_graph-build",
            "quantiphy/first_option_graph-build",
            "egodyn/egodyn.trajectory__encoding=summary__vllm-reader",
            "egodyn/egodyn.trajectory__encoding=summary__vllm-blind",
            "egodyn/egodyn.trajectory__encoding=timeseries__vllm-reader",
            "egodyn/egodyn.trajectory__encoding=timeseries__vllm-blind",
        ]
        failed = by_name["quantiphy/first_option_graph-build"]
        assert failed.status == "failed" and "no-such-folder" in failed.error  # recorded; the sweep went on
        egodyn_runs = [r for r in result.runs if r.benchmark == "egodyn"]
        assert all(r.status == "completed" and r.n_predictions == 42 for r in egodyn_runs)
        reader_ts = by_name["egodyn/egodyn.trajectory__encoding=timeseries__vllm-reader"].headline
        blind_ts = by_name["egodyn/egodyn.trajectory__encoding=timeseries__vllm-blind"].headline
        assert reader_ts["balanced_acc"] > blind_ts["balanced_acc"]
        for r in egodyn_runs:
            assert len(read_predictions(out / "egodyn" / r.name / "predictions.jsonl")) == 42

        page = (out / "report.html").read_text()
        assert page.count("<h2>egodyn</h2>") == 1 and "egodyn/report.html" in page
        assert "egodyn.trajectory[encoding=timeseries] · vllm:reader" in page and "failed" in page
        assert "data:image/png;base64," in (out / "egodyn" / "report.html").read_text()
        assert not (out / "quantiphy" / "report.html").exists()  # no run of it has predictions
        markdown = (out / "report.md").read_text()
        assert "## egodyn" in markdown and "baseline" in markdown
        assert json.loads((out / "sweep.json").read_text())["runs"][1]["status"] == "failed"

        # the CLI on the same folder resumes: nothing is asked again, and the failed run still fails
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
        cli = subprocess.run(
            [
                sys.executable,
                "-m",
                "kinegraph.cli",
                "sweep",
                str(path),
                "--out",
                str(out),
                "--no-progress",
                "--n-boot",
                "100",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert len(reader.requests) == len(blind.requests) == 84
    assert cli.returncode == 1 and "1 run(s) failed" in cli.stderr
    assert "== egodyn/egodyn.trajectory__encoding=summary__vllm-blind" in cli.stderr
    printed = json.loads(cli.stdout)
    assert [r["status"] for r in printed["runs"]].count("completed") == 5
    info = json.loads((out / "egodyn" / "first_option_graph-build" / "run.json").read_text())
    assert info["sessions"] == 2 and info["totals"]["n_new"] == 0
