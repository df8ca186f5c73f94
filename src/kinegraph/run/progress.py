"""The run progress bar: done/total, rate, ETA, errors and cost, on stderr (stdout carries the JSON)."""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from kinegraph.types import FAILED_STATUSES, Prediction


class RunProgress:
    """A rich progress bar fed with finished predictions; silent when disabled."""

    def __init__(self, total: int, done: int = 0, enabled: bool = True) -> None:
        self.errors = 0
        self._progress = Progress(
            TextColumn("[bold]run"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeRemainingColumn(),
            TextColumn("errors {task.fields[errors]}"),
            TextColumn("${task.fields[cost]:.4f}"),
            console=Console(stderr=True),
            disable=not enabled,
            transient=False,
        )
        self._task = self._progress.add_task("run", total=total, completed=done, errors=0, cost=0.0, rate="")
        self._start_done = done

    def __enter__(self) -> RunProgress:
        self._progress.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._progress.stop()

    def advance(self, predictions: Sequence[Prediction], cost: float) -> None:
        self.errors += sum(1 for p in predictions if p.status in FAILED_STATUSES)
        task = self._progress.tasks[0]
        elapsed = task.elapsed or 0.0
        done_now = task.completed + len(predictions) - self._start_done
        rate = f"{done_now / elapsed:.1f}/s" if elapsed > 0 else ""
        self._progress.update(self._task, advance=len(predictions), errors=self.errors, cost=cost, rate=rate)
