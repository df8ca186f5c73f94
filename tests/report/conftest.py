"""Hand-built TAD run directories whose per-task deltas can be worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kinegraph.types import Prediction, RunConfig

N_SCENES = 30


def _prediction(scene: int, task: str, answer: str, graph: str) -> Prediction:
    metadata = {"task": task, "idx": scene, "answer_value": "A", "answer_kind": "letter"}
    return Prediction(
        sample_id=f"tad/{task}/{scene}",
        benchmark="tad",
        group=f"scene-{scene:02d}",
        question_id=task,
        graph=graph,
        raw=answer,
        answer=answer,
        ground_truth="A",
        metadata=metadata,
    )


def write_run(path: Path, graph: str, right: dict[str, set[int]]) -> Path:
    """A finished TAD run: one question per task and scene, answered "A" (right) on the given scenes."""
    path.mkdir(parents=True)
    config = RunConfig(benchmark="tad", graph=graph, out_dir=str(path))
    (path / "run.json").write_text(json.dumps({"config": config.model_dump()}))
    lines = [
        _prediction(scene, task, "A" if scene in scenes else "B", graph).model_dump_json()
        for task, scenes in right.items()
        for scene in range(N_SCENES)
    ]
    (path / "predictions.jsonl").write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def tad_pair(tmp_path: Path) -> tuple[Path, Path]:
    """mc_action: 3/30 right, then 27/30 (the other scenes): +0.8, clearly above 0.
    temp_ordering: right on the first half, then on the second half: +0, with scenes moving both ways.
    """
    first_half, second_half = set(range(15)), set(range(15, 30))
    base = write_run(tmp_path / "base", "tad.baseline", {"mc_action": {0, 1, 2}, "temp_ordering": first_half})
    tools = write_run(
        tmp_path / "tools", "tad.tcogmap", {"mc_action": set(range(3, 30)), "temp_ordering": second_half}
    )
    return base, tools
