"""`kinegraph synth` and `kinegraph data ...`: synthetic worlds, fetching and checking benchmark files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from kinegraph.cli.common import (
    clean_errors,
    fail,
)


@clean_errors
def synth(
    world: Annotated[str, typer.Argument(help="Which synthetic world to write (see --help of each).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")],
    n: Annotated[int, typer.Option("--n", min=1, help="How many clips / videos / scenes.")] = 20,
    seed: Annotated[int, typer.Option(help="Random seed (same seed, same bytes).")] = 0,
    agents: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Other road users: vehicles per scene (tad, 0-4, default 3); the most per record "
            "(stsbench, 0-2, default 2: all four scenario groups).",
        ),
    ] = None,
) -> None:
    """Write a synthetic world with known physics in a benchmark's official on-disk format."""
    import inspect

    from kinegraph.errors import UsageError
    from kinegraph.suites import synthetic_generator

    generate = synthetic_generator(world)
    options: dict[str, Any] = {}
    if agents is not None:
        if "agents" not in inspect.signature(generate).parameters:
            raise UsageError(
                f"--agents: the {world} world has no other road users (worlds with them: stsbench, tad)"
            )
        options["agents"] = agents
    from rich.console import Console

    try:  # a spinner on a terminal's stderr (none in pipes, where a mistake stays one line)
        with Console(stderr=True).status(f"synth: writing {n} of the {world} world into {out}"):
            path = generate(out, n=n, seed=seed, **options)
    except ValueError as exc:
        if not options:
            raise
        raise UsageError(f"--agents: {exc}") from None
    typer.echo(f"wrote {path}")


data_app = typer.Typer(no_args_is_help=True, help="Fetch, check and derive benchmark files.")


@data_app.command("quantiphy-counterfactual")
@clean_errors
def quantiphy_counterfactual(
    source: Annotated[Path, typer.Option("--from", help="A QuantiPhy table (CSV, parquet or its folder).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")],
) -> None:
    """The paper's counterfactual priors: one row per question per alpha (0.001 ... 700), truth alpha*y."""
    from kinegraph.benchmarks.quantiphy.counterfactual import write_counterfactual_set

    typer.echo(f"wrote {write_counterfactual_set(source, out)}")


@data_app.command("fetch")
@clean_errors
def data_fetch(
    benchmark: Annotated[
        str, typer.Argument(help="egodyn, quantiphy, tad, stsbench, dsi, autodridm or nuscenes.")
    ],
    to: Annotated[Path | None, typer.Option("--to", help="Folder to write (resumes what is there).")] = None,
    revision: Annotated[str, typer.Option(help="Branch, tag or commit; recorded as a commit.")] = "main",
    endpoint: Annotated[
        str | None, typer.Option(envvar="HF_ENDPOINT", help="Hub URL (default: huggingface.co).")
    ] = None,
) -> None:
    """Download a benchmark from the Hugging Face Hub (HF_ENDPOINT, HF_TOKEN honoured) at a pinned commit."""
    from kinegraph.data.fetch import fetch, nuscenes_instructions
    from kinegraph.data.hub_layouts import data_card

    card = data_card(benchmark)
    if card.hub is None:
        typer.echo("\n".join(card.manual_steps))
        return
    if to is None:
        raise fail("--to is required: the folder to download into")
    record = fetch(benchmark, to, revision=revision, endpoint=endpoint)
    typer.echo(f"fetched {record.repo_id}@{record.commit} ({record.files} files) into {to}")
    if card.hub.needs_nuscenes:
        typer.echo(
            f"{benchmark} also reads nuScenes frames, which cannot be fetched:\n{nuscenes_instructions()}"
        )


@data_app.command("check")
@clean_errors
def data_check(
    benchmark: Annotated[str, typer.Argument(help="egodyn, quantiphy, tad, stsbench, dsi or autodridm.")],
    folder: Annotated[Path, typer.Argument(help="The benchmark folder (what data fetch wrote).")],
) -> None:
    """Check a benchmark folder before a run: files, rows, joins, videos; exit 2 when something is wrong."""
    from kinegraph.data.check import check, table

    findings = check(benchmark, folder)
    typer.echo(table(findings), nl=False)
    errors = sum(f.severity == "error" for f in findings)
    if errors:
        raise fail(f"{folder}: {errors} problem(s) in the {benchmark} layout (see the table above)")
    typer.echo(f"ok: {folder} is a complete {benchmark} folder")
