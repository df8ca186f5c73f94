"""Numbers trusted blindly: negative usage tokens, calculator boxes of 1e300 px, and predictions adopted
after run.json is gone (class "Numbers trusted blindly")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kinegraph.agents import BackendError, GenerateRequest, get_backend, user_message
from kinegraph.agents.loopback import OpenAILoopback
from kinegraph.media import write_video
from kinegraph.tool_registry import DataRootMedia, MediaLimits, ToolError, default_registry
from tests.support.event_loop import run as run_coroutine
from tests.support.run_data import write_egodyn_hf, write_graph_module


@pytest.mark.parametrize("usage", [(-1_000_000_000, 10), (10, -5), (10**12, 1)])
def test_implausible_usage_is_refused_and_never_a_credit_to_the_budget(usage: tuple[int, int]) -> None:
    with OpenAILoopback(responder=lambda body: "left", usage=usage) as server:
        backend = get_backend(
            "openai:gpt-4o", base_url=server.base_url, api_key="k", cache=False, max_retries=0, budget_usd=1.0
        )
        request = GenerateRequest(messages=[user_message("Which way?")], max_tokens=16)
        with pytest.raises(BackendError, match="usage is refused"):
            run_coroutine(backend.generate(request))
    spent = backend.spending.spent_usd
    assert spent > 0, "a refused usage is charged as its reservation, not as a credit"
    assert backend.usage.cost_usd >= 0 and backend.usage.input_tokens >= 0


@pytest.fixture(scope="module")
def calculator_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("calc") / "data"
    frames = np.zeros((8, 48, 64, 3), np.uint8)
    for i, frame in enumerate(frames):
        frame[10:20, 5 + 3 * i : 15 + 3 * i] = 255  # a white block moving right
    write_video(root / "static.mp4", frames, fps=8.0)
    return root


@pytest.mark.parametrize(
    "box",
    [
        (0, 0, 1e300, 1e300),
        (-1e300, 0, 10, 10),
        (5, 10, 5, 20),
        (float("nan"), 0, 10, 10),
        (500, 500, 600, 600),
    ],
    ids=["huge", "far-left", "empty", "nan", "off-frame"],
)
def test_calculator_boxes_off_the_frame_are_refused(calculator_root: Path, box: tuple) -> None:
    media = DataRootMedia(MediaLimits(data_root=calculator_root))
    arguments = {
        "video_path": "static.mp4",
        "prior": "The width of the white block is 0.5 m.",
        "question": "What is the speed of the white block in m/s?",
        "prior_box_px": [5, 10, 15, 20],
        "target_boxes_px": [list(box)],
    }
    with pytest.raises(ToolError, match=r"target_boxes_px\[0\]"):
        default_registry().call("pixel_scale_calculator", arguments, media)


@pytest.mark.slow
def test_a_rerun_without_run_json_never_adopts_another_graphs_predictions(tmp_path: Path) -> None:
    graph = write_graph_module(tmp_path)
    data = write_egodyn_hf(tmp_path / "data", n_clips=1)
    out = tmp_path / "run"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(tmp_path)) if p),
    }

    def run(graph_name: str) -> subprocess.CompletedProcess[str]:
        args = [
            "run",
            "egodyn",
            "--graph",
            graph_name,
            "--data",
            str(data),
            "--out",
            str(out),
            "--no-progress",
        ]
        return subprocess.run(
            [sys.executable, "-m", "kinegraph.cli", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )

    assert run(graph).returncode == 0
    (out / "run.json").unlink()
    before = (out / "predictions.jsonl").read_text()
    other = run("egodyn.oracle")
    assert other.returncode == 2, other.stderr
    assert other.stderr.strip().splitlines()[-1].startswith(f"error: {out}: holds predictions of another run")
    assert (out / "predictions.jsonl").read_text() == before
    assert json.loads(before.splitlines()[0])["graph"] == graph
