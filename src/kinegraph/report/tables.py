"""Terminal (rich) and markdown views of a Comparison."""

from __future__ import annotations

import math
import sys

from rich.console import Console
from rich.table import Table

from kinegraph.report.compare import Comparison


def fmt(value: float | None, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.{digits}f}"


def delta_text(comparison: Comparison, i: int) -> str:
    d = comparison.deltas[i]
    if d is None:
        return "baseline"
    mark = " *" if d.significant else ""
    return f"{d.delta:+.4f} [{fmt(d.low)}, {fmt(d.high)}]{mark}"


def rows(comparison: Comparison) -> tuple[list[str], list[list[str]]]:
    """Header and rows shared by every view."""
    metrics = comparison.metric_names
    header = ["run", "n", *metrics, f"Δ {comparison.primary} vs first (95% CI)", "errors", "cost $", "p50 s"]
    body = []
    for i, (run, headline) in enumerate(zip(comparison.runs, comparison.headlines, strict=True)):
        body.append(
            [
                run.name,
                str(len(run.predictions)),
                *[fmt(headline.get(m)) for m in metrics],
                delta_text(comparison, i),
                f"{run.error_rate:.1%}",
                f"{run.usage.cost_usd:.4f}",
                fmt(run.latency_p50_s, 3),
            ]
        )
    return header, body


def print_table(comparison: Comparison, console: Console | None = None) -> None:
    console = console or Console(width=None if sys.stdout.isatty() else 220)  # no folding in pipes/logs
    header, body = rows(comparison)
    table = Table(
        title=f"{comparison.benchmark}: runs compared (* = 95% CI excludes 0; paired bootstrap over groups)"
    )
    for h in header:
        table.add_column(h, overflow="fold")
    for row in body:
        table.add_row(*row)
    console.print(table)


def markdown(comparison: Comparison) -> str:
    header, body = rows(comparison)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    names = sorted({k for b in comparison.breakdowns for k in b})
    if names:
        lines += [
            "",
            "| item | " + " | ".join(r.name for r in comparison.runs) + " |",
            "|" + "---|" * (len(comparison.runs) + 1),
        ]
        lines += [
            "| " + " | ".join([n, *[fmt(b.get(n)) for b in comparison.breakdowns]]) + " |" for n in names
        ]
    return "\n".join(lines) + "\n"
