"""`kinegraph compare` and `view`: reports over finished runs, a local page over their samples."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kinegraph.cli.common import (
    clean_errors,
    fail,
)


@clean_errors
def compare(
    runs: Annotated[list[Path], typer.Argument(help="Run directories; the first is the baseline.")],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="report.html, report.md, or report.json (every number, item deltas included)."
        ),
    ] = None,
    n_boot: Annotated[int, typer.Option(help="Bootstrap resamples.")] = 2000,
    pairs: Annotated[
        str,
        typer.Option(
            help="first: each run vs the first; all: also every pair (Holm); "
            "2x2: four runs (neither, A, B, both), main effects and interaction."
        ),
    ] = "first",
) -> None:
    """Compare runs of one benchmark: table, paired bootstrap 95% CIs, plots, HTML/markdown report."""
    from kinegraph.report import REPORT_SUFFIXES, print_table, write_report
    from kinegraph.report import compare as compare_runs

    if out is not None and out.suffix not in REPORT_SUFFIXES:
        raise fail(f"--out {out}: a report is {', '.join(REPORT_SUFFIXES)}; name the file with one of them")
    try:
        comparison = compare_runs(runs, n_boot=n_boot, pairs=pairs)
    except ValueError as exc:
        raise fail(str(exc)) from None
    print_table(comparison)
    if out is not None:
        typer.echo(f"wrote {write_report(comparison, out)}")


@clean_errors
def view(
    runs: Annotated[list[Path], typer.Argument(help="Run directories to browse side by side.")],
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port on 127.0.0.1 (0: any free).")] = 0,
    open_browser: Annotated[
        bool, typer.Option("--open/--no-open", help="Open the page in a browser.")
    ] = True,
) -> None:
    """Browse samples in a local page: frames used, prompt, tool outputs, raw and parsed answer, truth."""
    from kinegraph.view import ViewServer, load_views

    server = ViewServer(load_views(runs), port)
    typer.echo(f"kinegraph view: {server.url} (Ctrl-C stops)", err=True)
    if open_browser:
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
