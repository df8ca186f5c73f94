"""Runs that fail and say they succeeded: a run that answered nothing or whose failed share passes
`--max-error-rate` ends with one loud line and exit 1, and run.json says why."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.run_data import write_egodyn_hf, write_graph_module


def kinegraph(*args: str, path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if path is not None:  # a user graph module beside the data
        env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), str(path)) if p)
    return subprocess.run(
        [sys.executable, "-m", "kinegraph.cli", *args], capture_output=True, text=True, env=env, timeout=300
    )


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens there once the socket is closed


def test_a_wrong_base_url_fails_the_run(tmp_path: Path) -> None:
    data = write_egodyn_hf(tmp_path / "data", n_clips=2)
    out = tmp_path / "run"
    result = kinegraph(
        "run", "egodyn", "--graph", "egodyn.vision", "--model", "vllm:m", "--data", str(data),
        "--out", str(out), "--base-url", f"http://127.0.0.1:{closed_port()}/v1", "--no-progress",
        "--model-option", "max_retries=0", "--no-cache",
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: run failed: no question was answered (28 api_error)"), last
    info = json.loads((out / "run.json").read_text())
    assert info["status"] == "failed" and info["failure"].startswith("no question was answered")


@pytest.mark.slow
def test_an_error_rate_over_the_threshold_fails_the_run_and_a_higher_one_lets_it_pass(tmp_path: Path) -> None:
    graph = write_graph_module(tmp_path)
    data = write_egodyn_hf(tmp_path / "data", n_clips=4, corrupt=(1, 2, 3))  # 3 of 4 clips unreadable
    args = ["run", "egodyn", "--graph", graph, "--data", str(data), "--no-progress"]
    failed = kinegraph(*args, "--out", str(tmp_path / "a"), path=tmp_path)
    assert failed.returncode == 1, failed.stderr
    assert "42 of 56 predictions failed (75%, over --max-error-rate 50%)" in failed.stderr
    info = json.loads((tmp_path / "a" / "run.json").read_text())
    assert info["status"] == "failed" and "42 of 56" in info["failure"]
    allowed = kinegraph(*args, "--out", str(tmp_path / "b"), "--max-error-rate", "0.8", path=tmp_path)
    assert allowed.returncode == 0, allowed.stderr
    assert json.loads((tmp_path / "b" / "run.json").read_text())["status"] == "completed"
