"""End to end through a real OpenAI-compatible loopback server that reads only text (it cannot see images).

The gap it shows is the project's question in miniature: the same blind reader scores at the floor with
frames alone and far above it once the trajectory text or tool measurements are in the prompt.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.report import compare
from kinegraph.run import execute as run
from kinegraph.types import RunConfig
from tests.support.run_data import write_egodyn_world
from tests.support.text_reader_model import text_reader


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return write_egodyn_world(tmp_path_factory.mktemp("egodyn"), n_clips=20)


def _config(world, out, graph, server, cache, **options):
    return RunConfig(
        benchmark="egodyn",
        graph=graph,
        model="vllm:loopback-vlm",
        base_url=server.base_url,
        data=str(world),
        out_dir=str(out),
        concurrency=16,
        cache=str(cache),
        options=options,
    )


@pytest.mark.slow
def test_vision_vs_trajectory_gap_in_compare(world, tmp_path):
    cache = tmp_path / "cache.sqlite"
    with OpenAILoopback(responder=text_reader) as server:
        vision = run(_config(world, tmp_path / "vision", "egodyn.vision", server, cache), show_progress=False)
        n_vision = len(server.requests)
        traj = run(
            _config(world, tmp_path / "traj", "egodyn.trajectory", server, cache, encoding="timeseries"),
            show_progress=False,
        )
        assert len(server.requests) - n_vision == 280  # one request per question
        first = server.requests[0].body
        parts = first["messages"][0]["content"]
        assert parts[0]["type"] == "text" and sum(p["type"] == "image_url" for p in parts) == 10
        # a rerun of a finished run makes zero requests: everything is in predictions.jsonl / the cache
        before = len(server.requests)
        rerun = run(
            _config(world, tmp_path / "traj2", "egodyn.trajectory", server, cache, encoding="timeseries"),
            show_progress=False,
        )
        assert len(server.requests) == before and rerun.usage.cached_requests == 280
    assert vision.status_counts == {"ok": 280} and traj.status_counts == {"ok": 280}
    assert vision.decodes == 20  # one decode per clip, shared by its 14 questions
    assert traj.headline["balanced_acc"] > vision.headline["balanced_acc"] + 0.25

    comparison = compare([tmp_path / "vision", tmp_path / "traj"], n_boot=500)
    delta = comparison.deltas[1]
    assert delta.low > 0, "the CI of the gain excludes zero"
    assert delta.delta == pytest.approx(
        traj.headline["balanced_acc"] - vision.headline["balanced_acc"], abs=1e-3
    )

    report = tmp_path / "report.html"
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "kinegraph.cli",
            "compare",
            str(tmp_path / "vision"),
            str(tmp_path / "traj"),
            "--out",
            str(report),
        ],
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 0, cli.stderr
    assert "egodyn.trajectory" in cli.stdout and "baseline" in cli.stdout
    html = report.read_text()
    # plots as images; the confusion matrices as labelled tables (true rows, predicted columns)
    assert html.count("data:image/png;base64,") >= 3 and "Δ balanced_acc" in html and "predicted" in html


def test_grouped_mode_one_request_per_clip(world, tmp_path):
    with OpenAILoopback(responder=text_reader) as server:
        summary = run(
            _config(
                world,
                tmp_path / "g",
                "egodyn.trajectory",
                server,
                tmp_path / "c.sqlite",
                encoding="timeseries",
                grouped=True,
                text_only=True,
            ),
            show_progress=False,
        )
        # one request per clip; clips with identical prompts (two standing clips) are answered from the cache
        assert len(server.requests) + summary.usage.cached_requests == 20 and len(server.requests) >= 18
        text = server.requests[0].body["messages"][0]["content"][0]["text"]
        assert "Q14." in text and "A14. answer" in text and "images show" not in text
    assert summary.status_counts == {"ok": 280}
    assert summary.headline["balanced_acc"] > 0.5


def test_api_failures_become_recorded_errors(world, tmp_path):
    with OpenAILoopback(responder=lambda body: "left", faults=[500] * 10_000) as server:
        config = _config(world, tmp_path / "f", "egodyn.vision", server, tmp_path / "c.sqlite")
        from kinegraph.agents import get_backend

        backend = get_backend(
            "vllm:x", base_url=server.base_url, cache=False, max_retries=1, retry_base_s=0.01
        )
        summary = run(config.model_copy(update={"limit": 14}), backend=backend, show_progress=False)
    assert summary.status_counts == {"api_error": 14}
    assert summary.metrics["n_parsed"] == 0  # failures are never rewritten into answers
