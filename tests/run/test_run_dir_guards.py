"""One run per directory, at a time: a busy directory, another run's directory, SIGTERM, a full disk."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys

import pytest

from kinegraph.run import execute as run
from kinegraph.rundir import RunDirTaken, read_predictions
from kinegraph.types import RunConfig
from tests.run.test_local import start_run_cli
from tests.support.run_data import write_egodyn_hf, write_graph_module


@pytest.fixture
def graph_spec(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    return write_graph_module(tmp_path)


@pytest.mark.slow
def test_a_second_run_into_a_busy_directory_is_refused_and_nothing_is_duplicated(tmp_path, graph_spec):
    proc, cmd, env, out = start_run_cli(
        tmp_path, graph_spec, n_clips=8, concurrency=1, slow_s=2.0, wait_lines=14
    )
    try:  # each group takes 2 s: the first run is busy for 16 s while the others start (about 3 s)
        others = [
            subprocess.Popen(cmd + extra, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for extra in ([], ["--retry-errors"])
        ]
        for other in others:
            _, refused = other.communicate(timeout=120)
            assert other.returncode == 2, refused
            assert refused.splitlines() == [
                f"error: {out}: another kinegraph run is writing here (pid {proc.pid}); "
                "wait for it to end or pass another --out"
            ]
    finally:
        _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    final = read_predictions(out / "predictions.jsonl")
    assert len(final) == 112 and len({p.sample_id for p in final}) == 112
    assert json.loads((out / "run.json").read_text())["totals"]["n_predictions"] == 112


def test_a_directory_holding_another_run_is_refused_before_anything_changes(tmp_path, graph_spec):
    data = write_egodyn_hf(tmp_path / "data", n_clips=2)
    config = RunConfig(benchmark="egodyn", graph=graph_spec, data=str(data), out_dir=str(tmp_path / "run"))
    assert run(config, show_progress=False).n_predictions == 28
    before = (
        (tmp_path / "run" / "predictions.jsonl").read_bytes(),
        (tmp_path / "run" / "run.json").read_bytes(),
    )
    with pytest.raises(RunDirTaken, match=f"graph '{graph_spec}' there, 'egodyn.oracle' asked"):
        run(config.model_copy(update={"graph": "egodyn.oracle"}), show_progress=False)
    with pytest.raises(RunDirTaken, match=r"options \{\} there, \{'num_frames': 2\} asked"):
        run(
            config.model_copy(update={"options": {"num_frames": 2}, "retry_errors": True}),
            show_progress=False,
        )
    after = (
        (tmp_path / "run" / "predictions.jsonl").read_bytes(),
        (tmp_path / "run" / "run.json").read_bytes(),
    )
    assert after == before
    resumed = run(
        config.model_copy(update={"concurrency": 3, "limit": 20, "use_cache": False}), show_progress=False
    )
    assert resumed.status == "completed" and resumed.n_new == 0


@pytest.mark.slow
def test_sigterm_stops_like_ctrl_c_and_the_run_resumes(tmp_path, graph_spec):
    proc, cmd, env, out = start_run_cli(
        tmp_path, graph_spec, n_clips=10, concurrency=1, slow_s=0.3, wait_lines=14
    )
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "rerun the same command to resume" in stderr, stderr
    assert "Traceback" not in stderr
    info = json.loads((out / "run.json").read_text())
    assert info["status"] == "interrupted" and 14 <= info["totals"]["n_predictions"] < 140
    assert subprocess.run(cmd, env=env, capture_output=True, timeout=120).returncode == 0
    assert len(read_predictions(out / "predictions.jsonl")) == 140


@pytest.mark.slow
def test_a_run_directory_that_cannot_be_written_ends_in_one_line(tmp_path, graph_spec):
    data = write_egodyn_hf(tmp_path / "data", n_clips=4)
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "kinegraph.cli", "run", "egodyn", "--graph", graph_spec]
    cmd += ["--data", str(data), "--out", str(out), "--no-progress"]
    limit = 16_000  # bytes per file: run.json, metrics and the export fit, predictions.jsonl does not

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))  # writes beyond it fail with EFBIG

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    full = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, preexec_fn=small_files)
    assert full.returncode == 1, full.stderr
    assert full.stderr.splitlines() == [f"error: {out / 'predictions.jsonl'}: File too large"]
    info = json.loads((out / "run.json").read_text())
    assert info["status"] == "failed"
    assert info["totals"]["n_predictions"] == len(read_predictions(out / "predictions.jsonl")) < 56
    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    final = read_predictions(out / "predictions.jsonl")
    assert len(final) == 56 and len({p.sample_id for p in final}) == 56


def test_ray_without_a_cluster_is_one_line_and_no_run_is_recorded(tmp_path):
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'kinegraph[ray]')")
    data = write_egodyn_hf(tmp_path / "data", n_clips=1)
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "kinegraph.cli", "run", "egodyn", "--graph", "egodyn.oracle"]
    cmd += ["--data", str(data), "--out", str(out), "--no-progress", "--ray", "auto"]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "error: --ray auto: Could not find any running Ray instance"
    )
    assert not (out / "run.json").exists()  # before: "completed" with 0 predictions
