"""TAD scorer, as upstream `evaluation.py` (vbdi/tad_bench@1c89f7e), plus the averages the paper reports.

Stages: per task, `accuracy` (lower-cased string equality), `exact_match` (punctuation-stripped) or
`miou` (set IoU of keysegment lists); `score_model` runs them over one model's `<task>.jsonl` files in
one of upstream's eval modes; `score` adds the unweighted task averages (7 tasks; 6 ego; 5 non-ego),
which upstream leaves to the paper. Upstream quirks kept: the denominator is the number of ground-truth
questions (a missing prediction scores 0), every prediction line counts (a duplicated idx counts twice),
an empty prediction file leaves its task unscored, and ids compare by type (`3` is not `"3"`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kinegraph.benchmarks.tad.loader import (
    EGO_ONLY_TASKS,
    MIXED_TASKS,
    NON_EGO_ONLY_TASKS,
    TASKS,
    is_ego_question,
)
from kinegraph.errors import DataError
from kinegraph.jsonfiles import read_jsonl

MODES: tuple[str, ...] = ("all", "ego", "non-ego")
MODE_TASK_COUNT = {"all": 7, "ego": 6, "non-ego": 5}

_PUNCTUATION = re.compile(r"[^\w\s]")

Records = Sequence[Mapping[str, Any]]


def clean_text(value: Any) -> str:
    """Lower-case, strip, drop every character that is neither a word character nor whitespace."""
    return _PUNCTUATION.sub("", str(value).strip().lower())


def accuracy(predictions: Records, gt_map: Mapping[Any, Any]) -> float:
    """Share of ground-truth questions whose prediction equals the answer, case-insensitively."""
    if not gt_map:
        return 0.0
    correct = sum(
        1
        for p in predictions
        if p["idx"] in gt_map and str(p["pred"]).lower() == str(gt_map[p["idx"]]).lower()
    )
    return correct / len(gt_map)


def exact_match(predictions: Records, gt_map: Mapping[Any, Any]) -> float:
    """Share of ground-truth questions whose cleaned prediction equals the cleaned answer."""
    if not gt_map:
        return 0.0
    correct = sum(
        1 for p in predictions if p["idx"] in gt_map and clean_text(p["pred"]) == clean_text(gt_map[p["idx"]])
    )
    return correct / len(gt_map)


def set_iou(pred: Any, gt: Any) -> float:
    """IoU of two value sets; scalars count as one-element lists; an empty union scores 0."""
    pred_set = set(pred if isinstance(pred, list) else [pred])
    gt_set = set(gt if isinstance(gt, list) else [gt])
    union = len(pred_set | gt_set)
    return len(pred_set & gt_set) / union if union else 0.0


def miou(predictions: Records, gt_map: Mapping[Any, Any]) -> float:
    """Mean set IoU over all ground-truth questions (missing predictions add 0)."""
    if not gt_map:
        return 0.0
    return sum(set_iou(p["pred"], gt_map[p["idx"]]) for p in predictions if p["idx"] in gt_map) / len(gt_map)


METRICS: dict[str, Callable[[Records, Mapping[Any, Any]], float]] = {
    "exact_answer_action": exact_match,
    "mc_action": accuracy,
    "action_duration": accuracy,
    "temp_ordering": accuracy,
    "temp_action_localize": miou,
    "relative_action_localize": accuracy,
    "temp_object_localize": miou,
}


def filter_ground_truth(task: str, rows: Records, mode: str) -> list[Mapping[str, Any]]:
    """The ground-truth rows a mode keeps; [] means the task has no such questions (left unscored)."""
    if mode == "all":
        return list(rows)
    if mode == "ego":
        if task in EGO_ONLY_TASKS:
            return list(rows)
        return [r for r in rows if is_ego_question(r.get("question"))] if task in MIXED_TASKS else []
    if mode == "non-ego":
        if task in NON_EGO_ONLY_TASKS:
            return list(rows)
        return [r for r in rows if not is_ego_question(r.get("question"))] if task in MIXED_TASKS else []
    raise ValueError(f"mode must be one of {MODES}, got {mode!r}")


def score_task(task: str, predictions: Records, gt_rows: Records, mode: str = "all") -> float | None:
    """One task's score in one mode, or None where upstream skips it (no predictions, no questions)."""
    if task not in METRICS:
        raise DataError(f"unknown TAD task {task!r}; known: {', '.join(TASKS)}")
    if not predictions or not gt_rows:
        return None
    kept = filter_ground_truth(task, gt_rows, mode)
    if not kept:
        return None
    if mode != "all":
        valid = {r["idx"] for r in kept}
        predictions = [p for p in predictions if p["idx"] in valid]
    gt_map = {r["idx"]: r["answer"] for r in kept}
    try:
        return METRICS[task](predictions, gt_map)
    except TypeError as exc:  # e.g. a list of lists as a localisation prediction: upstream crashes
        raise DataError(f"task {task}: unscorable prediction ({exc})", field="pred") from exc


def score_model(
    predictions: Mapping[str, Records], ground_truth: Mapping[str, Records], mode: str = "all"
) -> dict[str, float]:
    """Task -> score for one model; tasks without a prediction file or ground truth are left out."""
    scores = {}
    for task in TASKS:
        if task in predictions and task in ground_truth:
            value = score_task(task, predictions[task], ground_truth[task], mode)
            if value is not None:
                scores[task] = value
    return scores


def with_average(scores: Mapping[str, float], mode: str) -> dict[str, float | None]:
    """Scores plus `average`, the unweighted task mean; None unless every task of the mode is scored."""
    out: dict[str, float | None] = dict(scores)
    complete = len(scores) == MODE_TASK_COUNT[mode]
    out["average"] = sum(scores.values()) / len(scores) if complete else None
    return out


def score(
    predictions: Mapping[str, Records], ground_truth: Mapping[str, Records], modes: Iterable[str] = MODES
) -> dict[str, Any]:
    """`{mode: {task: score, ..., "average": x}}` for all, ego and non-ego (keys as upstream's modes)."""
    return {mode: with_average(score_model(predictions, ground_truth, mode), mode) for mode in modes}


def read_prediction_file(path: str | Path) -> list[dict[str, Any]]:
    """One `<task>.jsonl` (`{"idx", "pred", ...}` per line; blank lines skipped, as upstream)."""
    path = Path(path)
    records = []
    for lineno, record in read_jsonl(path):
        for field in ("idx", "pred"):
            if field not in record:  # upstream raises KeyError
                raise DataError("missing", path=path, line=lineno, field=field)
        records.append(record)
    return records


def read_prediction_dir(path: str | Path) -> dict[str, list[dict[str, Any]]]:
    """Task -> records from `<dir>/<task>.jsonl`; unknown task names are an error (upstream skips them)."""
    path = Path(path)
    if not path.is_dir():
        raise DataError("not a directory of <task>.jsonl prediction files", path=path)
    out = {}
    for file in sorted(path.glob("*.jsonl")):
        if file.stem not in METRICS:
            raise DataError(f"unknown TAD task {file.stem!r}; known: {', '.join(TASKS)}", path=file)
        out[file.stem] = read_prediction_file(file)
    if not out:
        raise DataError("no <task>.jsonl prediction files", path=path)
    return out
