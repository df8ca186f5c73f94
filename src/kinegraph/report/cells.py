"""How a number or a delta is written in every table of the reports."""

from __future__ import annotations

import math

from kinegraph.report.bootstrap import Delta

#: Decimals every view (terminal, markdown, HTML) shows; metrics.json and report.json keep full precision.
DIGITS = 3


def fmt(value: float | None, digits: int = DIGITS) -> str:
    """`value` rounded for display; "—" when missing or undefined."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.{digits}f}"


def format_delta(d: Delta | None) -> str:
    """`+0.123 [0.050, 0.200] *` (`*`: the interval excludes 0); "—" when undefined."""
    if d is None or math.isnan(d.delta):
        return "—"
    mark = " *" if d.significant else ""
    return f"{d.delta:+.{DIGITS}f} [{fmt(d.low)}, {fmt(d.high)}]{mark}"


def markdown_table(header: list[str], body: list[list[str]]) -> list[str]:
    """Lines of a markdown table (pipes in cells escaped)."""

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return [line(header), "|" + "---|" * len(header), *(line(row) for row in body)]
