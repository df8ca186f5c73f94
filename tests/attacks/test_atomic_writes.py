"""Writes that are not atomic: a kill while `--out` is written leaves the previous file; a full disk or
`--out` naming a directory is one line and exit 2 (class "Writes that are not atomic").

The full disk is the kernel's own: under a file-size limit (RLIMIT_FSIZE; Python ignores SIGXFSZ) a write
past it fails with EFBIG exactly mid-write, as ENOSPC would."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

ROWS = [
    {"clip_id": f"clip_{i}", "question_id": "speed_trend", "oracle_label": "steady", "model_answer": "steady"}
    for i in range(40)
]
PREVIOUS = '{"previous": "a good report"}\n'


def limited(max_file_bytes: int) -> Callable[[], None]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    return limit


def kinegraph(*args: str, preexec: Callable[[], None] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # the only file written is the one under test
    return subprocess.run(
        [sys.executable, "-m", "kinegraph.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=preexec,
        timeout=120,
    )


@pytest.fixture
def predictions(tmp_path: Path) -> Path:
    path = tmp_path / "pred.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


@pytest.mark.slow
def test_a_kill_at_any_moment_leaves_the_previous_report_or_the_new_one(
    predictions: Path, tmp_path: Path
) -> None:
    """SIGKILL at eight moments spread over the command's life: never a torn or empty file."""
    out = tmp_path / "metrics.json"
    args = [sys.executable, "-m", "kinegraph.cli", "evaluate", "egodyn", str(predictions), "--out", str(out)]
    started = time.monotonic()
    assert subprocess.run(args, capture_output=True, timeout=120).returncode == 0
    lifetime_s = time.monotonic() - started
    for i in range(8):
        out.write_text(PREVIOUS)
        process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            process.wait(timeout=lifetime_s * (0.6 + 0.06 * i))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)
        text = out.read_text()
        assert text == PREVIOUS or json.loads(text)["n_total"] == len(ROWS), text


def test_a_full_disk_is_one_line_and_keeps_the_previous_report(predictions: Path, tmp_path: Path) -> None:
    out = tmp_path / "metrics.json"
    out.write_text(PREVIOUS)
    result = kinegraph("evaluate", "egodyn", str(predictions), "--out", str(out), preexec=limited(64))
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [f"error: {out}: cannot write (File too large)"]
    assert out.read_text() == PREVIOUS
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []  # nothing left behind


def test_out_naming_a_directory_is_one_line(predictions: Path, tmp_path: Path) -> None:
    out = tmp_path / "reports"
    out.mkdir()
    result = kinegraph("evaluate", "egodyn", str(predictions), "--out", str(out))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"error: {out}: cannot write (it is a directory; name a file)"
    ]


@pytest.mark.slow
def test_a_full_disk_keeps_the_previous_calculator_csv(quantiphy_world: Path, tmp_path: Path) -> None:
    """The QuantiPhy calculator's prediction CSV was written row by row into the truncated file."""
    out = tmp_path / "calculator.csv"
    out.write_text(PREVIOUS)
    code = (
        "import sys; from kinegraph.evaluators.quantiphy_calculator import predict; "
        "predict(__import__('pathlib').Path(sys.argv[1]), 'exact', __import__('pathlib').Path(sys.argv[2]))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(quantiphy_world), str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        preexec_fn=limited(256),
        timeout=120,
    )
    assert result.returncode != 0 and "cannot write (File too large)" in result.stderr
    assert out.read_text() == PREVIOUS
