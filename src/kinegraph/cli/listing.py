"""`kinegraph list` and `describe`: what is registered, one graph in full."""

from __future__ import annotations

from typing import Annotated

import typer

from kinegraph.cli.common import (
    clean_errors,
    fail,
)


@clean_errors
def describe(
    graph: Annotated[
        str, typer.Argument(help="A registered graph or benchmark (see `kinegraph list graphs|benchmarks`).")
    ],
) -> None:
    """One graph in full (what it does, the questions it answers, what it needs, its options), or one
    benchmark's card (paper, licence, upstream, Hub dataset, context fields, metric)."""
    from kinegraph.listing import describe as describe_graph

    typer.echo(describe_graph(graph), nl=False)


def list_entries(
    kind: Annotated[str, typer.Argument(help="benchmarks, graphs or models.", show_default=False)],
) -> None:
    """List what is registered: benchmarks (primary metric, scorer), graphs, or model providers."""
    from kinegraph.listing import LISTINGS

    if kind not in LISTINGS:
        raise fail(f"cannot list {kind!r}; choose one of {', '.join(LISTINGS)}")
    typer.echo(LISTINGS[kind](), nl=False)
