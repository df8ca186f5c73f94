"""How many groups (clips) the local runner keeps in flight: enough to keep the model calls busy, no more.

A group's frames and encoded images live as long as the group, so the number of groups in flight, not the
call limit, sets a run's memory. With 14 questions a clip, 64 calls are filled by 5 clips; keeping 64 clips
open instead held 64 clips of frames (over 1 GB at 800x450) for no speed. The limit is
ceil(concurrency / calls a group makes at once) + `MARGIN` clips being prepared, at most `concurrency`.
A group makes at most one call per question at a time, and one in all when it asks in one grouped
request; the estimate starts at the mean group size and follows the groups that finished.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from kinegraph.types import Prediction, Sample

MARGIN = 2  # clips decoding while the others' calls are in flight, so the calls never wait for frames


class ClipLimit:
    """The groups-in-flight limit of one run at `concurrency` model calls."""

    def __init__(self, concurrency: int, groups: Sequence[Sequence[Sample]]) -> None:
        self.concurrency = max(1, concurrency)
        self._calls = sum(len(g) for g in groups) / len(groups) if groups else 1.0
        self._observed = 1  # the prior counts as one group

    def observe(self, predictions: Sequence[Prediction]) -> None:
        """Learn from a finished group: its calls at once are min(questions, requests made or cached)."""
        requests = sum(p.usage.requests + p.usage.cached_requests for p in predictions)
        self._calls += min(len(predictions), requests)
        self._observed += 1

    @property
    def limit(self) -> int:
        per_group = max(1.0, self._calls / self._observed)
        return min(self.concurrency, math.ceil(self.concurrency / per_group) + MARGIN)
