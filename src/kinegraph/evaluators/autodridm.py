"""AutoDriDM scorer. NON-OFFICIAL: the benchmark publishes no parser or scorer; this one is defined here.

Parse: the content of the first `<answer>...</answer>` (else the whole text); its stand-alone capital
letters are the choice (single-choice: the first one). Per question: single-choice 1 if the letter is the
answer; multi-select 1 for the exact letter set, 0 if any chosen letter is wrong or nothing is chosen,
and for a non-empty proper subset the `partial_credit` mode: "none" (default, 0), "half" (0.5) or
"fraction" (|chosen| / |answer|), the paper's "partial credit for subsets" without its amount. Missing
predictions count 0. Task score = mean over its questions; `average` = mean of the six task scores
(the paper's Avg Score); levels = mean of their two tasks; the same again on the high-risk split
(danger_score >= 4) and per source dataset. `correlation` is the paper's cross-task analysis: the
Pearson (phi) correlation of binary exact correctness between two tasks over the images both cover,
where an image counts as right on a task when every question of that task on it is exactly right.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from kinegraph.benchmarks.autodridm.loader import TASKS
from kinegraph.errors import DataError
from kinegraph.jsonfiles import read_jsonl
from kinegraph.types import Sample

PARTIAL_CREDIT_MODES: tuple[str, ...] = ("none", "half", "fraction")
LEVELS: tuple[str, ...] = ("Object", "Scene", "Decision")

_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
_STANDALONE_LETTER = re.compile(r"(?<![A-Za-z])([A-Z])(?![A-Za-z])")


def parse_letters(raw: str | None, multi_select: bool) -> list[str]:
    """Chosen letters: all distinct stand-alone capitals (multi-select, sorted) or the first one."""
    if not raw:
        return []
    tagged = _ANSWER.search(raw)
    letters = _STANDALONE_LETTER.findall(tagged.group(1) if tagged else raw)
    if not multi_select:
        return letters[:1]
    return sorted(set(letters))


def credit(chosen: Sequence[str], answer: Sequence[str], partial_credit: str = "none") -> float:
    """Score of one question: 1 exact, 0 any wrong or empty, partial credit for a proper subset."""
    if partial_credit not in PARTIAL_CREDIT_MODES:
        raise ValueError(f"partial_credit must be one of {PARTIAL_CREDIT_MODES}, got {partial_credit!r}")
    chosen_set, answer_set = set(chosen), set(answer)
    if not chosen_set or not chosen_set <= answer_set:
        return 0.0
    if chosen_set == answer_set:
        return 1.0
    return {"none": 0.0, "half": 0.5, "fraction": len(chosen_set) / len(answer_set)}[partial_credit]


class ScoredQuestion(NamedTuple):
    """One question's outcome and the keys it is grouped by."""

    sample_id: str
    task: str
    image: str
    high_risk: bool
    source: str | None
    credit: float
    exact: bool
    answered: bool


def _answer_list(sample: Sample) -> list[str]:
    return list(sample.answer) if isinstance(sample.answer, list) else [str(sample.answer)]


def score_question(sample: Sample, raw: str | None, partial_credit: str = "none") -> ScoredQuestion:
    """Parse and score one prediction (raw None = no prediction)."""
    multi = bool(sample.metadata.get("multi_select"))
    chosen = parse_letters(raw, multi)
    value = credit(chosen, _answer_list(sample), partial_credit)
    return ScoredQuestion(
        sample.id,
        str(sample.metadata["task"]),
        sample.group,
        bool(sample.metadata.get("high_risk")),
        sample.metadata.get("source_dataset"),
        value,
        set(chosen) == set(_answer_list(sample)),
        raw is not None,
    )


def _task_table(scored: Sequence[ScoredQuestion]) -> dict[str, Any]:
    by_task: dict[str, list[float]] = defaultdict(list)
    for q in scored:
        by_task[q.task].append(q.credit)
    tasks = {t: float(np.mean(by_task[t])) for t in TASKS if by_task.get(t)}
    levels = {
        level: float(np.mean([tasks[t] for t in TASKS if t.startswith(level) and t in tasks]))
        for level in LEVELS
        if any(t.startswith(level) and t in tasks for t in TASKS)
    }
    return {
        "tasks": tasks,
        "levels": levels,
        "average": float(np.mean(list(tasks.values()))) if len(tasks) == len(TASKS) else None,
        "n": {t: len(by_task[t]) for t in TASKS if by_task.get(t)},
    }


def _phi(x: np.ndarray, y: np.ndarray) -> float | None:
    if len(x) < 2 or x.std() == 0 or y.std() == 0:
        return None
    return float(np.corrcoef(x, y)[0, 1])


def correlation(scored: Sequence[ScoredQuestion]) -> dict[str, Any]:
    """6x6 phi matrix (task order as the paper) over shared images; null where undefined."""
    per_image: dict[str, dict[str, bool]] = defaultdict(dict)
    for q in scored:
        per_image[q.task][q.image] = per_image[q.task].get(q.image, True) and q.exact
    matrix: list[list[float | None]] = []
    counts: list[list[int]] = []
    for a in TASKS:
        row, count_row = [], []
        for b in TASKS:
            common = sorted(set(per_image[a]) & set(per_image[b]))
            count_row.append(len(common))
            if a == b:
                row.append(1.0 if common else None)
                continue
            x = np.array([per_image[a][i] for i in common], dtype=float)
            y = np.array([per_image[b][i] for i in common], dtype=float)
            row.append(_phi(x, y))
        matrix.append(row)
        counts.append(count_row)
    return {"tasks": list(TASKS), "phi": matrix, "n_images": counts}


def score(
    samples: Iterable[Sample], raw_by_id: Mapping[str, str | None], partial_credit: str = "none"
) -> dict[str, Any]:
    """The metric dict: all, high_risk and per-source tables, the correlation analysis, coverage."""
    samples = list(samples)
    known = {s.id for s in samples}
    unknown = sorted(set(raw_by_id) - known)
    if unknown:
        raise DataError(
            f"{len(unknown)} prediction(s) for unknown sample ids, e.g. {unknown[0]!r}", field="id"
        )
    scored = [score_question(s, raw_by_id.get(s.id), partial_credit) for s in samples]
    sources = sorted({q.source for q in scored if q.source is not None})
    return {
        "scorer": "kinegraph AutoDriDM scorer (non-official: no official scorer exists)",
        "partial_credit": partial_credit,
        "all": _task_table(scored),
        "high_risk": _task_table([q for q in scored if q.high_risk]),
        "by_source": {src: _task_table([q for q in scored if q.source == src]) for src in sources},
        "correlation": {
            "all": correlation(scored),
            "high_risk": correlation([q for q in scored if q.high_risk]),
        },
        "n_questions": len(scored),
        "n_missing": sum(1 for q in scored if not q.answered),
    }


def read_predictions(path: str | Path) -> dict[str, str | None]:
    """sample id -> raw model text from a JSONL of `{"sample_id"|"id", "raw"|"prediction"|"answer"}`.

    kinegraph's own predictions.jsonl qualifies; a later line for the same id replaces an earlier one.
    """
    path = Path(path)
    out: dict[str, str | None] = {}
    for lineno, record in read_jsonl(path):
        sample_id = record.get("sample_id", record.get("id"))
        if sample_id is None:
            raise DataError("missing", path=path, line=lineno, field="sample_id")
        text = next((record[k] for k in ("raw", "prediction", "answer") if record.get(k) is not None), None)
        if isinstance(text, list):
            text = ",".join(map(str, text))
        out[str(sample_id)] = None if text is None else str(text)
    return out
