"""Holm's step-down correction of p-values: many items tested at once, family-wise error controlled."""

from __future__ import annotations

import math
from collections.abc import Sequence


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values in the input order; a NaN p is no test (stays NaN, not counted in m).

    Sorted ascending, the k-th smallest of m becomes max over j <= k of (m - j + 1) * p_(j), capped at 1,
    which controls the family-wise error rate without assuming independence.
    """
    tested = sorted((p, i) for i, p in enumerate(p_values) if not math.isnan(p))
    m = len(tested)
    out = [math.nan] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(tested):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out
