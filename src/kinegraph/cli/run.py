"""`kinegraph demo`, `run` and `sweep`: graphs over benchmarks, one run directory each."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from kinegraph.cli.common import (
    LimitPerOpt,
    RayOpt,
    RoleOpt,
    RoleOptionOpt,
    clean_errors,
    fail,
    os_error_line,
    parse_options,
    ray_options,
)


@clean_errors
def demo(
    out: Annotated[Path, typer.Option(help="Where the demo writes its outputs.")] = Path("demo_out"),
    model: Annotated[
        str | None, typer.Option(help="The model of the VLM graphs (default: the built-in reader:text).")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="Server URL for vllm / OpenAI-compatible providers.")
    ] = None,
    n: Annotated[int, typer.Option("--n", help="Synthetic clips/videos per set.")] = 6,
    seed: Annotated[int, typer.Option(help="Random seed of the synthetic sets.")] = 0,
) -> None:
    """The embedded default: synthetic sets, VLM-free graphs, what tools add to a model, reports. No keys."""
    from kinegraph.demo import run_demo

    run_demo(out, model=model, base_url=base_url, n=n, seed=seed)


@clean_errors
def run(
    benchmark: Annotated[str, typer.Argument(help="egodyn, quantiphy, tad, stsbench, dsi, autodridm.")],
    graph: Annotated[
        str, typer.Option(help="A registered graph (egodyn.vision, ...) or package.module:build.")
    ],
    data: Annotated[str, typer.Option(help="The benchmark's files (official layout).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Run directory (rerun the same to resume).")],
    model: Annotated[
        str | None, typer.Option(help="PROVIDER:MODEL, e.g. openai:gpt-4o, vllm:qwen2.5-vl.")
    ] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N samples.")] = None,
    limit_per: LimitPerOpt = None,
    subset: Annotated[
        list[str] | None,
        typer.Option(
            help="Only samples with key=value[,value...] (repeatable: AND across keys); "
            "ids=FILE lists sample or group ids. Keys per benchmark: docs/suites.md."
        ),
    ] = None,
    concurrency: Annotated[int, typer.Option(help="Model calls in flight at once.")] = 8,
    base_url: Annotated[
        str | None, typer.Option(help="Server URL for vllm / OpenAI-compatible providers.")
    ] = None,
    cache: Annotated[str | None, typer.Option(help="Response cache (SQLite) path.")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Bypass the response cache.")] = False,
    seed: Annotated[
        int | None,
        typer.Option(
            help="The model's sampling seed (openai, vllm, google) and the graph's seed option unless "
            "-O seed= sets it; default: none sent, the graph's own."
        ),
    ] = None,
    option: Annotated[
        list[str] | None, typer.Option("--option", "-O", help="Graph option key=value.")
    ] = None,
    data_option: Annotated[list[str] | None, typer.Option(help="Loader option key=value.")] = None,
    model_option: Annotated[
        list[str] | None,
        typer.Option(
            help="Backend option key=value (transport=sdk, timeout_s=300, max_concurrency=16, ...)."
        ),
    ] = None,
    role: RoleOpt = None,
    role_option: RoleOptionOpt = None,
    max_cost: Annotated[
        float | None, typer.Option(help="Stop scheduling once this many USD are spent.")
    ] = None,
    retry_errors: Annotated[bool, typer.Option(help="On resume, run failed samples again.")] = False,
    max_error_rate: Annotated[
        float,
        typer.Option(
            min=0.0, max=1.0, help="Fail the run (exit 1) when a larger share of its predictions failed."
        ),
    ] = 0.5,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Print the estimate (requests, input tokens, worst-case cost); send nothing, write nothing.",
        ),
    ] = False,
    progress: Annotated[bool, typer.Option(help="Show the progress bar.")] = True,
    device: Annotated[
        str, typer.Option(help="Where GPU tools run: auto (CUDA when present), cpu, cuda, cuda:N.")
    ] = "auto",
    ray: RayOpt = None,
    ray_workers: Annotated[int | None, typer.Option(help="Ray workers (default: what fits).")] = None,
    ray_shard_groups: Annotated[int, typer.Option(help="Clips per Ray task.")] = 1,
    ray_cpus: Annotated[float | None, typer.Option(help="CPUs per Ray worker (default 1).")] = None,
    ray_gpus: Annotated[
        float | None, typer.Option(help="GPUs per Ray worker (default 1 for GPU graphs, else 0).")
    ] = None,
    ray_runtime_env: Annotated[
        str | None, typer.Option(help="Ray runtime_env as JSON (env_vars, py_modules, working_dir).")
    ] = None,
) -> None:
    """Run a graph over a benchmark; writes run.json, predictions.jsonl, metrics.json, official/."""
    import json
    import re

    from kinegraph.roles import parse_roles
    from kinegraph.run import execute
    from kinegraph.subsets import parse_subset, resolve_id_files
    from kinegraph.types import DEVICE_PATTERN, RunConfig

    if not re.match(DEVICE_PATTERN, device):
        raise fail(f"--device must be auto, cpu, cuda or cuda:N, got {device!r}")
    config = RunConfig(
        benchmark=benchmark,
        graph=graph,
        model=model,
        data=data,
        out_dir=str(out),
        limit=limit,
        limit_per=limit_per,
        subset=resolve_id_files(parse_subset(subset or []), Path.cwd()),
        concurrency=concurrency,
        base_url=base_url,
        cache=cache,
        use_cache=not no_cache,
        seed=seed,
        max_cost_usd=max_cost,
        max_error_rate=max_error_rate,
        retry_errors=retry_errors,
        options=parse_options(option),
        loader_options=parse_options(data_option),
        model_options=parse_options(model_option),
        roles=parse_roles(role or [], role_option or []),
        device=device,
    )
    if dry_run:
        from kinegraph.run.budget import estimate_run

        try:
            estimate = estimate_run(config)
        except ValueError as exc:
            raise fail(str(exc)) from None
        typer.echo(estimate.model_dump_json(indent=2))
        return
    try:
        options = None
        if ray is not None:
            options = ray_options(ray, ray_workers, ray_shard_groups, ray_cpus, ray_gpus, ray_runtime_env)
        summary = execute(config, options, show_progress=progress)
    except KeyboardInterrupt:
        raise fail(f"interrupted; rerun the same command to resume ({out})", code=130) from None
    except ValueError as exc:
        raise fail(str(exc)) from None
    except OSError as exc:  # the run directory could not be written (a full disk, a file size limit)
        raise fail(os_error_line(exc, out), code=1) from None
    from kinegraph.jsonfiles import without_float_noise

    typer.echo(
        json.dumps(
            without_float_noise(
                {
                    "status": summary.status,
                    "predictions": summary.n_predictions,
                    "new": summary.n_new,
                    "errors": summary.status_counts,
                    "headline": summary.headline,
                    "out": summary.out_dir,
                }
            ),
            indent=2,
        )
    )
    if summary.failure is not None:
        raise fail(f"run failed: {summary.failure} (run.json says so; see {out})", code=1)


@clean_errors
def sweep(
    sweep_file: Annotated[Path, typer.Argument(help="Sweep YAML: benchmarks x graphs x models x options.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Sweep directory (rerun the same to resume).")],
    ray: RayOpt = None,
    n_boot: Annotated[int, typer.Option(help="Bootstrap resamples in the reports.")] = 2000,
    progress: Annotated[bool, typer.Option(help="Show a progress bar per run.")] = True,
) -> None:
    """Run every combination of a sweep file, one run directory each, then one comparison report."""
    from kinegraph.run.sweep import run_sweep, summary_json

    def announce(plan: Any) -> None:
        typer.echo(f"== {plan.benchmark}/{plan.name}", err=True)

    try:
        result = run_sweep(
            sweep_file,
            out,
            ray_address=None if ray in (None, "local") else ray,
            use_ray=ray is not None,
            show_progress=progress,
            n_boot=n_boot,
            on_run=announce,
        )
    except KeyboardInterrupt:
        raise fail(f"interrupted; rerun the same command to resume ({out})", code=130) from None
    except ValueError as exc:
        raise fail(str(exc)) from None
    except OSError as exc:
        raise fail(os_error_line(exc, out), code=1) from None
    typer.echo(summary_json(result))
    if result.failed:
        raise fail(f"{len(result.failed)} run(s) failed; see {out / 'sweep.json'}", code=1)
