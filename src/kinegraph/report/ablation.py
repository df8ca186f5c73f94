"""The report's statistics beyond "each run vs the first": per-item Holm p-values, every pair of runs, a
2x2 design's effects, and repeats (mean ± sd). Each is a titled table the views render as they please."""

from __future__ import annotations

import math
from typing import NamedTuple

from kinegraph.report.cells import fmt, format_delta
from kinegraph.report.compare import Comparison
from kinegraph.report.holm import holm
from kinegraph.report.repeats import repeat_rows
from kinegraph.report.tool_use import tool_use_rows

#: Letting the model call tools is a setting none of the papers ran; the section says so in its title.
TOOL_USE_TITLE = (
    "Tool use (non-official setting: the model calls tools): calls read from each prediction's trace"
)


class Section(NamedTuple):
    title: str
    header: list[str]
    body: list[list[str]]


def _p(value: float) -> str:
    return fmt(value)


def holm_rows(comparison: Comparison) -> tuple[list[str], list[list[str]]]:
    """Per item and later run: the bootstrap p of "no difference from the first run" and its Holm-adjusted
    value, the family being that run's items."""
    items = comparison.item_names
    header = ["item"]
    columns: list[list[str]] = []
    for run, deltas in zip(comparison.runs[1:], comparison.item_deltas[1:], strict=True):
        raw = [deltas[name].p if name in deltas else math.nan for name in items]
        header += [f"{run.label}: p", f"{run.label}: p Holm"]
        columns += [[_p(p) for p in raw], [_p(p) for p in holm(raw)]]
    body = [[name, *(column[k] for column in columns)] for k, name in enumerate(items)]
    return header, body


def sections(comparison: Comparison) -> list[Section]:
    """The sections that apply to this comparison (none for a single run without repeats or tool calls)."""
    out = []
    if comparison.item_names and len(comparison.runs) > 1:
        out.append(
            Section(
                "Per question / task: bootstrap p vs the first run, Holm-adjusted over each run's items",
                *holm_rows(comparison),
            )
        )
    if comparison.pairs:
        names = [r.label for r in comparison.runs]
        out.append(
            Section(
                f"Every pair of runs: Δ {comparison.primary} (b − a, paired bootstrap 95% CI), "
                "Holm over pairs",
                ["a", "b", "Δ (95% CI)", "p", "p Holm"],
                [
                    [f"{p.a + 1}. {names[p.a]}", f"{p.b + 1}. {names[p.b]}", format_delta(p.delta)]
                    + [_p(p.delta.p), _p(p.p_holm)]
                    for p in comparison.pairs
                ],
            )
        )
    if comparison.factorial:
        out.append(
            Section(
                f"2x2 design on {comparison.primary}: runs 1 = neither, 2 = A, 3 = B, 4 = both",
                ["effect", "estimate (95% CI)", "p"],
                [[name, format_delta(d), _p(d.p)] for name, d in comparison.factorial.items()],
            )
        )
    header, body = repeat_rows(comparison.runs, comparison.headlines, comparison.metric_names)
    if body:
        out.append(Section("Repeats of the same arm: mean ± sd over runs", header, body))
    header, body = tool_use_rows(comparison.runs, comparison.primary)
    if body:
        out.append(Section(TOOL_USE_TITLE, header, body))
    return out
