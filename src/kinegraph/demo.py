"""`kinegraph demo`: the embedded default run, with no keys and no downloads."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from kinegraph.fixtures import fixtures_dir


def _golden_scores(console: Console, out: Path) -> None:
    """Score the upstream golden prediction files, when present, and show the headline numbers."""
    from kinegraph.evaluators import egodyn, quantiphy

    fixtures = fixtures_dir()
    if fixtures is None:
        console.print(
            "[dim]upstream golden files not found (set KINEGRAPH_FIXTURES); skipping re-scoring[/dim]"
        )
        return
    table = Table(title="Official scorers on published predictions")
    for column in ("benchmark", "predictions", "metric", "value"):
        table.add_column(column)
    ego = egodyn.score(egodyn.read_prediction_records(fixtures / "egodyn" / "flow_heuristic.jsonl"))
    (out / "egodyn_flow_heuristic_metrics.json").write_text(json.dumps(ego, indent=2))
    for key in ("accuracy", "balanced_acc", "macro_f1"):
        table.add_row("EgoDyn-Bench", "flow_heuristic", f"global {key}", f"{ego['global'][key]:.4f}")
    table.add_row("EgoDyn-Bench", "flow_heuristic", "WPCR (wemcr)", f"{ego['consistency']['wemcr']:.4f}")
    row = quantiphy.score_file(
        fixtures / "quantiphy" / "gpt-5.1.csv", fixtures / "quantiphy" / "quantiphy_validation.csv"
    )
    (out / "quantiphy_gpt-5.1_results.csv").write_text(quantiphy.results_csv([row]))
    for key in ("mra_S2", "mra_D2", "mra_S3", "mra_D3", "mra_average"):
        table.add_row("QuantiPhy", "gpt-5.1", key, f"{row[key]:.4f}")
    console.print(table)


def run_demo(out: Path) -> None:
    """Run every embedded capability and write its outputs under `out`."""
    console = Console()
    out.mkdir(parents=True, exist_ok=True)
    _golden_scores(console, out)
    console.print(f"outputs in {out}/")
