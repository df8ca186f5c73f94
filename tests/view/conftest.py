"""Two hand-built EgoDyn-style runs over the same clips, with real frame files the viewer decodes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kinegraph.media import write_image
from kinegraph.types import FrameRecord, Prediction, RunConfig, Status

QUESTIONS = ("yaw_rate_turn_direction", "speed_change")
TRUTHS = {"yaw_rate_turn_direction": "left", "speed_change": "accelerating"}
N_CLIPS = 3
N_FRAMES = 8


def write_clip(folder: Path, seed: int) -> list[Path]:
    """N_FRAMES small frames with a moving bar, as PNG files in `folder`."""
    folder.mkdir(parents=True)
    paths = []
    for i in range(N_FRAMES):
        rgb = np.full((90, 160, 3), (60 + 20 * seed, 120, 170), np.uint8)
        rgb[40:70, 10 + 15 * i : 30 + 15 * i] = (240, 200, 40)
        paths.append(folder / f"frame_{i:03d}.png")
        write_image(paths[-1], rgb)
    return paths


def prediction(clip: int, question: str, answer: str | None, graph: str, frames: Path) -> Prediction:
    """One EgoDyn-style prediction: a prompt, a tool reading, the raw and parsed answer."""
    indices = [0, 3, 7]
    status = Status.ok if answer is not None else Status.parse_failure
    return Prediction(
        sample_id=f"clip_{clip:02d}/{question}",
        benchmark="egodyn",
        group=f"clip_{clip:02d}",
        question_id=question,
        graph=graph,
        model="reader:text",
        raw=f"The vehicle is {answer}." if answer else "I cannot tell from these frames.",
        answer=answer,
        ground_truth=TRUTHS[question],
        status=status,
        error=None if status == Status.ok else "no label in the answer",
        trace=[
            {"node": "measure_ego_motion", "yaw_rate_rad_s": 0.123456789, "speed_mps": 8.04999999},
            {"node": "answer_question", "prompt": f"Question: {question}? Readings: yaw 0.12 rad/s."},
        ],
        frames=FrameRecord(indices=indices, timestamps_s=[i / 10 for i in indices], source=str(frames)),
    )


def write_run(path: Path, graph: str, answers: dict[tuple[int, str], str | None], clips: Path) -> Path:
    """A run directory: run.json and one prediction per (clip, question)."""
    path.mkdir(parents=True)
    config = RunConfig(benchmark="egodyn", graph=graph, model="reader:text", out_dir=str(path))
    (path / "run.json").write_text(json.dumps({"config": config.model_dump()}))
    lines = [
        prediction(clip, q, answer, graph, clips / f"clip_{clip:02d}" / "frame_000.png").model_dump_json()
        for (clip, q), answer in answers.items()
    ]
    (path / "predictions.jsonl").write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def two_runs(tmp_path: Path) -> list[Path]:
    """`vision` (the model alone: wrong or unparsed) and `tools` (right): they disagree on some samples."""
    clips = tmp_path / "clips"
    for clip in range(N_CLIPS):
        write_clip(clips / f"clip_{clip:02d}", clip)
    keys = [(clip, q) for clip in range(N_CLIPS) for q in QUESTIONS]
    alone = {k: (None if k[0] == 2 else "right" if k[1] == QUESTIONS[0] else TRUTHS[k[1]]) for k in keys}
    tools = {k: TRUTHS[k[1]] for k in keys}
    return [
        write_run(tmp_path / "vision", "egodyn.vision", alone, clips),
        write_run(tmp_path / "tools", "egodyn.tools", tools, clips),
    ]
