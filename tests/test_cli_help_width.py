"""`--help` at 80 columns names every option in full (rich used to cut them: `--max-error-ra…`)."""

from __future__ import annotations

import click
import pytest
import typer
from typer.testing import CliRunner

from kinegraph.cli import app


def _commands() -> list[tuple[str, ...]]:
    """Every command's path, with one suite under `evaluate` (its subcommands are built on demand)."""
    root = typer.main.get_command(app)
    paths: list[tuple[str, ...]] = []
    for name, command in root.commands.items():  # type: ignore[attr-defined]
        paths.append((name,))
        if hasattr(command, "list_commands"):
            paths += [(name, sub) for sub in command.list_commands(click.Context(command))]
    return paths


def _option_names(path: tuple[str, ...]) -> list[str]:
    command = typer.main.get_command(app)
    ctx = click.Context(command)
    for part in path:
        command = command.get_command(ctx, part)  # type: ignore[attr-defined]
        ctx = click.Context(command, parent=ctx)
    return [
        name
        for p in command.params
        if isinstance(p, click.Option)
        for name in p.opts
        if name.startswith("--")
    ]


@pytest.mark.parametrize("path", _commands(), ids=" ".join)
def test_help_at_80_columns_names_every_option_in_full(path):
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "80", "TERMINAL_WIDTH": ""})
    assert result.exit_code == 0, result.output
    text = result.output
    for name in _option_names(path):
        assert f"{name} " in text or f"{name}\n" in text or f"{name}," in text, (path, name)
    assert "…" not in "".join(line for line in text.splitlines() if "--" in line), text
