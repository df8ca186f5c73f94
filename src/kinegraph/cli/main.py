"""The `kinegraph` command line: this module only declares the commands; each lives in its group's module
and imports its implementation lazily, so `kinegraph --help` stays near Python's own start-up."""

from __future__ import annotations

import typer

from kinegraph.cli import compare, data, listing, reproduce, run, serve
from kinegraph.cli.common import KinegraphGroup
from kinegraph.cli.evaluate import EvaluateGroup

app = typer.Typer(
    help="Run VLM + physical-tool graphs over motion benchmarks and score them as the official code does.",
    cls=KinegraphGroup,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


app.add_typer(
    typer.Typer(cls=EvaluateGroup),
    name="evaluate",
    help="Re-score stored predictions with a benchmark's official metric.",
    no_args_is_help=True,
)
app.command()(run.demo)
app.command()(run.run)
app.command()(run.sweep)
app.command()(compare.compare)
app.command()(compare.view)
app.command()(reproduce.reproduce)
app.command()(data.synth)
app.add_typer(data.data_app, name="data")
app.command()(listing.describe)
app.command("list")(listing.list_entries)
app.command()(serve.serve)
app.command("mcp")(serve.mcp_command)


@app.command()
def version() -> None:
    """Print the kinegraph version."""
    from kinegraph import __version__

    typer.echo(__version__)
