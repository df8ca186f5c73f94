"""Terminal (rich) and markdown views of a Comparison."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kinegraph.report.ablation import sections
from kinegraph.report.cells import fmt, format_delta, markdown_table
from kinegraph.report.compare import Comparison
from kinegraph.report.coverage import coverage, item_coverage


def delta_text(comparison: Comparison, i: int) -> str:
    d = comparison.deltas[i]
    return "baseline" if d is None else format_delta(d)


def rows(comparison: Comparison) -> tuple[list[str], list[list[str]]]:
    """Header and rows shared by every view."""
    metrics = comparison.metric_names
    header = [
        "run",
        "answered / asked",
        *metrics,
        f"Δ {comparison.primary} vs first (95% CI)",
        "errors",
        "cost $",
        "p50 s",
    ]
    body = []
    for i, (run, headline) in enumerate(zip(comparison.runs, comparison.headlines, strict=True)):
        body.append(
            [
                run.label,
                coverage(run.predictions),
                *[fmt(headline.get(m)) for m in metrics],
                delta_text(comparison, i),
                f"{run.error_rate:.1%}",
                f"{run.usage.cost_usd:.4f}",
                fmt(run.latency_p50_s, 3),
            ]
        )
    return header, body


def role_rows(comparison: Comparison) -> tuple[list[str], list[list[str]]]:
    """Cost and usage per model role of each run (its own line for each model a run called)."""
    header = ["run", "role", "model", "tokens in", "tokens out", "requests", "cached", "cost $"]
    body = [
        [
            run.label,
            role,
            run.role_models.get(role, "—"),
            str(usage.input_tokens),
            str(usage.output_tokens),
            str(usage.requests),
            str(usage.cached_requests),
            f"{usage.cost_usd:.4f}",
        ]
        for run in comparison.runs
        for role, usage in run.usage_by_role.items()
    ]
    return header, body


def item_rows(comparison: Comparison) -> tuple[list[str], list[list[str]]]:
    """Breakdown table: each item's official value per run with its coverage (answered/asked), and for
    later runs its delta with 95% CI."""
    header = ["item: value (answered/asked)"]
    for i, run in enumerate(comparison.runs):
        header += [run.label] if i == 0 else [run.label, "Δ vs first (95% CI)"]
    items = comparison.item_names
    covered = [item_coverage(run.predictions, items) for run in comparison.runs]
    body = []
    for name in items:
        row = [name]
        for i, (breakdown, deltas, cover) in enumerate(
            zip(comparison.breakdowns, comparison.item_deltas, covered, strict=True)
        ):
            row += [f"{fmt(breakdown.get(name))} ({cover[name]})"]
            row += [] if i == 0 else [format_delta(deltas.get(name))]
        body.append(row)
    return header, body


def warning_lines(comparison: Comparison) -> list[str]:
    """One line per run and warning: what the run's answers rest on that was assumed, and how often."""
    return [
        f"{run.label}: {count} of {len({p.group or p.sample_id for p in run.predictions})} groups: {warning}"
        for run in comparison.runs
        for warning, count in run.warnings.items()
    ]


def print_table(comparison: Comparison, console: Console | None = None) -> None:
    console = console or Console(width=None if sys.stdout.isatty() else 220)  # no folding in pipes/logs
    header, body = rows(comparison)
    table = Table(
        title=f"{comparison.benchmark}: runs compared (* = 95% CI excludes 0; paired bootstrap over groups)"
    )
    for h in header:
        table.add_column(escape(h), overflow="fold")
    for row in body:
        table.add_row(*map(escape, row))
    console.print(table)
    header, body = item_rows(comparison)
    if body:
        items = Table(
            title=f"{comparison.benchmark}: per question / task (Δ vs first, paired bootstrap 95% CI)"
        )
        for h in header:
            items.add_column(escape(h), overflow="fold")
        for row in body:
            items.add_row(*map(escape, row))
        console.print(items)
    for section in sections(comparison):
        extra = Table(title=f"{comparison.benchmark}: {section.title}")
        for h in section.header:
            extra.add_column(escape(h), overflow="fold")
        for row in section.body:
            extra.add_row(*map(escape, row))
        console.print(extra)
    header, body = role_rows(comparison)
    if body:
        roles = Table(title=f"{comparison.benchmark}: cost by model role")
        for h in header:
            roles.add_column(escape(h), overflow="fold")
        for row in body:
            roles.add_row(*map(escape, row))
        console.print(roles)
    for line in warning_lines(comparison):
        console.print(f"[yellow]warning:[/yellow] {escape(line)}")


def markdown(comparison: Comparison) -> str:
    header, body = rows(comparison)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    header, body = item_rows(comparison)
    if body:
        lines += ["", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(row) + " |" for row in body]
    for section in sections(comparison):
        lines += ["", f"{section.title}:", "", *markdown_table(section.header, section.body)]
    header, body = role_rows(comparison)
    if body:
        lines += ["", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(row) + " |" for row in body]
    warnings = warning_lines(comparison)
    if warnings:
        lines += ["", "Warnings:", "", *[f"- {line}" for line in warnings]]
    lines += ["", f"Scores: {comparison.scorer}."]
    lines += [f"- {key}: {value}" for key, value in comparison.notes.items()]
    return "\n".join(lines) + "\n"
