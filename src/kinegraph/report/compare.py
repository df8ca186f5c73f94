"""Compare runs of one benchmark: headline table, paired-bootstrap deltas against the first run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kinegraph.errors import DataError
from kinegraph.report.bootstrap import Delta, paired_bootstrap
from kinegraph.report.runs import RunData


@dataclass
class Comparison:
    """Everything a report shows; tables and HTML are views of this."""

    benchmark: str
    primary: str
    runs: list[RunData]
    headlines: list[dict[str, float | None]]
    deltas: list[Delta | None]
    breakdowns: list[dict[str, float | None]]
    confusions: list[dict[str, dict[str, Any]]]

    @property
    def metric_names(self) -> list[str]:
        names: list[str] = []
        for h in self.headlines:
            names += [k for k in h if k not in names]
        return names


def compare(run_dirs: Sequence[str | Path], n_boot: int = 2000, seed: int = 0) -> Comparison:
    """Load the runs (the first is the baseline) and compute every number of the report."""
    if not run_dirs:
        raise ValueError("give at least one run directory")
    runs = [RunData.load(p) for p in run_dirs]
    benchmarks = {r.config.get("benchmark") for r in runs}
    if len(benchmarks) != 1:
        raise DataError(f"runs are of different benchmarks: {sorted(map(str, benchmarks))}")
    suite = runs[0].suite
    deltas: list[Delta | None] = [None]
    deltas += [
        paired_bootstrap(runs[0].group_stats, r.group_stats, n_boot=n_boot, seed=seed) for r in runs[1:]
    ]
    return Comparison(
        benchmark=suite.name,
        primary=suite.primary,
        runs=runs,
        headlines=[suite.headline(r.metrics) for r in runs],
        deltas=deltas,
        breakdowns=[suite.breakdown(r.metrics) for r in runs],
        confusions=[suite.confusions(r.metrics) for r in runs],
    )
