"""The usage errors of the click that typer ships inside itself, reached through typer's public names.

typer vendors click and does not export its `UsageError` family; `typer.BadParameter` is public and is a
`UsageError`, so its class ancestry names the others without importing a private module.
"""

from __future__ import annotations

import typer


def _ancestor(name: str) -> type[Exception]:
    return next(cls for cls in typer.BadParameter.__mro__ if cls.__name__ == name)


#: Any error typer's click reports as a message and an exit code.
ClickException = _ancestor("ClickException")
#: A mistake in the command line (missing option, bad value, unknown command).
UsageError = _ancestor("UsageError")


def _no_args_is_help() -> type[Exception]:
    return next(cls for cls in UsageError.__subclasses__() if cls.__name__ == "NoArgsIsHelpError")


#: A group called with no arguments, whose answer is its help.
NoArgsIsHelpError = _no_args_is_help()

__all__ = ["ClickException", "NoArgsIsHelpError", "UsageError"]
