"""A finished (or partial) run directory, read back for comparison."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from kinegraph.errors import DataError
from kinegraph.graphs import graphs
from kinegraph.rundir import METRICS, PREDICTIONS, RUN_JSON, read_json, read_predictions
from kinegraph.suites import GroupStats, Suite, samples_from_predictions, suites
from kinegraph.types import DEFAULT_ROLE, FAILED_STATUSES, Prediction, Usage, group_warnings, usage_per_role


@dataclass
class RunData:
    path: Path
    info: dict[str, Any]
    predictions: list[Prediction]

    @classmethod
    def load(cls, path: str | Path) -> RunData:
        path = Path(path)
        info = read_json(path / RUN_JSON)
        if info is None:
            raise DataError("not a run directory (no run.json)", path=path)
        predictions = read_predictions(path / PREDICTIONS)
        if not predictions:
            raise DataError("run has no predictions", path=path / PREDICTIONS)
        return cls(path, info, predictions)

    @property
    def config(self) -> dict[str, Any]:
        return self.info.get("config", {})

    @property
    def name(self) -> str:
        model, options = self.config.get("model"), self.config.get("options") or {}
        settings = ",".join(f"{k}={v}" for k, v in sorted(options.items()))
        graph = f"{self.config.get('graph')}" + (f"[{settings}]" if settings else "")
        return graph + (f" · {model}" if model else "")

    @property
    def non_official(self) -> bool:
        return non_official(self.config.get("graph"), self.config.get("options"))

    @property
    def label(self) -> str:
        """The name as the reports' tables and figures show it: a non-official setting says so."""
        return labelled(self.name, self.config.get("graph"), self.config.get("options"))

    @property
    def suite(self) -> Suite:
        return suites.get(self.config["benchmark"])

    @cached_property
    def metrics(self) -> dict[str, Any]:
        stored = read_json(self.path / METRICS)
        return (
            stored
            if stored is not None
            else self.suite.score(samples_from_predictions(self.predictions), self.predictions)
        )

    @cached_property
    def group_stats(self) -> GroupStats:
        return self.suite.group_stats(samples_from_predictions(self.predictions), self.predictions)

    @cached_property
    def item_stats(self) -> dict[str, GroupStats]:
        return self.suite.item_stats(samples_from_predictions(self.predictions), self.predictions)

    @cached_property
    def usage(self) -> Usage:
        total = Usage()
        for p in self.predictions:
            total = total + p.usage
        return total

    @cached_property
    def usage_by_role(self) -> dict[str, Usage]:
        """Usage per model role (a one-model run: all on `backend`)."""
        return usage_per_role(self.predictions)

    @property
    def role_models(self) -> dict[str, str]:
        """The model of each role as run.json records it (runs from before roles: `--model` on `backend`)."""
        recorded = self.info.get("role_models")
        if isinstance(recorded, dict):
            return {str(k): str(v) for k, v in recorded.items()}
        model = self.config.get("model")
        return {DEFAULT_ROLE: model} if model else {}

    @cached_property
    def warnings(self) -> dict[str, int]:
        """Each warning its predictions carry, with the number of groups (clips, videos) it concerns."""
        return group_warnings(self.predictions)

    @cached_property
    def error_rate(self) -> float:
        return sum(1 for p in self.predictions if p.status in FAILED_STATUSES) / len(self.predictions)

    @cached_property
    def latency_p50_s(self) -> float | None:
        values = [p.latency_s for p in self.predictions if p.latency_s]
        return statistics.median(values) if values else None


def non_official(graph: object, options: object = None) -> bool:
    """`graph` with `options` is registered as a setting no paper ran (the `*.agent` graphs, for one)."""
    if not (isinstance(graph, str) and graph in graphs):
        return False
    return graphs.get(graph).is_non_official(options if isinstance(options, dict) else {})


def labelled(name: str, graph: object, options: object = None) -> str:
    """A run's name as a report's table shows it: `NAME (non-official)` for a non-official setting, and
    `(ceiling)` after a graph that answers from the truth."""
    ceiling = isinstance(graph, str) and graph in graphs and graphs.get(graph).ceiling
    return name + (" (non-official)" if non_official(graph, options) else "") + (" (ceiling)" * ceiling)
