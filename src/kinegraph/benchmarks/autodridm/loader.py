"""AutoDriDM: decision-making of VLMs in autonomous driving (loader and the paper's prompts).

Paper: Tang et al., arXiv 2601.14702. Repo github.com/Colamentos2023/AutoDriDM@3b3a546 (Apache-2.0; README
only, no data or code); data HF `ColamentosZJU/AutoDriDM`, split `test`: six JSON arrays
`Object-1, Object-2, Scene-1, Scene-2, Decision-1, Decision-2.json`, 6,650 questions on 1,295 front-camera
images (nuScenes, KITTI, BDD100K; images not shipped). Records hold `image_name`, `taskX_q/_o/_a` (X is
not documented, so the keys are discovered per record) and `danger_score` (int or string, 1-5).
Scene-1/2 are multi-select (`"A,C"`), the other four single-choice. High risk: danger_score >= 4.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kinegraph.errors import DataError
from kinegraph.jsonfiles import read_json
from kinegraph.types import Media, Sample

BENCHMARK = "autodridm"
TASKS: tuple[str, ...] = ("Object-1", "Object-2", "Scene-1", "Scene-2", "Decision-1", "Decision-2")
MULTI_SELECT_TASKS = frozenset({"Scene-1", "Scene-2"})
HIGH_RISK_MIN_DANGER = 4.0
SOURCES: tuple[str, ...] = ("nuscenes", "kitti", "bdd100k")

_TASK_KEY = re.compile(r"^task(\d+)_([qoa])$")
_OPTION = re.compile(r"([A-Z])\.\s*([^;]+)")
_LETTER = re.compile(r"[A-Z]")

# The paper's prompts (Figure 13): system text per question kind, and the user template.
_SYSTEM_HEAD = (
    "You are an AI assistant specializing in automatic driving scene judgment. Your primary task "
    "is to analyze a given traffic scene and make a decision or evaluation based on "
    "it.\n\nInput:\n\nYou will be provided with an image, a corresponding question, and a set of "
    "possible options.\n\nAnswering Guidelines:\n\n- Your reasoning must be based on the visual "
    "evidence in the image and fundamental principles of safe driving.\n- Analyze the situation "
    "step-by-step before making a final decision.\n\n"
)
_SYSTEM_FORMAT = (
    "Output Format:\n\nYour response must be structured in a specific two-part format within a "
    "single turn. First, generate a structured Chain-of-Thought rationale enclosed within "
    "`<think>...</think>` tags; second, provide the final decision enclosed within "
    "`<answer>...</answer>` tags. The structure must be exactly:\n\n"
)
_SINGLE = (
    "Instruction:\n\nYou should choose one from the given options, outputting only a single letter "
    "corresponding to the selected option with no extra output.\n\n"
)
_SINGLE_TAIL = (
    "<think>Your detailed reasoning process here.</think><answer>Your chosen option letter(s) here.</answer>"
)
_MULTI = (
    "INSTRUCTION:\n\nYou should select one or more options from the given choices, outputting only "
    "the corresponding letters separated by commas.\n\n"
)
_MULTI_TAIL = (
    "<think>Your detailed reasoning process here.</think><answer>Your chosen option letter(s) here "
    "(comma-separated).</answer>"
)
SYSTEM_PROMPT_SINGLE = _SYSTEM_HEAD + _SINGLE + _SYSTEM_FORMAT + _SINGLE_TAIL
SYSTEM_PROMPT_MULTI = _SYSTEM_HEAD + _MULTI + _SYSTEM_FORMAT + _MULTI_TAIL
USER_TEMPLATE = "IMAGE: {image}\n\nQUESTION: {question}\n\nOPTIONS: {options}"


def parse_options(text: str) -> list[tuple[str, str]]:
    """`"A.Building; B.Vehicle"` -> [("A", "Building"), ("B", "Vehicle")]."""
    return [(m.group(1), m.group(2).strip()) for m in _OPTION.finditer(text)]


def parse_danger(value: Any) -> float:
    """danger_score as a float, from an int, a float or a numeric string."""
    if isinstance(value, bool):
        raise ValueError(f"not a danger score: {value!r}")
    try:
        score = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"not a number: {value!r}") from None
    if not 1.0 <= score <= 5.0:
        raise ValueError(f"outside 1-5: {value!r}")
    return score


def source_dataset(image_name: str) -> str | None:
    """nuscenes / kitti / bdd100k when the image path names one, else None."""
    lowered = image_name.lower().replace("-", "").replace("_", "")
    for source in SOURCES:
        if source in lowered or (source == "bdd100k" and "bdd" in lowered):
            return source
    return None


def task_keys(record: Mapping[str, Any]) -> list[str]:
    """The `taskX` prefixes a record uses, in numeric order."""
    found = {int(m.group(1)) for key in record if (m := _TASK_KEY.match(key))}
    return [f"task{x}" for x in sorted(found)]


def _sample(
    task: str, index: int, key: str, record: Mapping[str, Any], root: Path, path: Path, n_keys: int
) -> Sample:
    where = f"record {index}"
    for suffix in ("q", "o", "a"):
        value = record.get(f"{key}_{suffix}")
        if not isinstance(value, str) or not value.strip():
            raise DataError(f"{where}: missing or empty", path=path, field=f"{key}_{suffix}")
    options = parse_options(record[f"{key}_o"])
    if not options:
        raise DataError(f"{where}: no 'A.text; B.text' options", path=path, field=f"{key}_o")
    letters = {letter for letter, _ in options}
    answer = sorted(set(_LETTER.findall(record[f"{key}_a"].upper())))
    multi = task in MULTI_SELECT_TASKS
    if not answer or (not multi and len(answer) > 1):
        raise DataError(
            f"{where}: answer {record[f'{key}_a']!r} is not a valid letter", path=path, field=f"{key}_a"
        )
    outside = [a for a in answer if a not in letters]
    if outside:
        raise DataError(
            f"{where}: answer letter(s) {outside} not among the options", path=path, field=f"{key}_a"
        )
    try:
        danger = parse_danger(record.get("danger_score"))
    except ValueError as exc:
        raise DataError(f"{where}: {exc}", path=path, field="danger_score") from None
    image = record.get("image_name")
    if not isinstance(image, str) or not image:
        raise DataError(f"{where}: missing", path=path, field="image_name")
    return Sample(
        id=f"{BENCHMARK}/{task}/{index}" + (f"/{key}" if n_keys > 1 else ""),
        benchmark=BENCHMARK,
        group=image,
        question_id=task,
        question=record[f"{key}_q"],
        options=[f"{letter}. {text}" for letter, text in options],
        answer=answer if multi else answer[0],
        media=Media(kind="frames", frame_paths=[str(root / image)]),
        context={"options_text": record[f"{key}_o"], "image_name": image},
        metadata={
            "task": task,
            "level": task.split("-")[0],
            "multi_select": multi,
            "danger_score": danger,
            "high_risk": danger >= HIGH_RISK_MIN_DANGER,
            "source_dataset": source_dataset(image),
            "task_key": key,
        },
    )


def load_task(root: str | Path, task: str) -> list[Sample]:
    """Every question of one task file (`<root>/<task>.json`)."""
    root = Path(root)
    path = root / f"{task}.json"
    records = read_json(path)
    if not isinstance(records, list):
        raise DataError("expected a JSON array of records", path=path)
    samples = []
    seen: dict[str, int] = {}
    for index, record in enumerate(records):
        keys = task_keys(record) if isinstance(record, dict) else []
        if not keys:
            raise DataError(f"record {index}: no taskX_q/_o/_a fields", path=path)
        text = json.dumps(record, sort_keys=True)
        if text in seen:  # a repeat would shift every later record, and its truth, to another sample id
            raise DataError(f"record {index} repeats record {seen[text]}", path=path)
        seen[text] = index
        samples.extend(_sample(task, index, key, record, root, path, len(keys)) for key in keys)
    return samples


def load(path: str | Path) -> list[Sample]:
    """The questions of every task file present under `path` (at least one)."""
    root = Path(path)
    present = [t for t in TASKS if (root / f"{t}.json").is_file()]
    if not present:
        raise DataError(
            f"no AutoDriDM task file (expected {', '.join(t + '.json' for t in TASKS)})", path=root
        )
    return [s for task in present for s in load_task(root, task)]


def user_prompt(sample: Sample) -> str:
    """The paper's user text for one sample (the image travels separately)."""
    return USER_TEMPLATE.format(
        image=sample.context["image_name"], question=sample.question, options=sample.context["options_text"]
    )
