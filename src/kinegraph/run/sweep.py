"""Run a sweep, locally or on Ray, then write one comparison report across all its runs.

Runs go one after another; on Ray each run spreads its shards over the whole cluster and the workers are
kept from run to run. A run that fails (bad data, a lost cluster) is recorded in sweep.json and the sweep
goes on; rerunning the sweep resumes every run where it stopped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from kinegraph.jsonfiles import without_float_noise
from kinegraph.report.sweep import write_sweep_reports
from kinegraph.run import execute
from kinegraph.run.sweep_spec import PlannedRun, expand, load_sweep
from kinegraph.rundir import PREDICTIONS, read_predictions, write_json

SWEEP_JSON = "sweep.json"


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
        from kinegraph.run.on_ray import RayOptions, ray_session

        options = RayOptions.model_validate({**spec.ray, "address": ray_address})
        session = ray_session(options)
    with session:
        for plan in plans:
            if on_run is not None:
                on_run(plan)
            results.append(_run_one(plan, options, show_progress))
    out_dir.mkdir(parents=True, exist_ok=True)
    reports = write_sweep_reports(out_dir, results, n_boot, spec.pairs)
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
        summary = execute(config, ray_options, show_progress=show_progress)
    except Exception as exc:  # noqa: BLE001 - one failed combination must not end the sweep
        n = len(read_predictions(Path(config.out_dir) / PREDICTIONS))
        return SweepRunResult(**base, status="failed", n_predictions=n, error=f"{type(exc).__name__}: {exc}")
    return SweepRunResult(
        **base, status=summary.status, n_predictions=summary.n_predictions, headline=summary.headline
    )


def summary_json(result: SweepResult) -> str:
    """What `kinegraph sweep` prints: each run's status and headline, and the report paths."""
    runs = [
        {"run": f"{r.benchmark}/{r.name}", "status": r.status, "headline": r.headline, "error": r.error}
        for r in result.runs
    ]
    return json.dumps(without_float_noise({"runs": runs, "reports": result.reports}), indent=2)
