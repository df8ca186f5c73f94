"""`kinegraph evaluate <benchmark>`, built from what the suite declares: its flags and `evaluate_files`.

The command's signature is made from the suite's `Flag`s plus `--out`, so typer gives every benchmark the
same parsing, help and error handling, and a new suite needs no CLI code.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from kinegraph.suites import Flag, Suite, Warn

OUT = Flag("out", Path | None, "Write here instead of stdout.", None, spellings=("--out", "-o"))


def flag_parameter(flag: Flag) -> inspect.Parameter:
    """The typer parameter of one declared flag (an argument, or an option under its spellings)."""
    if flag.positional:
        info = typer.Argument(help=flag.help, show_default=False, **flag.extra)
    else:
        spellings = flag.spellings or (f"--{flag.name.replace('_', '-')}",)
        info = typer.Option(*spellings, help=flag.help, **flag.extra)
    return inspect.Parameter(
        flag.name,
        inspect.Parameter.KEYWORD_ONLY,
        default=inspect.Parameter.empty if flag.default is ... else flag.default,
        annotation=Annotated[flag.type, info],
    )


def evaluate_callback(
    suite: Suite, write: Callable[[str, Path | None], None], warn: Warn
) -> Callable[..., None]:
    """A function typer can turn into the suite's command: score the files, then write or print the text."""
    if suite.evaluate_files is None:
        raise ValueError(f"benchmark {suite.name!r} declares no evaluate_files")
    evaluate_files = suite.evaluate_files

    def evaluate(**values: Any) -> None:
        out = values.pop("out")
        write(evaluate_files(warn=warn, **values), out)

    parameters = [flag_parameter(flag) for flag in (*suite.evaluate_flags, OUT)]
    evaluate.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    evaluate.__annotations__ = {p.name: p.annotation for p in parameters}
    card = suite.card  # the benchmark's card: what the scores are measured against
    about = f"\n\n{card.title} ({card.paper}); upstream {card.upstream}; {suite.scorer}." if card else ""
    evaluate.__doc__ = (inspect.getdoc(evaluate_files) or "") + about
    return evaluate
