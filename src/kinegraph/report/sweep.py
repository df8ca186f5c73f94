"""A sweep's reports: per benchmark a full comparison, across all one page with every table and run status."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from kinegraph.atomic import write_atomic
from kinegraph.report.compare import Pairs, compare
from kinegraph.report.html import STYLE, html_table, write_report
from kinegraph.report.runs import labelled
from kinegraph.report.tables import markdown, rows

REPORT_HTML = "report.html"
REPORT_MD = "report.md"


class SweepRun(Protocol):
    """What the reports read of one run of a sweep."""

    name: str
    benchmark: str
    graph: str
    options: dict[str, Any]
    out_dir: str
    status: str
    n_predictions: int
    error: str | None


def write_sweep_reports(
    out_dir: Path, runs: Sequence[SweepRun], n_boot: int = 2000, pairs: Pairs = "first"
) -> dict[str, str]:
    """Per benchmark: a full comparison report (the first run is the baseline; `pairs` as `compare
    --pairs`); across all: report.html and report.md with every benchmark's table and every run's status."""
    reports: dict[str, str] = {}
    md = ["# Sweep", ""]
    page = [f"<h1>kinegraph sweep · {html.escape(str(out_dir))}</h1>"]
    for benchmark in dict.fromkeys(r.benchmark for r in runs):
        usable = [r for r in runs if r.benchmark == benchmark and r.n_predictions > 0]
        if not usable:
            continue
        mode, left_out = benchmark_pairs(pairs, len(usable))
        comparison = compare([r.out_dir for r in usable], n_boot=n_boot, pairs=mode)
        report = write_report(comparison, out_dir / benchmark / REPORT_HTML)
        reports[benchmark] = str(report)
        header, body = rows(comparison)
        md += [f"## {benchmark}", "", *([left_out, ""] if left_out else [])]
        md += [markdown(comparison), f"Full report: {benchmark}/{REPORT_HTML}", ""]
        page += [
            f"<h2>{html.escape(benchmark)}</h2>",
            *([f"<p>{html.escape(left_out)}</p>"] if left_out else []),
            html_table(header, body),
            f'<p><a href="{html.escape(benchmark)}/{REPORT_HTML}">full report with plots</a></p>',
        ]
    status_header = ["benchmark", "run", "status", "predictions", "error"]
    status_rows = [
        [r.benchmark, labelled(r.name, r.graph, r.options), r.status, str(r.n_predictions), r.error or ""]
        for r in runs
    ]
    page += ["<h2>Runs</h2>", html_table(status_header, status_rows)]
    md += ["## Runs", "", "| " + " | ".join(status_header) + " |", "|" + "---|" * len(status_header)]
    md += ["| " + " | ".join(row) + " |" for row in status_rows]
    write_atomic(out_dir / REPORT_MD, "\n".join(md) + "\n")
    write_atomic(
        out_dir / REPORT_HTML,
        "<!doctype html><html><head><meta charset=utf-8><title>kinegraph sweep</title>"
        f"<style>{STYLE}</style></head><body>" + "\n".join(page) + "</body></html>",
    )
    reports["all"] = str(out_dir / REPORT_HTML)
    return reports


def benchmark_pairs(pairs: Pairs, n_runs: int) -> tuple[Pairs, str | None]:
    """The pairs one benchmark's report can show, and why the 2x2 design is left out when runs without
    predictions leave fewer than its four cells (every pair is then shown instead)."""
    if pairs == "2x2" and n_runs != 4:
        return "all", f"2x2 design left out: {n_runs} of its 4 runs have predictions; every pair instead."
    return pairs, None
