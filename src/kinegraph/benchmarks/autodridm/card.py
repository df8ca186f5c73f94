"""AutoDriDM's card: paper, licence, upstream, Hub layout, context schema, ad-hoc questions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict  # pydantic builds schemas only from this one on 3.11

from kinegraph.benchmarks.autodridm.loader import MULTI_SELECT_TASKS, TASKS
from kinegraph.benchmarks.card import Card, HubLayout, Question, QuestionRefused, lettered

_STRICT = ConfigDict(extra="forbid", allow_inf_nan=False)


@with_config(_STRICT)
class AutoDriDMContext(TypedDict, total=False):
    """AutoDriDM: the image's name and the options as the paper's prompt prints them."""

    image_name: str
    options_text: str


def shape(question: Question, fields: dict[str, Any], made: dict[str, str]) -> None:
    """AutoDriDM's layout: one image, `A. text` options, `A.text; B.text` option text, the task."""
    media = question.media
    if media.kind != "frames" or len(media.frame_paths) != 1:
        raise QuestionRefused("images: AutoDriDM graphs read exactly one image")
    task = question.extras.get("task")
    if task is not None and task not in TASKS:
        raise QuestionRefused(f"task: {task!r} is not an AutoDriDM task ({', '.join(TASKS)})")
    options = lettered(question.options or [], ". ")
    fields["options"] = options
    fields["context"].update(
        options_text="; ".join(o.replace(". ", ".", 1) for o in options),
        image_name=Path(media.frame_paths[0]).name,
    )
    task = task or TASKS[0]
    fields["question_id"] = task
    fields["metadata"] = {
        "task": task,
        "level": task.split("-")[0],
        "multi_select": task in MULTI_SELECT_TASKS,
    }


CARD = Card(
    name="autodridm",
    title="AutoDriDM",
    paper="Tang et al., arXiv 2601.14702",
    licence="Apache-2.0 (repository)",
    upstream="github.com/Colamentos2023/AutoDriDM@3b3a546",
    hub=HubLayout(
        "ColamentosZJU/AutoDriDM",
        ("*.json",),
        (tuple(f"{t}.json" for t in TASKS),),
        notes=(
            "AutoDriDM's images are not on the Hub: put each record's image_name (images/...) under the "
            "folder, from nuScenes, KITTI and BDD100K",
        ),
    ),
    context=AutoDriDMContext,
    shape=shape,
    data_hint="--data AUTODRIDM_DIR",
)
