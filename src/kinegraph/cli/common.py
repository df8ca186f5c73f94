"""What every command shares: the top-level group's error handling, option types, one-line failures."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from typer._click import exceptions as click_errors  # typer vendors click; its errors live here
from typer.core import TyperGroup

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
        except click_errors.NoArgsIsHelpError as exc:
            typer.echo(exc.ctx.get_help() if exc.ctx else exc.format_message(), err=True)
            sys.exit(2)
        except click_errors.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx else "kinegraph"
            typer.echo(f"error: {where}: {exc.format_message().rstrip('.')} (see {where} --help)", err=True)
            sys.exit(2)
        except click_errors.ClickException as exc:
            typer.echo(f"error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except typer.Abort:
            typer.echo("error: interrupted", err=True)
            sys.exit(130)
        sys.exit(code if isinstance(code, int) else 0)


F = TypeVar("F", bound=Callable[..., Any])


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

            if isinstance(exc, BackendError):
                raise fail(str(exc)) from None
            raise

    return wrapper  # type: ignore[return-value]


def os_error_line(exc: OSError, where: Path) -> str:
    """`<path>: <strerror>` of a failed write; `where` stands in when the error names no file."""
    return f"{exc.filename or where}: {exc.strerror or exc}"


def write_or_print(text: str, out: Path | None) -> None:
    """`text` on stdout, or written atomically to `out` (and said on stderr)."""
    if out is None:
        sys.stdout.write(text)
    else:
        from kinegraph.atomic import write_atomic

        write_atomic(out, text)
        typer.echo(f"wrote {out}", err=True)


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
