"""Whether a run that ran to its end succeeded: a run that answered nothing (a wrong `--base-url`, every
sample skipped by a graph of another benchmark) or whose failed share passes `--max-error-rate` (half its
videos unreadable) must not end `completed` with exit 0."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from kinegraph.types import FAILED_STATUSES, Prediction, Status

ANSWERED = (Status.ok, Status.parse_failure)


def run_failure(predictions: Sequence[Prediction], n_samples: int, max_error_rate: float) -> str | None:
    """One line saying why the run failed, or None when it did not."""
    if not n_samples:
        return None
    counts = Counter(str(p.status) for p in predictions)
    if not any(p.status in ANSWERED for p in predictions):
        what = ", ".join(f"{n} {s}" for s, n in counts.most_common()) or "no predictions"
        return f"no question was answered ({what}){_first_error(predictions)}"
    failed = [p for p in predictions if p.status in FAILED_STATUSES]
    rate = len(failed) / len(predictions)
    if rate > max_error_rate:
        return (
            f"{len(failed)} of {len(predictions)} predictions failed ({rate:.0%}, over --max-error-rate "
            f"{max_error_rate:.0%}){_first_error(failed)}"
        )
    return None


def _first_error(predictions: Sequence[Prediction]) -> str:
    first = next((p for p in predictions if p.error), None)
    if first is None:
        return ""
    line = first.error.splitlines()[0] if first.error else ""
    return f"; first: {first.status} on {first.sample_id}: {line[:200]}"
