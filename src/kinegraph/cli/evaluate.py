"""`kinegraph evaluate <benchmark>`: one subcommand per registered suite, built when asked for."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from kinegraph.cli.common import (
    F,
    clean_errors,
    fail,
    write_or_print,
)


class EvaluateGroup(TyperGroup):
    """`kinegraph evaluate`: one subcommand per registered suite, built only when it is asked for."""

    def list_commands(self, ctx: typer.Context) -> list[str]:
        from kinegraph.suites import suites

        return suites.names()

    def get_command(self, ctx: typer.Context, cmd_name: str) -> TyperCommand | None:
        from kinegraph.suites import suites

        if cmd_name not in suites:
            return None
        from kinegraph.cli.evaluate_flags import evaluate_callback

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
