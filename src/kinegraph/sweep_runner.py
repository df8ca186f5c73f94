"""Run a sweep, locally or on Ray, then write one comparison report across all its runs.

Runs go one after another; on Ray each run spreads its shards over the whole cluster and the workers are
kept from run to run. A run that fails (bad data, a lost cluster) is recorded in sweep.json and the sweep
goes on; rerunning the sweep resumes every run where it stopped.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from kinegraph.rundir import PREDICTIONS, read_predictions, write_json
from kinegraph.sweep import PlannedRun, expand, load_sweep

SWEEP_JSON = "sweep.json"
REPORT_HTML = "report.html"
REPORT_MD = "report.md"


class SweepRunResult(BaseModel):
    name: str
    benchmark: str
    graph: str
    model: str | None
    options: dict[str, Any]
    out_dir: str
    status: str
    n_predictions: int = 0
    headline: dict[str, float | None] | None = None
    error: str | None = None


class SweepResult(BaseModel):
    out_dir: str
    runs: list[SweepRunResult]
    reports: dict[str, str]

    @property
    def failed(self) -> list[SweepRunResult]:
        return [r for r in self.runs if r.status == "failed"]


def run_sweep(
    sweep_file: str | Path,
    out_dir: str | Path,
    *,
    ray_address: str | None = None,
    use_ray: bool = False,
    show_progress: bool = True,
    n_boot: int = 2000,
    on_run: Callable[[PlannedRun], None] | None = None,
) -> SweepResult:
    """Run every combination of `sweep_file` into `out_dir` (on Ray when `use_ray`), then the reports."""
    spec = load_sweep(sweep_file)
    out_dir = Path(out_dir)
    plans = expand(spec, out_dir, sweep_file)
    results: list[SweepRunResult] = []
    session: Any = nullcontext()
    options = None
    if use_ray:
        from kinegraph.ray_runner import RayOptions, ray_session

        options = RayOptions.model_validate({**spec.ray, "address": ray_address})
        session = ray_session(options)
    with session:
        for plan in plans:
            if on_run is not None:
                on_run(plan)
            results.append(_run_one(plan, options, show_progress))
    out_dir.mkdir(parents=True, exist_ok=True)
    reports = write_reports(out_dir, results, n_boot)
    result = SweepResult(out_dir=str(out_dir), runs=results, reports=reports)
    write_json(out_dir / SWEEP_JSON, result.model_dump())
    return result


def _run_one(plan: PlannedRun, ray_options: Any, show_progress: bool) -> SweepRunResult:
    config = plan.config
    base = {
        "name": plan.name,
        "benchmark": plan.benchmark,
        "graph": config.graph,
        "model": config.model,
        "options": config.options,
        "out_dir": config.out_dir,
    }
    try:
        if ray_options is None:
            from kinegraph.runner import run

            summary = run(config, show_progress=show_progress)
        else:
            from kinegraph.ray_runner import run_on_ray

            summary = run_on_ray(config, ray_options, show_progress=show_progress)
    except Exception as exc:  # noqa: BLE001 - one failed combination must not end the sweep
        n = len(read_predictions(Path(config.out_dir) / PREDICTIONS))
        return SweepRunResult(**base, status="failed", n_predictions=n, error=f"{type(exc).__name__}: {exc}")
    return SweepRunResult(
        **base, status=summary.status, n_predictions=summary.n_predictions, headline=summary.headline
    )


def write_reports(out_dir: Path, runs: list[SweepRunResult], n_boot: int = 2000) -> dict[str, str]:
    """Per benchmark: a full comparison report (the first run is the baseline); across all: report.html
    and report.md with every benchmark's table and every run's status."""
    from kinegraph.report import compare, markdown, write_report
    from kinegraph.report.tables import rows

    reports: dict[str, str] = {}
    md = ["# Sweep", ""]
    page = [f"<h1>kinegraph sweep · {html.escape(str(out_dir))}</h1>"]
    for benchmark in dict.fromkeys(r.benchmark for r in runs):
        usable = [r for r in runs if r.benchmark == benchmark and r.n_predictions > 0]
        if not usable:
            continue
        comparison = compare([r.out_dir for r in usable], n_boot=n_boot)
        report = write_report(comparison, out_dir / benchmark / REPORT_HTML)
        reports[benchmark] = str(report)
        header, body = rows(comparison)
        md += [f"## {benchmark}", "", markdown(comparison), f"Full report: {benchmark}/{REPORT_HTML}", ""]
        page += [
            f"<h2>{html.escape(benchmark)}</h2>",
            _table(header, body),
            f'<p><a href="{html.escape(benchmark)}/{REPORT_HTML}">full report with plots</a></p>',
        ]
    status_header = ["benchmark", "run", "status", "predictions", "error"]
    status_rows = [[r.benchmark, r.name, r.status, str(r.n_predictions), r.error or ""] for r in runs]
    page += ["<h2>Runs</h2>", _table(status_header, status_rows)]
    md += ["## Runs", "", "| " + " | ".join(status_header) + " |", "|" + "---|" * len(status_header)]
    md += ["| " + " | ".join(row) + " |" for row in status_rows]
    (out_dir / REPORT_MD).write_text("\n".join(md) + "\n")
    (out_dir / REPORT_HTML).write_text(
        "<!doctype html><html><head><meta charset=utf-8><title>kinegraph sweep</title>"
        "<style>body{font-family:system-ui,sans-serif;margin:2rem}table{border-collapse:collapse}"
        "th,td{border:1px solid #ccc;padding:.3rem .5rem}</style></head><body>"
        + "\n".join(page)
        + "</body></html>"
    )
    reports["all"] = str(out_dir / REPORT_HTML)
    return reports


def _table(header: list[str], body: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    cells = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in body)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{cells}</tbody></table>"


def summary_json(result: SweepResult) -> str:
    """What `kinegraph sweep` prints: each run's status and headline, and the report paths."""
    runs = [
        {"run": f"{r.benchmark}/{r.name}", "status": r.status, "headline": r.headline, "error": r.error}
        for r in result.runs
    ]
    return json.dumps({"runs": runs, "reports": result.reports}, indent=2)
