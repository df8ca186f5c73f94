"""Compare runs of one benchmark: headline table, paired-bootstrap deltas against the first run.

Every run after the first gets a delta with a 95% interval on the primary metric and on each
per-question / per-task item of the breakdown (the same groups, one set of draws per run pair).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from kinegraph.errors import DataError
from kinegraph.report.bootstrap import Delta, paired_bootstrap, paired_bootstrap_items
from kinegraph.report.factorial import factorial_2x2
from kinegraph.report.pairs import Pair, all_pairs
from kinegraph.report.runs import RunData

#: `compare(..., pairs=)`: deltas vs the first run only; also every pair; or a 2x2 design's effects too.
Pairs = Literal["first", "all", "2x2"]
PAIRS: tuple[str, ...] = get_args(Pairs)


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
    item_deltas: list[dict[str, Delta]]  # per run: item -> delta vs the first run ({} for the first)
    scorer: str  # the suite's scorer: the official metric or kinegraph's own
    notes: dict[str, str]  # the suite's notes on how runs are scored
    n_boot: int = 2000
    seed: int = 0
    pairs: list[Pair] = field(default_factory=list)  # every pair of runs, with pairs="all"
    factorial: dict[str, Delta] = field(default_factory=dict)  # a 2x2 design's effects, with pairs="2x2"

    @property
    def metric_names(self) -> list[str]:
        names: list[str] = []
        for h in self.headlines:
            names += [k for k in h if k not in names]
        return names

    @property
    def item_names(self) -> list[str]:
        """Breakdown items in the order the runs report them (the first run's order, then any extras)."""
        return list(dict.fromkeys(k for b in self.breakdowns for k in b))


def compare(
    run_dirs: Sequence[str | Path], n_boot: int = 2000, seed: int = 0, pairs: str = "first"
) -> Comparison:
    """Load the runs (the first is the baseline) and compute every number of the report.

    `pairs="all"` adds every pair of runs; `"2x2"` reads four runs as (neither, A, B, both) and adds both
    main effects and the interaction.
    """
    if not run_dirs:
        raise ValueError("give at least one run directory")
    if pairs not in PAIRS:
        raise ValueError(f"--pairs must be one of {', '.join(PAIRS)}, got {pairs!r}")
    if pairs == "2x2" and len(run_dirs) != 4:
        raise ValueError(f"--pairs 2x2 needs 4 runs (neither, A, B, both), got {len(run_dirs)}")
    runs = [RunData.load(p) for p in run_dirs]
    benchmarks = {r.config.get("benchmark") for r in runs}
    if len(benchmarks) != 1:
        raise DataError(f"runs are of different benchmarks: {sorted(map(str, benchmarks))}")
    suite = runs[0].suite
    deltas: list[Delta | None] = [None]
    deltas += [
        paired_bootstrap(runs[0].group_stats, r.group_stats, n_boot=n_boot, seed=seed) for r in runs[1:]
    ]
    item_deltas: list[dict[str, Delta]] = [{}]
    item_deltas += [
        paired_bootstrap_items(runs[0].item_stats, r.item_stats, n_boot=n_boot, seed=seed) for r in runs[1:]
    ]
    return Comparison(
        benchmark=suite.name,
        primary=suite.primary,
        runs=runs,
        headlines=[suite.headline(r.metrics) for r in runs],
        deltas=deltas,
        breakdowns=[suite.breakdown(r.metrics) for r in runs],
        confusions=[suite.confusions(r.metrics) for r in runs],
        item_deltas=item_deltas,
        scorer=suite.scorer,
        notes=dict(suite.notes),
        n_boot=n_boot,
        seed=seed,
        pairs=all_pairs([r.group_stats for r in runs], n_boot, seed) if pairs != "first" else [],
        factorial=factorial_2x2([r.group_stats for r in runs], n_boot, seed) if pairs == "2x2" else {},
    )
