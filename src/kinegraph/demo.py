"""`kinegraph demo`: the embedded default run, with no keys and no downloads.

It synthesizes small EgoDyn- and QuantiPhy-format sets with known physics, runs the VLM-free graphs
(the deterministic probes, with the oracle last as the ceiling), and then what tools add to a model: the
VLM baseline (the model alone) first, the tool-augmented graphs after it, the oracle last as the
ceiling, labelled as such. The model is the built-in `reader:text` (it reads the prompt's text, so
tool readings help it and pictures do not) unless `--model` names another; each comparison has paired
bootstrap intervals and an HTML report.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kinegraph.fixtures import fixtures_dir
from kinegraph.types import RunConfig

EGODYN_FREE = ("egodyn.measured", "egodyn.vo", "egodyn.flow", "egodyn.gpu_flow", "egodyn.oracle")
EGODYN_VLM = (
    "egodyn.vision",
    "egodyn.trajectory",
    "egodyn.measured_trajectory",
    "egodyn.tools",
    "egodyn.tool_calls",
)
QUANTIPHY_FREE = ("quantiphy.tracker", "quantiphy.oracle_tracks")
QUANTIPHY_VLM = ("quantiphy.zero_shot", "quantiphy.hybrid")
#: The built-in model that reads the prompt's text; it answers EgoDyn-style questions only.
READER = "reader:text"
#: What the reader is shown: nothing it can read (baseline), the true kinematics as numbers, tool readings.
EGODYN_READER = ("egodyn.vision", "egodyn.trajectory", "egodyn.tools")
#: Graph options per graph for the reader's runs: the trajectory as the numbers it reads.
READER_OPTIONS = {"egodyn.trajectory": {"encoding": "timeseries"}}


@dataclass(frozen=True)
class Section:
    """One benchmark of the demo: its VLM-free graphs, its model graphs, the ceiling (its oracle) and the
    graphs the built-in reader can be shown (none: the reader cannot read its questions)."""

    benchmark: str
    free: tuple[str, ...]
    with_model: tuple[str, ...]
    ceiling: str
    reader_arms: tuple[str, ...] = ()


SECTIONS = (
    Section("egodyn", EGODYN_FREE, EGODYN_VLM, "egodyn.oracle", EGODYN_READER),
    Section("quantiphy", QUANTIPHY_FREE, QUANTIPHY_VLM, "quantiphy.oracle_tracks"),
)


def _golden_scores(console: Console, out: Path) -> None:
    """Score the upstream golden prediction files, when present, and show the headline numbers."""
    from kinegraph.atomic import write_atomic
    from kinegraph.evaluators import egodyn, quantiphy

    fixtures = fixtures_dir()
    if fixtures is None:
        console.print(
            "[dim]upstream golden files not found (set KINEGRAPH_FIXTURES); skipping re-scoring[/dim]"
        )
        return
    table = Table(title="Official scorers on published predictions (bit-for-bit parity)")
    for column in ("benchmark", "predictions", "metric", "value"):
        table.add_column(column)
    ego = egodyn.score(egodyn.read_prediction_records(fixtures / "egodyn" / "flow_heuristic.jsonl"))
    write_atomic(out / "egodyn_flow_heuristic_metrics.json", json.dumps(ego, indent=2))
    for key in ("accuracy", "balanced_acc", "macro_f1"):
        table.add_row("EgoDyn-Bench", "flow_heuristic", f"global {key}", f"{ego['global'][key]:.4f}")
    table.add_row("EgoDyn-Bench", "flow_heuristic", "WPCR (wemcr)", f"{ego['consistency']['wemcr']:.4f}")
    row = quantiphy.score_file(
        fixtures / "quantiphy" / "gpt-5.1.csv", fixtures / "quantiphy" / "quantiphy_validation.csv"
    )
    write_atomic(out / "quantiphy_gpt-5.1_results.csv", quantiphy.results_csv([row]))
    for key in ("mra_S2", "mra_D2", "mra_S3", "mra_D3", "mra_average"):
        table.add_row("QuantiPhy", "gpt-5.1", key, f"{row[key]:.4f}")
    console.print(table)


def _run_all(
    console: Console,
    benchmark: str,
    data: Path,
    graphs: Sequence[str],
    out: Path,
    model: str | None,
    base_url: str | None,
    options: dict[str, dict[str, object]] | None = None,
) -> list[Path]:
    from kinegraph.graphs import graphs as registry
    from kinegraph.run import execute as run

    run_dirs = []
    for graph in graphs:
        if graph not in registry:
            continue
        takes_model = registry.get(graph).needs_model
        run_dir = out / "runs" / (f"{graph}.{model.replace(':', '_')}" if takes_model and model else graph)
        start = time.perf_counter()
        summary = run(
            RunConfig(
                benchmark=benchmark,
                graph=graph,
                data=str(data),
                out_dir=str(run_dir),
                model=model if takes_model else None,
                base_url=base_url if takes_model else None,
                options=(options or {}).get(graph, {}),
                concurrency=8,
            ),
            show_progress=True,
        )
        console.print(
            f"  {graph}: {summary.n_predictions} predictions in {time.perf_counter() - start:.1f} s",
            highlight=False,
        )
        run_dirs.append(run_dir)
    return run_dirs


def _compare(console: Console, run_dirs: list[Path], report: Path) -> None:
    from kinegraph.report import compare, print_table, write_report

    if len(run_dirs) < 1:
        return
    comparison = compare(run_dirs, n_boot=1000)
    print_table(comparison, console)
    write_report(comparison, report)
    console.print(f"  report: {report}")


def run_demo(
    out: Path, model: str | None = None, base_url: str | None = None, n: int = 6, seed: int = 0
) -> None:
    """Run every embedded capability and write its outputs under `out`; `model` None is `reader:text`."""
    model = model or READER
    from kinegraph.suites import suites

    console = Console(width=None if sys.stdout.isatty() else 200)
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    _golden_scores(console, out)
    for section in SECTIONS:
        benchmark = section.benchmark
        console.rule(f"{benchmark}: synthetic set with known physics")
        data = out / "data" / benchmark
        if not data.exists():
            suites.get(benchmark).generate(data, n=n, seed=seed)
        console.print("VLM-free tools, the oracle last as the ceiling:")
        runs = _run_all(console, benchmark, data, section.free, out / benchmark, None, None)
        _compare(console, runs, out / f"{benchmark}_report.html")
        if model == READER and not section.reader_arms:
            console.print(f"[dim]{READER} reads EgoDyn-style questions only; pass --model for {benchmark}[/]")
            continue
        arms = section.reader_arms if model == READER else section.with_model
        console.print(
            f"What tools add to {model}: the model alone first (baseline), the oracle last (ceiling):"
        )
        graphs = (*arms, section.ceiling)
        runs = _run_all(console, benchmark, data, graphs, out / benchmark, model, base_url, READER_OPTIONS)
        _compare(console, runs, out / f"{benchmark}_model_report.html")
    console.print(f"demo finished in {time.perf_counter() - start:.0f} s; outputs in {out}/")
