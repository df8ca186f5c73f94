"""The runner end to end: run directory contract, failing samples, resume after SIGKILL, Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest

from kinegraph.run import execute as run
from kinegraph.rundir import read_predictions
from kinegraph.types import RunConfig
from tests.support.run_data import write_egodyn_hf, write_graph_module


@pytest.fixture
def graph_spec(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    return write_graph_module(tmp_path)


def test_run_directory_contract_and_failing_sample(tmp_path, graph_spec):
    data = write_egodyn_hf(tmp_path / "data", n_clips=4, corrupt=(2,))
    out = tmp_path / "run"
    summary = run(
        RunConfig(benchmark="egodyn", graph=graph_spec, data=str(data), out_dir=str(out)), show_progress=False
    )
    predictions = read_predictions(out / "predictions.jsonl")
    assert len(predictions) == 56 and len({p.sample_id for p in predictions}) == 56
    statuses = Counter(p.status for p in predictions)
    assert statuses == {"ok": 42, "input_error": 14}  # the corrupt clip: recorded, not fatal
    bad = next(p for p in predictions if p.status == "input_error")
    assert "TST_Town-2" in bad.error and bad.answer is None
    good = next(p for p in predictions if p.status == "ok")
    assert good.frames.indices == [0, 4, 7, 11] and good.frames.timestamps_s == [0.0, 1.0, 1.75, 2.75]
    assert summary.decodes == 4 and summary.groups == 4  # one decode per clip
    info = json.loads((out / "run.json").read_text())
    assert info["status"] == "completed" and info["totals"]["n_predictions"] == 56
    assert info["totals"]["decodes_per_group"] == 1.0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["n_total"] == 56 and metrics["n_parsed"] == 42
    # official export: every answer is the first option; clip 0's oracle is the first option too
    official = [
        json.loads(line) for line in (out / "official" / "egodyn_predictions.jsonl").read_text().splitlines()
    ]
    assert len(official) == 56
    clip0 = [r for r in official if r["clip_id"].startswith("TST_Town-0")]
    assert len(clip0) == 14 and all(r["model_answer"] == r["oracle_label"] for r in clip0)
    assert all(r["model_answer"] == "" for r in official if r["clip_id"].startswith("TST_Town-2"))


def test_rerun_resumes_without_duplicates(tmp_path, graph_spec):
    data = write_egodyn_hf(tmp_path / "data", n_clips=3)
    config = RunConfig(
        benchmark="egodyn", graph=graph_spec, data=str(data), out_dir=str(tmp_path / "run"), limit=20
    )
    assert run(config, show_progress=False).n_new == 20
    again = run(config.model_copy(update={"limit": None}), show_progress=False)
    assert again.n_new == 22 and again.n_predictions == 42
    assert json.loads((tmp_path / "run" / "run.json").read_text())["sessions"] == 2


def start_run_cli(tmp_path, graph_spec, n_clips, concurrency, slow_s, wait_lines):
    """Start `kinegraph run` in a subprocess with slow groups; return once `wait_lines` predictions exist."""
    data = write_egodyn_hf(tmp_path / "data", n_clips=n_clips)
    out = tmp_path / "run"
    cmd = [
        sys.executable,
        "-m",
        "kinegraph.cli",
        "run",
        "egodyn",
        "--graph",
        graph_spec,
        "--data",
        str(data),
        "--out",
        str(out),
        "--concurrency",
        str(concurrency),
        "--no-progress",
    ]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path]),
        "SLOW_GROUP_S": str(slow_s),
    }
    # Ctrl-C from a terminal: the child gets SIGINT's default action, whatever this process inherited (a
    # test run started in the background, or a library of an earlier test, may leave SIGINT ignored)
    proc = subprocess.Popen(
        cmd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    log = out / "predictions.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not log.exists() or log.read_text().count("\n") < wait_lines):
        time.sleep(0.05)
    return proc, cmd, {**env, "SLOW_GROUP_S": "0"}, out


@pytest.mark.slow
def test_sigkill_midway_then_rerun_gives_one_prediction_per_sample(tmp_path, graph_spec):
    proc, cmd, env, out = start_run_cli(
        tmp_path, graph_spec, n_clips=12, concurrency=2, slow_s=0.4, wait_lines=28
    )
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    log = out / "predictions.jsonl"
    partial = read_predictions(log)
    assert 28 <= len(partial) < 168, "killed midway"
    with log.open("a") as handle:  # what a kill in the middle of a write leaves behind
        handle.write('{"sample_id": "qa_11_speed_tr')
    result = subprocess.run(cmd, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    final = read_predictions(log)
    assert len(final) == 168 and len({p.sample_id for p in final}) == 168


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_resumes(tmp_path, graph_spec):
    proc, cmd, env, out = start_run_cli(
        tmp_path, graph_spec, n_clips=10, concurrency=1, slow_s=1.0, wait_lines=14
    )
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "rerun the same command to resume" in stderr
    assert "Traceback" not in stderr
    assert json.loads((out / "run.json").read_text())["status"] == "interrupted"
    assert subprocess.run(cmd, env=env, capture_output=True).returncode == 0
    assert len(read_predictions(out / "predictions.jsonl")) == 140


def test_graph_needing_a_model_without_one_is_a_clear_error(tmp_path):
    data = write_egodyn_hf(tmp_path / "data", n_clips=1)
    with pytest.raises(ValueError, match="needs a model"):
        run(RunConfig(benchmark="egodyn", graph="egodyn.vision", data=str(data), out_dir=str(tmp_path / "r")))


def test_a_run_leaves_the_garbage_collector_as_it_found_it(tmp_path, graph_spec):
    import gc

    before = gc.get_threshold()
    data = write_egodyn_hf(tmp_path / "data", n_clips=2)
    config = RunConfig(benchmark="egodyn", graph=graph_spec, data=str(data), out_dir=str(tmp_path / "r"))
    assert run(config, show_progress=False).status == "completed"
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_overlapping_runs_restore_the_collector_once_the_last_one_ends():
    import gc

    from kinegraph.run.local import collect_garbage_rarely

    before = gc.get_threshold()
    first, second = collect_garbage_rarely(), collect_garbage_rarely()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the first run ends while the second still runs
    assert gc.get_threshold()[0] == 50_000
    second.__exit__(None, None, None)
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
