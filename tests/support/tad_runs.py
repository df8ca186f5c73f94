"""Hand-built TAD run directories whose per-task deltas can be worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

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
