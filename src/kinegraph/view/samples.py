"""Runs as the viewer's JSON: one entry per sample, each run's record of it side by side."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kinegraph.errors import DataError
from kinegraph.rundir import PREDICTIONS, RUN_JSON, read_json, read_predictions
from kinegraph.types import Prediction


@dataclass(frozen=True)
class RunView:
    """One run directory as the viewer shows it: its name, graph, model and predictions by sample id."""

    name: str
    path: Path
    graph: str | None
    model: str | None
    predictions: dict[str, Prediction]


def load_views(dirs: Sequence[Path]) -> list[RunView]:
    """Each run directory read once; a DataError in one line for one with no predictions."""
    views = []
    names = _names(dirs)
    for name, path in zip(names, dirs, strict=True):
        predictions = read_predictions(path / PREDICTIONS)
        if not predictions:
            raise DataError("not a run directory (no predictions.jsonl with predictions)", path=path)
        config = (read_json(path / RUN_JSON) or {}).get("config") or {}
        first = predictions[0]
        views.append(
            RunView(
                name=name,
                path=path,
                graph=config.get("graph") or first.graph,
                model=config.get("model") or first.model,
                predictions={p.sample_id: p for p in predictions},
            )
        )
    return views


def _names(dirs: Sequence[Path]) -> list[str]:
    """Each run's folder name, with its parent's name where two folders share one."""
    names = [d.resolve().name for d in dirs]
    return [
        f"{d.resolve().parent.name}/{n}" if names.count(n) > 1 else n
        for d, n in zip(dirs, names, strict=True)
    ]


def prompts(p: Prediction) -> list[str]:
    """The prompts the graph's nodes sent, in the order of its trace."""
    return [str(step["prompt"]) for step in p.trace if isinstance(step, dict) and step.get("prompt")]


def _shown(value: Any) -> str | None:
    """An answer or truth as one comparable string (None stays None)."""
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value)


def _record(p: Prediction) -> dict[str, Any]:
    frames = p.frames
    return {
        "status": p.status.value,
        "answer": _shown(p.answer),
        "truth": _shown(p.ground_truth),
        "raw": p.raw,
        "error": p.error,
        "prompts": prompts(p),
        "trace": [{k: v for k, v in step.items() if k != "prompt"} for step in p.trace],
        "frames": {
            "indices": frames.indices if frames else [],
            "timestamps_s": frames.timestamps_s if frames else [],
            "source": frames.source if frames else None,
        },
        "warnings": p.warnings,
    }


def samples_payload(views: Sequence[RunView]) -> dict[str, Any]:
    """Runs and samples for the page: a sample disagrees when two runs that answered it differ."""
    order: dict[str, Prediction] = {}
    for view in views:
        for sample_id, p in view.predictions.items():
            order.setdefault(sample_id, p)
    samples = []
    for sample_id, first in order.items():
        records = [view.predictions.get(sample_id) for view in views]
        answers = {_shown(p.answer) for p in records if p is not None and p.answer is not None}
        samples.append(
            {
                "id": sample_id,
                "question": first.question_id or first.group or "",
                "truth": _shown(first.ground_truth),
                "disagree": len(answers) > 1,
                "runs": [_record(p) if p is not None else None for p in records],
            }
        )
    runs = [{"name": v.name, "graph": v.graph, "model": v.model} for v in views]
    return {"runs": runs, "samples": samples}
