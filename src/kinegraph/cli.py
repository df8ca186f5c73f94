"""The `kinegraph` command line. Thin: every command imports its implementation lazily."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from typer.core import TyperCommand, TyperGroup

#: Options whose value may be left out (`--ray` alone = `--ray local`); typer has no optional-value options.
OPTIONAL_VALUES = {"--ray": "local"}


def fill_optional_values(args: list[str]) -> list[str]:
    """`--ray` at the end or before another option becomes `--ray=local`; `--ray ADDRESS` is kept."""
    out = []
    for i, arg in enumerate(args):
        following = args[i + 1] if i + 1 < len(args) else None
        if arg in OPTIONAL_VALUES and (following is None or following.startswith("-")):
            arg = f"{arg}={OPTIONAL_VALUES[arg]}"
        out.append(arg)
    return out


#: The narrowest `--help` is drawn at: at 80 columns rich cut option names (`--max-error-ra…`).
HELP_WIDTH = 120


def widen_help() -> None:
    """Draw `--help` at least HELP_WIDTH wide (wider on a wider terminal; TERMINAL_WIDTH, typer's own
    setting, wins when set), so that no option name is cut."""
    import os
    import shutil

    if os.environ.get("TERMINAL_WIDTH"):
        return
    from typer import rich_utils  # imports rich: only when help is drawn

    rich_utils.MAX_WIDTH = max(HELP_WIDTH, shutil.get_terminal_size().columns)


class KinegraphGroup(TyperGroup):
    """The top-level command: `fill_optional_values` on the arguments, and usage mistakes (a missing
    option, a bad value, an unknown command) end in one line and exit 2."""

    def main(self, args: Any = None, *rest: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        args = fill_optional_values(list(sys.argv[1:] if args is None else args))
        if not args or "--help" in args:
            widen_help()
        if not standalone_mode:
            return super().main(args, *rest, standalone_mode=False, **kwargs)
        try:
            code = super().main(args, *rest, standalone_mode=False, **kwargs)
        except typer.Abort:
            typer.echo("error: interrupted", err=True)
            sys.exit(130)
        except Exception as exc:
            from kinegraph import click_errors  # typer vendors click; its usage errors, by public names

            if isinstance(exc, click_errors.NoArgsIsHelpError):
                typer.echo(exc.ctx.get_help() if exc.ctx else exc.format_message(), err=True)
                sys.exit(2)
            if isinstance(exc, click_errors.UsageError):
                where = exc.ctx.command_path if exc.ctx else "kinegraph"
                what = exc.format_message().rstrip(".")
                typer.echo(f"error: {where}: {what} (see {where} --help)", err=True)
                sys.exit(2)
            if isinstance(exc, click_errors.ClickException):
                typer.echo(f"error: {exc.format_message()}", err=True)
                sys.exit(exc.exit_code)
            raise
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    help="Run VLM + physical-tool graphs over motion benchmarks and score them as the official code does.",
    cls=KinegraphGroup,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

F = TypeVar("F", bound=Callable[..., Any])


class EvaluateGroup(TyperGroup):
    """`kinegraph evaluate`: one subcommand per registered suite, built only when it is asked for."""

    def list_commands(self, ctx: typer.Context) -> list[str]:
        from kinegraph.suites import suites

        return suites.names()

    def get_command(self, ctx: typer.Context, cmd_name: str) -> TyperCommand | None:
        from kinegraph.suites import suites

        if cmd_name not in suites:
            return None
        from kinegraph.evaluate_command import evaluate_callback

        def warn(message: str) -> None:
            typer.echo(f"warning: {message}", err=True)

        command = typer.Typer(add_completion=False)
        callback = refusing_run_logs(evaluate_callback(suites.get(cmd_name), write_or_print, warn))
        command.command(cmd_name)(clean_errors(callback))
        return typer.main.get_command(command)


def refusing_run_logs(evaluate: F) -> F:
    """A run's own predictions.jsonl given where the benchmark's format is read is refused, naming the
    run's official/ files to pass instead (the scorer would find none of its fields and score zero)."""

    @functools.wraps(evaluate)
    def wrapper(**values: Any) -> Any:
        from kinegraph.rundir import official_instead

        given = values.get("predictions")
        for path in given if isinstance(given, list) else [given]:
            if isinstance(path, Path) and (instead := official_instead(path)):
                names = " or ".join(str(p) for p in instead)
                raise fail(f"{path}: a run's own prediction log, not the benchmark's format; pass {names}")
        return evaluate(**values)

    return wrapper  # type: ignore[return-value]


RayOpt = Annotated[
    str | None,
    typer.Option(
        "--ray",
        metavar="[ADDRESS]",
        help="Run on Ray: alone, a local instance; 'auto', the cluster of `ray start`; or HOST:PORT.",
    ),
]
RoleOpt = Annotated[
    list[str] | None,
    typer.Option(help="A model role on its own model, e.g. answerer=PROVIDER:MODEL (repeatable)."),
]
LimitPerOpt = Annotated[
    str | None,
    typer.Option(
        help="A stratified --limit: N groups (clips, scenes, rows) per value of this --subset key "
        "(task, category), so every task or category is scored."
    ),
]
RoleOptionOpt = Annotated[
    list[str] | None,
    typer.Option(help="A role's backend option NAME.key=value (NAME.base_url=URL for its server)."),
]


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print a one-line error (no stack trace) and return the Exit to raise."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def clean_errors(func: F) -> F:
    """Turn bad-input errors into one line on stderr and exit code 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from kinegraph.atomic import OutputError
        from kinegraph.errors import DataError, UsageError
        from kinegraph.registry import UnknownEntryError

        try:
            return func(*args, **kwargs)
        except (DataError, UsageError, UnknownEntryError) as exc:
            raise fail(str(exc)) from None
        except OutputError as exc:  # an --out that cannot be written: a directory, a full disk
            raise fail(str(exc)) from None
        except Exception as exc:
            # imported only once something failed: the agents package (asyncio, SQLite) slows every start
            from kinegraph.agents.errors import BackendError
            from kinegraph.extras import missing_extra

            if isinstance(exc, BackendError):
                raise fail(str(exc)) from None
            if (missing := missing_extra(exc, f"kinegraph {func.__name__.replace('_', ' ')}")) is not None:
                raise fail(str(missing)) from None
            raise

    return wrapper  # type: ignore[return-value]


def os_error_line(exc: OSError, where: Path) -> str:
    """`<path>: <strerror>` of a failed write; `where` stands in when the error names no file."""
    return f"{exc.filename or where}: {exc.strerror or exc}"


def write_or_print(text: str, out: Path | None) -> None:
    if out is None:
        sys.stdout.write(text)
    else:
        from kinegraph.atomic import write_atomic

        write_atomic(out, text)
        typer.echo(f"wrote {out}", err=True)


app.add_typer(
    typer.Typer(cls=EvaluateGroup),
    name="evaluate",
    help="Re-score stored predictions with a benchmark's official metric.",
    no_args_is_help=True,
)


@app.command()
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


def parse_options(pairs: list[str] | None) -> dict[str, Any]:
    """`key=value` pairs; values are JSON when they parse (numbers, true/false, lists), else strings."""
    import json

    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise fail(f"expected key=value, got {pair!r}")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def ray_options(
    address: str,
    workers: int | None = None,
    shard_groups: int = 1,
    cpus: float | None = None,
    gpus: float | None = None,
    runtime_env: str | None = None,
) -> Any:
    """RayOptions from the `--ray*` flags (`local` = start a local instance)."""
    import json

    from pydantic import ValidationError

    from kinegraph.run.on_ray import RayOptions

    try:
        env = json.loads(runtime_env) if runtime_env else None
        return RayOptions(
            address=None if address == "local" else address,
            workers=workers,
            shard_groups=shard_groups,
            num_cpus=cpus,
            num_gpus=gpus,
            runtime_env=env,
        )
    except (json.JSONDecodeError, ValidationError) as exc:
        raise fail(f"bad --ray option: {exc}") from None


@app.command()
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


@app.command()
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


@app.command()
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


@app.command()
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


@app.command()
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


@app.command()
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
app.add_typer(data_app, name="data")


@data_app.command("quantiphy-counterfactual")
@clean_errors
def quantiphy_counterfactual(
    source: Annotated[Path, typer.Option("--from", help="A QuantiPhy table (CSV, parquet or its folder).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")],
) -> None:
    """The paper's counterfactual priors: one row per question per alpha (0.001 ... 700), truth alpha*y."""
    from kinegraph.benchmarks.quantiphy_counterfactual import write_counterfactual_set

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

    if benchmark == "nuscenes":
        typer.echo(nuscenes_instructions())
        return
    if to is None:
        raise fail("--to is required: the folder to download into")
    record = fetch(benchmark, to, revision=revision, endpoint=endpoint)
    typer.echo(f"fetched {record.repo_id}@{record.commit} ({record.files} files) into {to}")
    if benchmark in ("egodyn", "tad", "stsbench"):
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


@app.command()
@clean_errors
def describe(
    graph: Annotated[str, typer.Argument(help="A registered graph (see `kinegraph list graphs`).")],
) -> None:
    """One graph in full: what it does, the questions it answers, what it needs, its options."""
    from kinegraph.listing import describe as describe_graph

    typer.echo(describe_graph(graph), nl=False)


@app.command("list")
def list_entries(
    kind: Annotated[str, typer.Argument(help="benchmarks, graphs or models.", show_default=False)],
) -> None:
    """List what is registered: benchmarks (primary metric, scorer), graphs, or model providers."""
    from kinegraph.listing import LISTINGS

    if kind not in LISTINGS:
        raise fail(f"cannot list {kind!r}; choose one of {', '.join(LISTINGS)}")
    typer.echo(LISTINGS[kind](), nl=False)


@app.command()
@clean_errors
def serve(
    host: Annotated[
        str, typer.Option(help="Interface to listen on (non-loopback needs API keys).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port.")] = 8000,
    model: Annotated[
        str | None, typer.Option(envvar="KINEGRAPH_SERVE_MODEL", help="PROVIDER:MODEL behind the graphs.")
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(envvar="KINEGRAPH_SERVE_BASE_URL", help="Server URL for vllm / OpenAI-compatible."),
    ] = None,
    model_option: Annotated[
        list[str] | None,
        typer.Option(help="Backend option key=value of --model (as `run --model-option`)."),
    ] = None,
    role: RoleOpt = None,
    role_option: RoleOptionOpt = None,
    graph: Annotated[
        list[str] | None,
        typer.Option("--graph", "-g", help="Serve only these graphs (or package.module:build)."),
    ] = None,
    default_graph: Annotated[
        str, typer.Option(help="Graph used when a request names none.")
    ] = "egodyn.vision",
    data_root: Annotated[
        Path | None,
        typer.Option(envvar="KINEGRAPH_DATA_ROOT", help="Directory file references are confined to."),
    ] = None,
    api_keys_file: Annotated[
        Path | None,
        typer.Option(envvar="KINEGRAPH_API_KEYS_FILE", help="API keys, one per line (+ KINEGRAPH_API_KEYS)."),
    ] = None,
    cache: Annotated[str | None, typer.Option(help="Response cache (SQLite) path; default: none.")] = None,
    max_body_mb: Annotated[float, typer.Option(help="Request body limit, MiB.")] = 32.0,
    max_image_pixels: Annotated[int, typer.Option(help="Pixels per image or video frame.")] = 4096 * 4096,
    max_frames: Annotated[int, typer.Option(help="Frames per request.")] = 64,
    timeout: Annotated[float, typer.Option(help="Per-request timeout, seconds.")] = 120.0,
    concurrency: Annotated[int, typer.Option(help="Requests handled at once.")] = 16,
    queue: Annotated[int, typer.Option(help="Requests that may wait for a slot; more get 429.")] = 32,
    per_client: Annotated[
        int, typer.Option(help="Requests one client (API key) may have running or queued; more get 429.")
    ] = 8,
    body_timeout: Annotated[
        float, typer.Option(help="Seconds a request body may take to arrive (408).")
    ] = 30.0,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(help="Without API keys: a Host/Origin name besides loopback to answer (a proxy's)."),
    ] = None,
    forwarded_allow_ips: Annotated[
        str, typer.Option(help="Comma-separated proxy addresses whose X-Forwarded-For is trusted.")
    ] = "",
) -> None:
    """Serve graphs as a driving-QA HTTP endpoint (/v1/qa, OpenAI-compatible /v1/chat/completions)."""
    from kinegraph.roles import parse_roles
    from kinegraph.serve import ServeSettings, load_api_keys
    from kinegraph.serve import serve as run_server

    try:
        settings = ServeSettings(
            model=model,
            base_url=base_url,
            model_options=parse_options(model_option),
            roles=parse_roles(role or [], role_option or []),
            cache=cache,
            graphs=tuple(graph or ()),
            default_graph=default_graph if not graph or default_graph in graph else graph[0],
            api_keys=load_api_keys(api_keys_file),
            data_root=data_root,
            max_body_bytes=int(max_body_mb * 2**20),
            max_image_pixels=max_image_pixels,
            max_frames=max_frames,
            request_timeout_s=timeout,
            max_concurrency=concurrency,
            max_waiting=queue,
            max_per_client=per_client,
            body_timeout_s=body_timeout,
            allowed_hosts=tuple(allow_host or ()),
            forwarded_allow_ips=tuple(ip.strip() for ip in forwarded_allow_ips.split(",") if ip.strip()),
        )
        run_server(settings, host=host, port=port)
    except ValueError as exc:
        raise fail(str(exc)) from None


@app.command("mcp")
def mcp_command(
    data_root: Annotated[
        Path | None,
        typer.Option(envvar="KINEGRAPH_DATA_ROOT", help="Directory media paths are confined to."),
    ] = None,
    transport: Annotated[str, typer.Option(help="stdio, or http (streamable HTTP at /mcp).")] = "stdio",
    host: Annotated[str, typer.Option(help="Interface for http (loopback only).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="TCP port for http.")] = 8765,
    max_frames: Annotated[int, typer.Option(help="Frames a tool may decode from one video.")] = 64,
    max_image_pixels: Annotated[int, typer.Option(help="Pixels per image or video frame.")] = 4096 * 4096,
    max_video_frames: Annotated[int, typer.Option(help="Frames a referenced video may hold.")] = 3000,
    max_calls: Annotated[int, typer.Option(help="Tool calls measured at once; the rest wait.")] = 2,
    max_decoded_mb: Annotated[
        int, typer.Option(help="MiB of decoded pixels one call may keep (memory: this x --max-calls).")
    ] = 1024,
) -> None:
    """Serve the deterministic tools over the Model Context Protocol (see docs/mcp.md)."""
    from kinegraph.extras import MissingExtraError

    try:
        from kinegraph.mcp_server import serve_mcp
        from kinegraph.serve.settings import is_loopback
        from kinegraph.tool_registry import MediaLimits
    except ImportError as exc:
        raise fail(str(MissingExtraError("kinegraph mcp", exc.name or "mcp", "mcp"))) from None
    if transport not in ("stdio", "http"):
        raise fail(f"--transport must be stdio or http, got {transport!r}")
    if transport == "http" and not is_loopback(host):
        raise fail(f"refusing to listen on {host}: the MCP server has no authentication (use loopback)")
    try:
        if max_calls < 1:
            raise ValueError(f"--max-calls must be at least 1, got {max_calls}")
        if not 1 <= max_decoded_mb <= 2**20:
            raise ValueError(f"--max-decoded-mb must be between 1 and {2**20}, got {max_decoded_mb}")
        limits = MediaLimits(
            data_root, max_frames, max_image_pixels, max_video_frames, max_decoded_mb * 2**20
        ).checked_root()
    except ValueError as exc:
        raise fail(str(exc)) from None
    serve_mcp(limits, transport, host, port, max_calls)  # type: ignore[arg-type]


@app.command()
def version() -> None:
    """Print the kinegraph version."""
    from kinegraph import __version__

    typer.echo(__version__)


if __name__ == "__main__":
    app()
