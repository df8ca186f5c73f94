"""A run's record in its directory: run.json when it starts, metrics, official files and totals at the end."""

from __future__ import annotations

import statistics
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from kinegraph.graphs.state import GraphContext
from kinegraph.run.plan import RunPlan
from kinegraph.run.seeding import seed_sent, warn_unsent_seed
from kinegraph.run.verdict import run_failure
from kinegraph.rundir import (
    METRICS,
    OFFICIAL,
    PREDICTIONS,
    RUN_JSON,
    git_sha,
    now,
    read_json,
    read_predictions,
    versions,
    write_json,
)
from kinegraph.types import (
    FAILED_STATUSES,
    Prediction,
    Sample,
    Usage,
    group_warnings,
    usage_per_role,
)


class RunSummary(BaseModel):
    out_dir: str
    status: str
    n_samples: int
    n_predictions: int
    n_new: int
    status_counts: dict[str, int] = Field(default_factory=dict)
    usage: Usage = Field(default_factory=Usage)
    usage_by_role: dict[str, Usage] = Field(default_factory=dict)  # roles' models: run.json `role_models`
    elapsed_s: float = 0.0
    groups: int = 0
    decodes: int = 0
    tool_calls: int = 0  # batched GPU-tool calls; fewer than the clips measured = clips shared calls
    warnings: dict[str, int] = Field(default_factory=dict)  # warning -> groups it was raised for
    metrics: dict[str, Any] | None = None
    headline: dict[str, float | None] | None = None
    #: why a run that ran to its end still failed (nothing answered, too many errors); None: it did not
    failure: str | None = None


def start_run(plan: RunPlan, **extra: Any) -> dict[str, Any]:
    """Write run.json's opening state; a resumed run keeps its first start time and counts sessions.

    `seed_sent` says per model role whether its requests carry a sampling seed; a seed that some model
    does not take is also said on stderr.
    """
    config = plan.config
    out_dir = Path(config.out_dir)
    previous = read_json(out_dir / RUN_JSON) or {}
    started = now()
    sent = seed_sent(plan)
    warn_unsent_seed(plan, sent)
    run_info = {
        "config": config.model_dump(),
        "role_models": dict(plan.role_models),
        "seed_sent": sent,
        "versions": versions(),
        "git_sha": git_sha(),
        "started_at": previous.get("started_at", started),
        "session_started_at": started,
        "sessions": previous.get("sessions", 0) + 1,
        "status": "running",
        **extra,
    }
    write_json(out_dir / RUN_JSON, run_info)
    return run_info


def finish_run(
    plan: RunPlan,
    samples: Sequence[Sample],
    run_info: dict[str, Any],
    status: str,
    n_new: int,
    elapsed_s: float,
    context: GraphContext,
    known: Mapping[str, Prediction] | None = None,
) -> RunSummary:
    """Score what is there, export the official files, and write run.json with totals.

    `known` is the log already in memory (everything in predictions.jsonl); without it the file is read.
    """
    config = plan.config
    out_dir = Path(config.out_dir)
    ids = {s.id for s in samples}
    everything = known.values() if known is not None else read_predictions(out_dir / PREDICTIONS)
    predictions = [p for p in everything if p.sample_id in ids]
    usage = Usage()
    for p in predictions:
        usage = usage + p.usage
    summary = RunSummary(
        out_dir=str(out_dir),
        status=status,
        n_samples=len(samples),
        n_predictions=len(predictions),
        n_new=n_new,
        status_counts=dict(Counter(str(p.status) for p in predictions)),
        usage=usage,
        usage_by_role=usage_per_role(predictions),
        elapsed_s=elapsed_s,
        groups=context.stats.groups,
        decodes=context.stats.decodes,
        tool_calls=context.stats.tool_calls + context.tools.calls(),
        warnings=group_warnings(predictions),
    )
    n_groups = len({p.group or p.sample_id for p in predictions})
    for warning, count in summary.warnings.items():
        print(f"warning: {count} of {n_groups} groups: {warning}", file=sys.stderr, flush=True)
    if predictions:
        suite = plan.suite
        metrics = suite.score(samples, predictions)
        write_json(out_dir / METRICS, metrics)
        suite.export(samples, predictions, out_dir / OFFICIAL)
        summary.metrics, summary.headline = metrics, suite.headline(metrics)
    latencies = [p.latency_s for p in predictions if p.latency_s]
    n_failed = sum(p.status in FAILED_STATUSES for p in predictions)
    if status == "completed":
        summary.failure = run_failure(predictions, len(samples), config.max_error_rate)
        if summary.failure is not None:
            status = summary.status = "failed"
    write_json(
        out_dir / RUN_JSON,
        {
            **run_info,
            "status": status,
            **({"failure": summary.failure} if summary.failure else {}),
            "ended_at": now(),
            "totals": {
                **summary.model_dump(exclude={"metrics", "out_dir"}),
                "error_rate": n_failed / max(1, len(predictions)),
                "latency_s_mean": statistics.fmean(latencies) if latencies else None,
                "latency_s_p50": statistics.median(latencies) if latencies else None,
                "decodes_per_group": context.stats.decodes / max(1, context.stats.groups),
            },
        },
    )
    return summary
