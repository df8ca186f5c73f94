"""EgoDyn-Bench's card: paper, licence, upstream, Hub layout, context schema, ad-hoc questions."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict  # pydantic builds schemas only from this one on 3.11

from kinegraph.benchmarks.card import Card, HubLayout, Question, QuestionRefused

_STRICT = ConfigDict(extra="forbid", allow_inf_nan=False)


@with_config(_STRICT)
class EgoDynContext(TypedDict, total=False):
    """EgoDyn: the clip's kinematics arrays (.npz under the media root) and summary features."""

    arrays_path: str
    features: dict[str, float]
    t_start: float
    t_end: float
    camera: dict[str, Any]


def shape(question: Question, fields: dict[str, Any], made: dict[str, str]) -> None:
    """The bank question (by `question_id`, else by the question's text) with its answer type and choices."""
    from kinegraph.benchmarks.egodyn.questions import default_question_bank

    bank = default_question_bank()
    asked = question.extras.get("question_id")
    if asked is not None and asked not in bank:
        raise QuestionRefused(f"question_id: {asked!r} is not an EgoDyn question ({', '.join(bank)})")
    wanted = " ".join(question.text.lower().split())
    found = bank.get(asked or "") or next(
        (q for q in bank.values() if " ".join(q.text.lower().split()) == wanted), None
    )
    if found is None:
        return
    if asked is None:
        made["question_id"] = "matched"
    fields["question_id"] = found.question_id
    fields["options"] = question.options or found.choices
    fields["metadata"] = {"answer_type": found.answer_type, "category": found.category}


def bank_scope() -> str:
    """What EgoDyn's VLM-free graphs answer: the bank's questions."""
    from kinegraph.benchmarks.egodyn.questions import default_question_bank

    ids = ", ".join(default_question_bank())
    return f"it answers questions of the EgoDyn bank only (question_id one of {ids}; see docs/serve.md)"


CARD = Card(
    name="egodyn",
    title="EgoDyn-Bench",
    paper="Schäfer et al., ECCV 2026, arXiv 2604.22851",
    licence="code Apache-2.0, data CC BY-NC-SA 4.0",
    upstream="github.com/TUM-AVS/EgoDyn-Bench@a0c9c01a424cbeb5aa5471a6156354f21111436d",
    hub=HubLayout(
        "fnc1901/EgoDyn-Bench",
        (
            "selected_clips.json",
            "nuscenes_clips/*",
            "carla_clips/*",
            "carla_videos_transferred/*",
            "carla_videos_simulation/*",
        ),
        (("nuscenes_clips/qa.jsonl", "carla_clips/qa.jsonl", "selected_clips.json"),),
        video_globs=("carla_videos_transferred/*.mp4", "carla_videos_simulation/*.mp4"),
        needs_nuscenes=True,
        frame_index="nuscenes_clips/clips_index.jsonl",
    ),
    context=EgoDynContext,
    shape=shape,
    vlm_free_scope=bank_scope,
    data_hint="--data EGODYN_DIR",
)
