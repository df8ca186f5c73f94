"""STSBench: spatio-temporal scenario understanding on nuScenes (loader and question builder).

Paper: Fruhwirth-Reisinger et al., arXiv 2506.06218 (NeurIPS 2025 D&B). Code: github.com/LRP-IVC/STSBench
@38c5174 (MIT); data HF `ivc-lrp/STSBench` (`STSnu/STSnu.json`, CC BY-NC-SA 4.0): 43 scenario types,
971 multiple-choice questions in 4 groups (ego, ego_agent, agent, agent_agent).

STSnu.json stores no question: each record has the positive scenario and its negatives. Upstream builds
the choice list when it writes prompts: 4 negatives drawn without replacement with linearly decreasing
weights (n - i), shuffled with the positive, lettered A-E, with no seed, so the paper's option sets cannot
be rebuilt. Here the draw uses numpy's Generator seeded with `(seed, record index)`; the seed is recorded
in every sample, so the same seed gives the same questions.

A scenario's `man_id` is upstream's: the `id` of its row in the `maneuver` table of `nuScenes.db`, which
upstream's prediction files carry and its scorer joins on. `vqa_extractor/hf.py` writes STSnu.json from
the same query as the scorer, in the database's row order, and leaves the id out; so the ids come from a
record's own `man_id` field where it has one, else from `nuScenes.db` (`maneuver_ids`), else a record's
`man_id` is its list index (and the scorer joins an upstream file's ids in ascending order, which is
that same row order: see `evaluators.stsbench.scenario_ids`).
"""

from __future__ import annotations

import sqlite3
import string
from collections.abc import Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np

from kinegraph.errors import DataError
from kinegraph.jsonfiles import read_json
from kinegraph.types import Media, Sample

BENCHMARK = "stsbench"
GROUPS: tuple[str, ...] = ("ego", "ego_agent", "agent", "agent_agent")
N_NEGATIVES = 4
KEYFRAME_RATE_HZ = 2.0
# Upstream normalises 2D boxes on 1600x900 images to 0..1000 and rescales to an 800x450 frame.
_IMAGE_W_PX, _IMAGE_H_PX, _PROMPT_W_PX, _PROMPT_H_PX = 1600.0, 900.0, 800.0, 450.0

EGO_QUESTION = "Which of the following options best describes your driving maneuver?"


def scenario_group(record: Mapping[str, Any]) -> str:
    """ego | ego_agent | agent | agent_agent, from which actor blocks the record has (as upstream)."""
    is_ego, is_agent, is_other = "ego" in record, "agent" in record, "other_agent" in record
    if is_ego:
        return "ego_agent" if is_other else "ego"
    if is_agent:
        return "agent_agent" if is_other else "agent"
    raise ValueError("record has neither an 'ego' nor an 'agent' block")


def linear_weighted_sample(items: Sequence[str], k: int, rng: np.random.Generator) -> list[str]:
    """k distinct items drawn with weights n, n-1, ..., 1 (earlier items favoured), as upstream."""
    n = len(items)
    weights = np.arange(n, 0, -1, dtype=float)
    picked = rng.choice(n, size=k, replace=False, p=weights / weights.sum())
    return [items[i] for i in picked]


def build_choices(
    positive: str, negatives: Sequence[str], seed: int, index: int, n_negatives: int = N_NEGATIVES
) -> tuple[list[str], str]:
    """(["A. ...", ...], answer letter): the positive plus sampled negatives, shuffled, lettered."""
    rng = np.random.default_rng([seed, index])
    choices = [positive, *linear_weighted_sample(negatives, n_negatives, rng)]
    order = rng.permutation(len(choices))
    shuffled = [choices[i] for i in order]
    letters = string.ascii_uppercase
    return [f"{letters[i]}. {c}" for i, c in enumerate(shuffled)], letters[shuffled.index(positive)]


def _prompt_box(bb2d: Sequence[float]) -> list[int]:
    x1, y1, x2, y2 = bb2d
    norm = [round(x1 / _IMAGE_W_PX * 1000), round(y1 / _IMAGE_H_PX * 1000)]
    norm += [round(x2 / _IMAGE_W_PX * 1000), round(y2 / _IMAGE_H_PX * 1000)]
    return [int(norm[0] / 1000 * _PROMPT_W_PX), int(norm[1] / 1000 * _PROMPT_H_PX)] + [
        int(norm[2] / 1000 * _PROMPT_W_PX),
        int(norm[3] / 1000 * _PROMPT_H_PX),
    ]


def question_text(record: Mapping[str, Any], group: str) -> str:
    """The referral sentence: the ego's own maneuver, or the agent boxed in Frame-1."""
    if group == "ego":
        return EGO_QUESTION
    actor = record["other_agent"] if group == "ego_agent" else record["agent"]
    box = _prompt_box(actor["camera"]["bb2d"][0])
    where = f"inside region {box} of {actor['camera']['cam'][0]} in Frame-1"
    if group == "ego_agent":
        return (
            f"Consider the other agent {where}. Which option best describes your behavior with respect to it?"
        )
    if group == "agent":
        return f"Consider the agent {where}. Which of the following options best describes its maneuver?"
    other = _prompt_box(record["other_agent"]["camera"]["bb2d"][0])
    return (
        f"Consider the agent {where}, and the other agent inside region {other} in Frame-1. "
        "Which of the following options best describes the first agent's maneuver with respect to the other?"
    )


def frame_paths(record: Mapping[str, Any], group: str, data_root: Path | None) -> list[str]:
    """CAM_FRONT frames for ego scenarios; for agent ones, each frame from the camera that sees the agent."""
    sensors = record.get("sensors") or {}
    if group.startswith("ego"):
        paths = list(sensors.get("CAM_FRONT") or [])
    else:
        cams = record["agent"]["camera"]["cam"]
        paths = [sensors[cam][i] for i, cam in enumerate(cams) if cam in sensors and i < len(sensors[cam])]
    return [str(data_root / p) if data_root is not None else p for p in paths]


# Upstream's scenario query (`eval/eval.py`, `vqa_extractor/hf.py`): manually labeled, in use, with a
# positive maneuver. Upstream has no ORDER BY; SQLite's table scan returns rowid (= id) order.
_MANEUVER_IDS_SQL = (
    "SELECT id FROM maneuver WHERE manually_labeled AND in_use AND EXISTS "
    "(SELECT 1 FROM positive_maneuver WHERE positive_maneuver.maneuver_id = maneuver.id) ORDER BY id"
)


def maneuver_ids(db: str | Path) -> list[int]:
    """Upstream's scenario ids from `nuScenes.db`, in the order STSnu.json lists the scenarios."""
    db = Path(db)
    if not db.is_file():
        raise DataError("nuScenes.db not found", path=db)
    try:
        with closing(sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)) as connection:
            return [int(row[0]) for row in connection.execute(_MANEUVER_IDS_SQL)]
    except sqlite3.Error as exc:
        raise DataError(f"not upstream's scenario database: {exc}", path=db) from None


def record_ids(records: Sequence[Mapping[str, Any]], path: Path) -> list[int] | None:
    """The records' own `man_id` fields (every record has one, an integer), or None when none has."""
    present = [i for i, r in enumerate(records) if "man_id" in r]
    if not present:
        return None
    for i, record in enumerate(records):
        value = record.get("man_id")
        if isinstance(value, bool) or not isinstance(value, int):
            raise DataError(
                f"record {i}: needs an integer (as the other records have)", path=path, field="man_id"
            )
    ids = [int(r["man_id"]) for r in records]
    if len(set(ids)) < len(ids):
        raise DataError("two records share one man_id", path=path, field="man_id")
    return ids


def scenario_ids(records: Sequence[Mapping[str, Any]], path: Path, db: str | Path | None = None) -> list[int]:
    """Each record's upstream `man_id`: its own field, else from `db` (nuScenes.db), else its index."""
    own = record_ids(records, path)
    if own is not None:
        return own
    if db is None:
        return list(range(len(records)))
    ids = maneuver_ids(db)
    if len(ids) != len(records):
        raise DataError(
            f"{len(ids)} scenarios in {db}, {len(records)} in the file (not its database)", path=path
        )
    return ids


def build_sample(
    record: Mapping[str, Any],
    index: int,
    seed: int,
    data_root: Path | None,
    path: Path,
    man_id: int | None = None,
) -> Sample:
    """One STSnu record as a multiple-choice Sample (`man_id`: upstream's id, default the index)."""
    for field in ("scenario", "negative_scenarios"):
        if not isinstance(record.get(field), str) or not record[field].strip():
            raise DataError(f"record {index}: missing or empty", path=path, field=field)
    try:
        group = scenario_group(record)
    except ValueError as exc:  # upstream asserts "Unkown maneuver group"
        raise DataError(f"record {index}: {exc}", path=path) from exc
    negatives = [n for n in record["negative_scenarios"].split(",") if n]
    if record["scenario"] in negatives or len(set(negatives)) < len(negatives):
        message = f"record {index}: negatives repeat each other or the scenario (two options would be equal)"
        raise DataError(message, path=path, field="negative_scenarios")
    if len(negatives) < N_NEGATIVES:  # upstream asserts "Not enough negative maneuvers"
        message = f"record {index}: {len(negatives)} negatives, need {N_NEGATIVES}"
        raise DataError(message, path=path, field="negative_scenarios")
    options, letter = build_choices(record["scenario"], negatives, seed, index)
    try:
        question = question_text(record, group)
        paths = frame_paths(record, group, data_root)
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        field = "other_agent" if group == "ego_agent" else "agent"
        raise DataError(
            f"record {index}: malformed actor block (needs camera.bb2d[0] and camera.cam[0]): {exc!r}",
            path=path,
            field=field,
        ) from None
    return Sample(
        id=f"{BENCHMARK}/{index}",
        benchmark=BENCHMARK,
        group=str(index),
        question_id=group,
        question=question,
        options=options,
        answer=letter,
        media=Media(kind="frames", frame_paths=paths, fps=KEYFRAME_RATE_HZ) if paths else Media(),
        context={key: record[key] for key in ("ego", "agent", "other_agent") if key in record},
        metadata={
            "man_id": index if man_id is None else man_id,
            "scenario_group": group,
            "scenario": record["scenario"],
            "answer_text": record["scenario"],
            "question_seed": seed,
        },
    )


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """The STSnu.json list of scenario records."""
    path = Path(path)
    records = read_json(path)
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise DataError("expected a JSON array of scenario objects", path=path)
    return records


def load(
    path: str | Path, seed: int = 0, data_root: str | Path | None = None, db: str | Path | None = None
) -> list[Sample]:
    """Every STSnu.json scenario as a question; `data_root` prefixes the relative sensor paths, `db`
    (upstream's nuScenes.db) gives the scenarios upstream's ids where the records carry none."""
    path = Path(path)
    root = Path(data_root) if data_root is not None else None
    records = read_records(path)
    ids = scenario_ids(records, path, db)
    return [build_sample(r, i, seed, root, path, ids[i]) for i, r in enumerate(records)]
