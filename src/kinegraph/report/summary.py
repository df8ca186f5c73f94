"""Machine-readable view of a Comparison: every number of the report as plain JSON (NaN -> null)."""

from __future__ import annotations

import math
from typing import Any

from kinegraph.report.bootstrap import Delta
from kinegraph.report.compare import Comparison
from kinegraph.report.tool_use import tool_use


def _number(value: float | None) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def delta_dict(d: Delta) -> dict[str, Any]:
    """`{delta, low, high, n_groups, significant, p}` with null where undefined."""
    return {
        "delta": _number(d.delta),
        "low": _number(d.low),
        "high": _number(d.high),
        "n_groups": d.n_groups,
        "significant": d.significant,
        "p": _number(d.p),
    }


def as_dict(comparison: Comparison) -> dict[str, Any]:
    """Runs in order (the first is the baseline): headline, breakdown, deltas vs the baseline, tool use."""
    runs = []
    for i, run in enumerate(comparison.runs):
        delta = comparison.deltas[i]
        runs.append(
            {
                "name": run.name,
                "non_official": run.non_official,
                "path": str(run.path),
                "config": run.config,
                "n_predictions": len(run.predictions),
                "error_rate": run.error_rate,
                "latency_p50_s": run.latency_p50_s,
                "usage": run.usage.model_dump(),
                "usage_by_role": {
                    role: {"model": run.role_models.get(role), **usage.model_dump()}
                    for role, usage in run.usage_by_role.items()
                },
                "headline": {k: _number(v) for k, v in comparison.headlines[i].items()},
                "breakdown": {k: _number(v) for k, v in comparison.breakdowns[i].items()},
                "delta": None if delta is None else delta_dict(delta),
                "item_deltas": {k: delta_dict(d) for k, d in comparison.item_deltas[i].items()},
                "tool_use": tool_use(run).as_dict(),
            }
        )
    return {
        "benchmark": comparison.benchmark,
        "primary": comparison.primary,
        "scorer": comparison.scorer,
        "notes": comparison.notes,
        "interval": "paired bootstrap over groups, 95% percentile; deltas are run minus the first run",
        "n_boot": comparison.n_boot,
        "seed": comparison.seed,
        "items": comparison.item_names,
        "runs": runs,
        "pairs": [
            {"a": p.a, "b": p.b, **delta_dict(p.delta), "p_holm": _number(p.p_holm)} for p in comparison.pairs
        ],
        "factorial": {name: delta_dict(d) for name, d in comparison.factorial.items()},
    }
