"""`kinegraph reproduce`: a paper table's arms as one sweep, published vs measured."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kinegraph.cli.common import (
    LimitPerOpt,
    RayOpt,
    RoleOpt,
    RoleOptionOpt,
    clean_errors,
    fail,
    parse_options,
)


@clean_errors
def reproduce(
    table: Annotated[
        str | None, typer.Argument(help="PAPER:TABLE, e.g. tad:table4 (see --list).", show_default=False)
    ] = None,
    list_tables: Annotated[
        bool, typer.Option("--list", help="List every table with published numbers and its status.")
    ] = False,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Output directory (rerun to resume).")
    ] = None,
    data: Annotated[str | None, typer.Option(help="The table's benchmark files (official layout).")] = None,
    model: Annotated[
        str | None, typer.Option(help="PROVIDER:MODEL for every VLM arm (the paper's model is a label).")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="Server URL for vllm / OpenAI-compatible providers.")
    ] = None,
    role: RoleOpt = None,
    role_option: RoleOptionOpt = None,
    model_option: Annotated[
        list[str] | None,
        typer.Option(help="Backend option key=value of --model (scripted: responses=[...], ...)."),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option(min=1, help="Only the first N groups of each task / category per arm (--limit-per)."),
    ] = None,
    limit_per: LimitPerOpt = None,
    subset: Annotated[
        list[str] | None,
        typer.Option(help="As run --subset key=value[,value...]; replaces the table's own subset key."),
    ] = None,
    data_option: Annotated[list[str] | None, typer.Option(help="Loader option key=value.")] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Model calls in flight at once.")] = 8,
    repeats: Annotated[
        int,
        typer.Option(
            min=1,
            help="Run every arm this many times: repeat k with seed k (the model's sampling seed where "
            "the provider takes one, the graph's seed option), no cache.",
        ),
    ] = 1,
    skip: Annotated[
        list[str] | None, typer.Option(help="Leave out the arms of this graph (e.g. egodyn.gpu_flow).")
    ] = None,
    ray: RayOpt = None,
) -> None:
    """Run a paper table's arms as one sweep and report published vs measured (reproduce.md / .html)."""
    from kinegraph.reproduce import Request, find_table, listing
    from kinegraph.reproduce import reproduce as run_table
    from kinegraph.roles import parse_roles
    from kinegraph.subsets import parse_subset, resolve_id_files

    if list_tables:
        typer.echo(listing(), nl=False)
        return
    if table is None:
        raise fail("give PAPER:TABLE (see kinegraph reproduce --list)")
    found = find_table(table)
    if out is None:
        raise fail("kinegraph reproduce: Missing option '--out'")
    request = Request(
        out=out,
        data=data,
        model=model,
        base_url=base_url,
        roles=parse_roles(role or [], role_option or []),
        model_options=parse_options(model_option),
        limit=limit,
        limit_per=limit_per,
        subset=resolve_id_files(parse_subset(subset or []), Path.cwd()),
        loader_options=parse_options(data_option),
        concurrency=concurrency,
        repeats=repeats,
        skip=tuple(skip or ()),
        use_ray=ray is not None,
        ray_address=None if ray in (None, "local") else ray,
    )
    try:
        _, results = run_table(found, request, announce=lambda line: typer.echo(line, err=True))
    except KeyboardInterrupt:
        raise fail(f"interrupted; rerun the same command to resume ({out})", code=130) from None
    failed = [r for result in results for r in result.failed]
    typer.echo(f"wrote {out / 'reproduce.md'} and {out / 'reproduce.html'}")
    if failed:
        raise fail(f"{len(failed)} run(s) failed; see {out}", code=1)
