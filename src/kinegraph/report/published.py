"""Published vs measured: a paper's own numbers beside a reproduction's, per arm and metric.

Published numbers arrive already in the suite's units (fractions); repeated runs of an arm give the
measured value as mean ± sd. Δ is measured (mean) minus published. Each measured arm shows its error rate
(predictions that failed: api, timeout, input, graph errors) and coverage (predictions answered); an arm
with no answer at all is not measured, with how its predictions ended, never a measured 0.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path

from kinegraph.atomic import write_atomic
from kinegraph.report.cells import DIGITS, fmt, markdown_table
from kinegraph.report.html import STYLE, html_table
from kinegraph.report.repeats import format_mean_sd, mean_sd

REPRODUCE_MD = "reproduce.md"
REPRODUCE_HTML = "reproduce.html"


@dataclass
class ArmResult:
    """One printed row of a paper's table and, where it ran, what kinegraph measured for it."""

    label: str
    published: dict[str, float]  # metric key -> the paper's number as a fraction
    measured: dict[str, list[float | None]] = field(
        default_factory=dict
    )  # metric key -> one value per repeat
    run: str = ""  # the run directory (or the first repeat's)
    note: str = ""  # why it was not measured (not reproducible here, skipped, failed, no valid answer)
    error_rate: list[float] = field(default_factory=list)  # per repeat: share of failed predictions
    coverage: list[float] = field(default_factory=list)  # per repeat: share of predictions answered (ok)


@dataclass
class PublishedTable:
    """What the reproduce report shows for one table."""

    title: str
    lines: list[str]  # the header notes: paper, table, source, model, units
    columns: dict[str, str | None]  # printed column -> metric key
    arms: list[ArmResult]


def measured_rows(table: PublishedTable) -> tuple[list[str], list[list[str]]]:
    """One row per arm that ran and metric with a published number: published, measured, Δ."""
    header = [
        "arm",
        "column",
        "metric",
        "published",
        "measured",
        "Δ measured − published",
        "error rate",
        "coverage",
        "run",
    ]
    body = []
    for arm in table.arms:
        if arm.note:
            continue
        for column, key in table.columns.items():
            if key is None or key not in arm.published:
                continue
            values = arm.measured.get(key, [])
            mean, _, n = mean_sd(values)
            delta = f"{mean - arm.published[key]:+.{DIGITS}f}" if n else "—"
            measured = format_mean_sd(values) if len(values) > 1 else fmt(mean if n else None)
            errors, coverage = _rate(arm.error_rate), _rate(arm.coverage)
            body.append(
                [arm.label, column, key, fmt(arm.published[key]), measured, delta, errors, coverage, arm.run]
            )
    return header, body


def _rate(values: list[float]) -> str:
    """A share per repeat as one cell: one value, or mean ± sd over repeats."""
    return format_mean_sd(values) if len(values) > 1 else fmt(values[0] if values else None)


def not_run_rows(table: PublishedTable) -> tuple[list[str], list[list[str]]]:
    """The arms that did not run, with why and their published numbers."""
    header = ["arm", "published", "why not measured"]
    body = [
        [arm.label, ", ".join(f"{k} {fmt(v)}" for k, v in arm.published.items()) or "—", arm.note]
        for arm in table.arms
        if arm.note
    ]
    return header, body


UNITS_NOTE = "Published numbers are printed in percent in the papers and shown here as fractions (/100)."


def markdown_report(table: PublishedTable) -> str:
    lines = [f"# {table.title}", "", *(f"- {line}" for line in table.lines), f"- {UNITS_NOTE}", ""]
    header, body = measured_rows(table)
    lines += ["## Published vs measured", "", *markdown_table(header, body)] if body else []
    header, body = not_run_rows(table)
    if body:
        lines += ["", "## Not measured", "", *markdown_table(header, body)]
    return "\n".join(lines) + "\n"


def html_report(table: PublishedTable) -> str:
    parts = [f"<h1>{html.escape(table.title)}</h1>", "<ul class=note>"]
    parts += [f"<li>{html.escape(line)}</li>" for line in [*table.lines, UNITS_NOTE]]
    parts.append("</ul>")
    header, body = measured_rows(table)
    if body:
        parts += ["<h2>Published vs measured</h2>", html_table(header, body)]
    header, body = not_run_rows(table)
    if body:
        parts += ["<h2>Not measured</h2>", html_table(header, body)]
    return (
        "<!doctype html><html><head><meta charset=utf-8><title>kinegraph reproduce</title>"
        f"<style>{STYLE}</style></head><body>{''.join(parts)}</body></html>"
    )


def write_published_report(table: PublishedTable, out_dir: Path) -> tuple[Path, Path]:
    """Write reproduce.md and reproduce.html into `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    md, page = out_dir / REPRODUCE_MD, out_dir / REPRODUCE_HTML
    write_atomic(md, markdown_report(table))
    write_atomic(page, html_report(table))
    return md, page
