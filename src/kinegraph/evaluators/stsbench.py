"""STSBench scorer, as upstream `eval/eval.py` (LRP-IVC/STSBench@38c5174).

A prediction is right when the FIRST CHARACTER of the raw model output equals the ground-truth letter,
case-insensitively: no parsing at all, so "The answer is B" scores as "t" (upstream behaviour, kept).
Accuracy is averaged per scenario type, then over the types of each of the 4 groups (macro), then over
the groups. Upstream reads the scenario groups from its unreleased `nuScenes.db`; here they come from
STSnu.json (which actor blocks a record has). Predictions join scenarios on upstream's `man_id` (the
database id, see `benchmarks.stsbench`): `scenario_ids` says which id each record has. Upstream
stops on a scenario without an answer and on an empty answer; so does this scorer (DataError), unless
the non-official `empty_as_wrong` is set (a failed run's empty output then counts as wrong).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kinegraph.benchmarks.stsbench.loader import GROUPS, read_records, record_ids, scenario_group
from kinegraph.benchmarks.stsbench.loader import scenario_ids as known_ids
from kinegraph.errors import DataError
from kinegraph.jsonfiles import read_json

TABLE_COLUMNS = {"ego": "Ego", "ego_agent": "Ego Agent", "agent": "Agent", "agent_agent": "Agent Agent"}


def is_correct(prediction: str | None, gt_letter: str, empty_as_wrong: bool = False) -> bool:
    """First character of the raw prediction vs the ground-truth letter, case-insensitive."""
    if not prediction:
        if empty_as_wrong:
            return False
        raise DataError("empty prediction (upstream fails with IndexError)", field="prediction")
    return prediction[0].lower() == gt_letter[0].lower()


def _nan_to_none(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def scenario_ids(
    answers: Sequence[Mapping[str, Any]],
    records: Sequence[Mapping[str, Any]],
    path: Path = Path("STSnu.json"),
) -> list[Any]:
    """Each record's `man_id`: the records' own ids; else, when the answers hold one integer id per
    record, those ids in ascending order (upstream lists STSnu.json in its database's id order, so the
    k-th smallest id is the k-th record); else the record's index (kinegraph's ids without a database)."""
    own = record_ids(records, path)
    if own is not None:
        return own
    distinct = {a.get("man_id") for a in answers}
    if len(distinct) == len(records) and all(
        isinstance(i, int) and not isinstance(i, bool) for i in distinct
    ):
        return sorted(distinct)
    return list(range(len(records)))


def score(
    answers: Sequence[Mapping[str, Any]],
    records: Sequence[Mapping[str, Any]],
    empty_as_wrong: bool = False,
    ids: Sequence[Any] | None = None,
) -> dict[str, Any]:
    """Group scores, their average, per-scenario accuracies and the upstream table (percent, 2 decimals).

    `answers` are upstream prediction records (`prediction`, `gt_letter`, `man_id`); `records` is
    STSnu.json; `ids` its records' man_ids (default `scenario_ids`). A group without scenarios is null,
    as is then the average (upstream's NaN).
    """
    by_id: dict[Any, Mapping[str, Any]] = {}
    for answer in answers:
        by_id.setdefault(answer.get("man_id"), answer)  # upstream takes the first match
    ids = scenario_ids(answers, records) if ids is None else ids
    results: dict[str, dict[str, list[bool]]] = {g: {} for g in GROUPS}
    for man_id, record in zip(ids, records, strict=True):
        answer = by_id.get(man_id)
        if answer is None:
            found = len({a.get("man_id") for a in answers})
            raise DataError(
                f"scenario man_id={man_id} has no prediction (upstream asserts; "
                f"{found} distinct man_ids for {len(records)} scenarios)",
                field="man_id",
            )
        if "gt_letter" not in answer:
            raise DataError(f"man_id={man_id}: missing", field="gt_letter")
        try:
            ok = is_correct(answer.get("prediction"), answer["gt_letter"], empty_as_wrong)
        except DataError as exc:
            raise DataError(f"man_id={man_id}: {exc.message}", field=exc.field) from None
        results[scenario_group(record)].setdefault(record["scenario"], []).append(ok)
    per_scenario = {g: {s: float(np.mean(v)) for s, v in results[g].items()} for g in GROUPS}
    with np.errstate(all="ignore"):
        group_means = {
            g: float(np.mean(list(per_scenario[g].values()))) if per_scenario[g] else math.nan for g in GROUPS
        }
        average = float(np.mean(list(group_means.values())))
    table = {TABLE_COLUMNS[g]: f"{group_means[g] * 100:.2f}" for g in GROUPS}
    table["Average"] = f"{average * 100:.2f}"
    return {
        **{g: _nan_to_none(group_means[g]) for g in GROUPS},
        "average": _nan_to_none(average),
        "per_scenario": per_scenario,
        "n": {g: sum(len(v) for v in results[g].values()) for g in GROUPS},
        "table": table,
    }


def read_predictions(path: str | Path) -> list[dict[str, Any]]:
    """An upstream prediction file: a JSON list of `{prediction, gt_letter, gt_text, man_id}`."""
    path = Path(path)
    data = read_json(path)
    if not isinstance(data, list) or not all(isinstance(a, dict) for a in data):
        raise DataError("expected a JSON array of prediction objects", path=path)
    return data


def score_file(
    predictions: str | Path,
    data: str | Path,
    empty_as_wrong: bool = False,
    db: str | Path | None = None,
    warn: Callable[[str], None] = lambda message: None,
) -> dict[str, Any]:
    """`score` on an upstream prediction file and STSnu.json (ids from `db`, upstream's nuScenes.db,
    where given); errors name the prediction file. `warn` hears how the ids were joined when it was
    inferred (no ids in the records, no database)."""
    answers, records = read_predictions(predictions), read_records(data)
    ids = known_ids(records, Path(data), db) if db is not None else scenario_ids(answers, records, Path(data))
    try:
        metrics = score(answers, records, empty_as_wrong, ids)
    except DataError as exc:
        raise DataError(exc.message, path=predictions, field=exc.field) from None
    if db is None and record_ids(records, Path(data)) is None:
        how = "by record position" if ids == list(range(len(records))) else "in ascending id order"
        warn(
            f"{data}: the records carry no man_id, so predictions are joined {how}; "
            "pass --db nuScenes.db to join them by upstream's database"
        )
    return metrics
