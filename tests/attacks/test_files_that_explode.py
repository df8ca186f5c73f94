"""Bytes that crash, from files: a 100k-deep YAML, a billion-laughs sweep file, a tiny grid naming a
million runs, `data check` on a FIFO and on /dev/zero, and a layout with two problems. Each
command runs in a subprocess with a memory limit and a timeout, so a tree that fails them fails boundedly."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.run_data import write_egodyn_hf

MEMORY_BYTES = 3 * 2**30


def kinegraph(*args: str, timeout_s: float = 60) -> subprocess.CompletedProcess[str] | None:
    """The CLI's result, or None when it ran past `timeout_s` (a hang)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))

    try:
        return subprocess.run(
            [sys.executable, "-m", "kinegraph.cli", *args],
            capture_output=True, text=True, env=dict(os.environ), preexec_fn=limit, timeout=timeout_s,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return None


def one_error_line(result: subprocess.CompletedProcess[str] | None) -> str:
    assert result is not None, "it hung"
    assert result.returncode == 2, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines[-5:]
    return lines[0]


def laughs(depth: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, depth + 1)]
    return "\n".join([*lines, "benchmarks: {egodyn: {data: d}}", "graphs: [*a9]", "models: [vllm:m]"]) + "\n"


GRID = """benchmarks: {egodyn: {data: d}}
models: [vllm:m]
graphs:
  - graph: egodyn.vision
    options: {a: [1,2,3,4,5,6,7,8,9,10], b: [1,2,3,4,5,6,7,8,9,10], c: [1,2,3,4,5,6,7,8,9,10],
              d: [1,2,3,4,5,6,7,8,9,10], e: [1,2,3,4,5,6,7,8,9,10], f: [1,2,3,4,5,6,7,8,9,10],
              g: [1,2,3,4,5,6,7,8,9,10], h: [1,2,3,4,5,6,7,8,9,10]}
"""


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("benchmarks: " + "[" * 100_000 + "]" * 100_000 + "\n", "nested deeper than the limit of 64 levels"),
        (laughs(), "expands to more than the limit of 200,000 values with its aliases followed"),
        (GRID, "the option grid has 100,000,000 combinations (10 x 10 x 10 x 10 x 10 x 10 x 10 x 10)"),
    ],
    ids=["deep", "billion-laughs", "grid"],
)
def test_a_sweep_file_that_explodes_is_refused_in_one_line(tmp_path: Path, text: str, fragment: str) -> None:
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(text)
    line = one_error_line(kinegraph("sweep", str(sweep), "--out", str(tmp_path / "out"), timeout_s=45))
    assert line.startswith(f"error: {sweep}") and fragment in line, line
    assert not (tmp_path / "out").exists()


@pytest.fixture
def layout(tmp_path: Path) -> Path:
    """An EgoDyn layout of three clips."""
    return write_egodyn_hf(tmp_path / "egodyn", n_clips=3)


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_data_check_reads_special_files_with_bounds(layout: Path, special: str) -> None:
    qa = layout / "carla_clips" / "qa.jsonl"
    qa.unlink()
    if special == "fifo":
        os.mkfifo(qa)  # nobody ever writes to it
    else:
        qa.symlink_to(special)
    result = kinegraph("data", "check", "egodyn", str(layout), timeout_s=30)
    assert result is not None, "data check hung"
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    kind = "a FIFO" if special == "fifo" else "a character device"
    assert f"{qa}  cannot read ({kind}, not a regular file)" in result.stdout, result.stdout


def test_data_check_reports_every_problem_of_a_layout(layout: Path) -> None:
    """A missing video and a malformed qa.jsonl row are two lines, not the first alone."""
    videos = sorted((layout / "carla_videos_transferred").iterdir())
    videos[1].unlink()
    qa = layout / "carla_clips" / "qa.jsonl"
    lines = qa.read_text().splitlines()
    lines[5], lines[30] = lines[5][:30], "[1, 2]"
    qa.write_text("\n".join(lines) + "\n")
    result = kinegraph("data", "check", "egodyn", str(layout), timeout_s=120)
    assert result is not None and result.returncode == 2, result and result.stderr
    errors = [line for line in result.stdout.splitlines() if line.startswith("error")]
    assert len(errors) == 3, result.stdout
    assert f"{qa}:6 " in errors[0] and "not valid JSON" in errors[0]
    assert f"{qa}:31 " in errors[1] and "expected a JSON object, got list" in errors[1]
    assert f"{videos[1]} " in errors[2] and "missing" in errors[2]
    assert "3 problem(s) in the egodyn layout" in result.stderr
