"""Repeated runs of one arm (same graph, options and model; another seed or run directory): mean ± sd."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from kinegraph.report.cells import DIGITS
from kinegraph.report.runs import RunData


def repeat_sets(runs: Sequence[RunData]) -> dict[str, list[int]]:
    """Run name -> indices of the runs with that name, for names that occur more than once."""
    by_name: dict[str, list[int]] = {}
    for i, run in enumerate(runs):
        by_name.setdefault(run.name, []).append(i)
    return {name: idx for name, idx in by_name.items() if len(idx) > 1}


def mean_sd(values: Sequence[float | None]) -> tuple[float, float, int]:
    """Mean and sample standard deviation of the defined values, and how many there were (NaN if none)."""
    defined = [v for v in values if v is not None and not math.isnan(v)]
    if not defined:
        return math.nan, math.nan, 0
    sd = statistics.stdev(defined) if len(defined) > 1 else math.nan
    return statistics.fmean(defined), sd, len(defined)


def format_mean_sd(values: Sequence[float | None]) -> str:
    """`0.4500 ± 0.0212 (n=3)`; "—" without values."""
    mean, sd, n = mean_sd(values)
    if n == 0:
        return "—"
    spread = "" if math.isnan(sd) else f" ± {sd:.{DIGITS}f}"
    return f"{mean:.{DIGITS}f}{spread} (n={n})"


def run_seed(run: RunData) -> str:
    """The run's seed as the repeats table shows it: "none" where no seed was set, or where run.json
    predates `seed_sent` (its seed, always 0, reached nothing then)."""
    seed = run.config.get("seed") if "seed_sent" in run.info else None
    return "none" if seed is None else str(seed)


def repeat_rows(
    runs: Sequence[RunData], headlines: Sequence[dict[str, float | None]], metrics: Sequence[str]
) -> tuple[list[str], list[list[str]]]:
    """Per repeated arm: its seeds and each headline metric as mean ± sd over the repeats."""
    header = ["run", "repeats", "seeds", *metrics]
    body = []
    for idx in repeat_sets(runs).values():
        seeds = ",".join(run_seed(runs[i]) for i in idx)
        cells = [format_mean_sd([headlines[i].get(m) for i in idx]) for m in metrics]
        body.append([runs[idx[0]].label, str(len(idx)), seeds, *cells])
    return header, body
