"""Run directories as pandas frames: one row per sample, per question, per run.

`load_run(dir).predictions` holds what `predictions.jsonl` holds, flattened (the sample's metadata keys
become columns); `.metrics` is `metrics.json` per question where the suite scores per question, else one
row of its scalar numbers; `runs_frame(dirs)` puts runs side by side with their coverage.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd

from kinegraph.errors import DataError
from kinegraph.rundir import METRICS, PREDICTIONS, RUN_JSON, read_json, read_predictions
from kinegraph.types import Prediction, Status

#: The per-sample columns every predictions frame has, in this order (metadata keys follow).
PREDICTION_COLUMNS = (
    "sample_id",
    "group",
    "question_id",
    "graph",
    "model",
    "status",
    "answered",
    "answer",
    "ground_truth",
    "raw",
    "error",
    "trace",
    "frames",
    "latency_s",
    "cost_usd",
    "input_tokens",
    "output_tokens",
)


def answered(p: Prediction) -> bool:
    """Whether the graph gave an answer that was scored as one (status ok and an answer parsed)."""
    return p.status == Status.ok and p.answer is not None


def _row(p: Prediction) -> dict[str, Any]:
    row: dict[str, Any] = {
        "sample_id": p.sample_id,
        "group": p.group,
        "question_id": p.question_id,
        "graph": p.graph,
        "model": p.model,
        "status": p.status.value,
        "answered": answered(p),
        "answer": p.answer,
        "ground_truth": p.ground_truth,
        "raw": p.raw,
        "error": p.error,
        "trace": p.trace,
        "frames": p.frames.indices if p.frames is not None else None,
        "latency_s": p.latency_s,
        "cost_usd": p.usage.cost_usd,
        "input_tokens": p.usage.input_tokens,
        "output_tokens": p.usage.output_tokens,
    }
    for key, value in p.metadata.items():
        row.setdefault(key, value)  # a metadata key never hides a prediction's own field
    return row


class Run:
    """One run directory read back: `.predictions` and `.metrics` frames, `.info` (run.json), `.headline`."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        info = read_json(self.path / RUN_JSON)
        if info is None:
            raise DataError("not a run directory (no run.json)", path=self.path)
        self.info: dict[str, Any] = info

    def __repr__(self) -> str:
        return f"Run({str(self.path)!r}, graph={self.graph!r}, status={self.status!r})"

    @property
    def config(self) -> dict[str, Any]:
        return self.info.get("config", {})

    @property
    def graph(self) -> str:
        return str(self.config.get("graph"))

    @property
    def status(self) -> str:
        return str(self.info.get("status"))

    @property
    def headline(self) -> dict[str, float]:
        """The suite's headline numbers, as `kinegraph run` printed them."""
        return dict(self.info.get("totals", {}).get("headline") or {})

    @cached_property
    def records(self) -> list[Prediction]:
        """The predictions as typed records (what the frame is made of)."""
        return read_predictions(self.path / PREDICTIONS)

    @cached_property
    def predictions(self) -> pd.DataFrame:
        """One row per sample: status, answered, answer, truth, raw text, trace, frames, usage, metadata."""
        rows = [_row(p) for p in self.records]
        frame = pd.DataFrame(rows)
        return frame if rows else pd.DataFrame(columns=list(PREDICTION_COLUMNS))

    @cached_property
    def metrics(self) -> pd.DataFrame:
        """metrics.json per question (index `question_id`) where the suite scores per question, else one
        row of its scalar numbers (nested keys joined by '.'); confusion matrices stay in `metrics_json`."""
        data = self.metrics_json
        per_question = data.get("per_question")
        if isinstance(per_question, dict) and per_question:
            rows = {q: _scalars(v) for q, v in per_question.items() if isinstance(v, dict)}
            frame = pd.DataFrame.from_dict(rows, orient="index")
            frame.index.name = "question_id"
            return frame
        return pd.DataFrame([_scalars(data)])

    @cached_property
    def metrics_json(self) -> dict[str, Any]:
        """metrics.json as written (an empty dict before the run has been scored)."""
        return read_json(self.path / METRICS) or {}

    def coverage(self) -> tuple[int, int]:
        """(answered, asked): how many samples got a scored answer out of how many the run holds."""
        return sum(map(answered, self.records)), len(self.records)


def _scalars(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """The numbers and strings of a nested dict, keys joined by '.' (lists such as matrices left out)."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_scalars(value, f"{name}."))
        elif isinstance(value, int | float | str | bool) or value is None:
            out[name] = value
    return out


def load_run(path: str | Path) -> Run:
    """A run directory (what `kinegraph run --out` or `kg.run(out=)` wrote), read back."""
    return Run(path)


def runs_frame(paths: Iterable[str | Path | Run]) -> pd.DataFrame:
    """One row per run: benchmark, graph, model, status, answered / asked, coverage, cost, headline."""
    rows = []
    for item in paths:
        run = item if isinstance(item, Run) else Run(item)
        done, asked = run.coverage()
        totals = run.info.get("totals", {})
        rows.append(
            {
                "run": run.path.name,
                "path": str(run.path),
                "benchmark": run.config.get("benchmark"),
                "graph": run.graph,
                "model": run.config.get("model"),
                "status": run.status,
                "answered": done,
                "asked": asked,
                "coverage": done / asked if asked else float("nan"),
                "cost_usd": totals.get("usage", {}).get("cost_usd"),
                "elapsed_s": totals.get("elapsed_s"),
                **run.headline,
            }
        )
    return pd.DataFrame(rows)
