"""How each run's model used the tools it was offered: calls per question, which tools, and the primary
metric on the questions where it called a tool vs those where it did not.

Calls are read from each prediction's trace, where the tool-call loop (`graphs.tool_calls.ask_with_tools`)
records one entry per call with its round, tool name, arguments and output. A grouped graph shares one
conversation among a clip's questions, so each of them lists (and counts) the clip's calls.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kinegraph.report.cells import fmt
from kinegraph.report.runs import RunData
from kinegraph.suites import samples_from_predictions
from kinegraph.types import Prediction


@dataclass(frozen=True)
class ToolUse:
    """One run's tool use; `primary_with` / `primary_without`: the primary metric on the questions with at
    least one call / with none (None where that subset is empty)."""

    questions: int
    calls: int
    tools: dict[str, int]
    questions_with_calls: int
    primary_with: float | None
    primary_without: float | None

    @property
    def calls_per_question(self) -> float:
        return self.calls / self.questions if self.questions else 0.0

    @property
    def share_with_calls(self) -> float:
        return self.questions_with_calls / self.questions if self.questions else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "questions": self.questions,
            "calls": self.calls,
            "calls_per_question": self.calls_per_question,
            "tools": self.tools,
            "questions_with_calls": self.questions_with_calls,
            "share_with_calls": self.share_with_calls,
            "primary_with_calls": self.primary_with,
            "primary_without_calls": self.primary_without,
        }


def tool_calls(prediction: Prediction) -> list[dict[str, Any]]:
    """The tool calls a prediction's trace records (entries with a round and a tool name)."""
    return [e for e in prediction.trace if "tool" in e and "round" in e]


def _primary(run: RunData, predictions: Sequence[Prediction]) -> float | None:
    """The suite's primary metric scored on `predictions` alone (None when there are none)."""
    if not predictions:
        return None
    suite = run.suite
    value = suite.headline(suite.score(samples_from_predictions(predictions), predictions)).get(suite.primary)
    return None if value is None else float(value)


def tool_use(run: RunData) -> ToolUse:
    """Count a run's tool calls and score the questions with and without them."""
    counts: Counter[str] = Counter()
    with_calls: list[Prediction] = []
    without: list[Prediction] = []
    for p in run.predictions:
        calls = tool_calls(p)
        counts.update(str(c["tool"]) for c in calls)
        (with_calls if calls else without).append(p)
    return ToolUse(
        questions=len(run.predictions),
        calls=sum(counts.values()),
        tools=dict(counts.most_common()),
        questions_with_calls=len(with_calls),
        primary_with=_primary(run, with_calls),
        primary_without=_primary(run, without),
    )


def tool_use_rows(runs: Sequence[RunData], primary: str) -> tuple[list[str], list[list[str]]]:
    """One row per run; no rows when no run called a tool (the section is then left out)."""
    uses = [tool_use(r) for r in runs]
    if not any(u.calls for u in uses):
        return [], []
    header = [
        "run",
        "calls / question",
        "tools (calls)",
        "questions with ≥ 1 call",
        f"{primary} with calls",
        f"{primary} without calls",
    ]
    body = [
        [
            run.label,
            f"{u.calls_per_question:.2f}",
            ", ".join(f"{name} {n}" for name, n in u.tools.items()) or "—",
            f"{u.share_with_calls:.1%} ({u.questions_with_calls}/{u.questions})",
            fmt(u.primary_with),
            fmt(u.primary_without),
        ]
        for run, u in zip(runs, uses, strict=True)
    ]
    return header, body
