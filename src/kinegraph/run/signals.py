"""SIGTERM stops a run as Ctrl-C does: the run records "interrupted" and its directory stays resumable."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """While the body runs, SIGTERM (`kill`, a scheduler's stop) goes the way of SIGINT."""
    if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):  # asyncio.Runner's own handler cancels the run's task, exactly as for Ctrl-C
        handler(signal.SIGINT, frame)
        return
    raise KeyboardInterrupt  # SIGINT ignored (a background job): stop all the same
