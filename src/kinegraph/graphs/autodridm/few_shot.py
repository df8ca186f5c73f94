"""AutoDriDM k-shot prompting (the paper's 1/2/5-shot setting, Tables 8 and 9).

The paper evaluates k-shot prompts but does not say how the exemplars were chosen or shown (spec §2.1;
it only says "selection of representative examples is critical"). kinegraph's protocol, recorded in
every prediction's trace: the exemplars of a question are questions of the same task, drawn from that
task's file (`<data>/<task>.json`, all of it, not just the run's `--limit`), in one order per task
shuffled with `seed`; a question takes the first `shots` of that order not on its own image, so it never
sees itself or a sibling question about the picture it answers. Each exemplar is a user turn (its image
and the paper's user text) and an assistant turn `<answer>X</answer>` (or `A,C` for multi-select): the
data holds no rationale, so the exemplar's `<think>` is left out. The system prompt and the question's
own turn are `autodridm.baseline`'s.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from kinegraph.agents.protocol import ImagePart, Message, TextPart
from kinegraph.benchmarks.autodridm.loader import load_task, user_prompt
from kinegraph.errors import DataError
from kinegraph.evaluators.autodridm import parse_letters
from kinegraph.graphs.autodridm.builders import question_request
from kinegraph.graphs.nodes import ask, prediction
from kinegraph.graphs.shapes import question_graph
from kinegraph.graphs.state import GraphContext, QuestionState
from kinegraph.types import Sample, Status


def data_root(sample: Sample) -> Path:
    """The AutoDriDM folder a sample was loaded from: its image path less `image_name` (the loader
    joins the two)."""
    image = sample.context.get("image_name")
    if not isinstance(image, str) or not sample.media.frame_paths:
        raise DataError(f"{sample.id}: no image to find the task file by", field="image_name")
    parts, path = Path(image).parts, Path(sample.media.frame_paths[0])
    if path.parts[-len(parts) :] != parts:
        raise DataError(f"{sample.id}: image path {path} does not end in {image!r}", field="image_name")
    return Path(*path.parts[: -len(parts)]) if len(path.parts) > len(parts) else Path(".")


@lru_cache(maxsize=16)
def _task_order(root: str, task: str, seed: int) -> tuple[Sample, ...]:
    """Every question of the task file, in the order `seed` shuffles them to (sorted by id first)."""
    pool = sorted(load_task(root, task), key=lambda s: s.id)
    random.Random(f"autodridm-shots:{seed}:{task}").shuffle(pool)  # str seeds: the same in every process
    return tuple(pool)


def draw_shots(sample: Sample, shots: int, seed: int) -> tuple[Path, list[Sample]]:
    """(data root, the `shots` exemplars of `sample`): same task, other images, seeded order."""
    root, task = data_root(sample), str(sample.metadata["task"])
    chosen = [s for s in _task_order(str(root), task, seed) if s.group != sample.group][:shots]
    if len(chosen) < shots:
        raise DataError(
            f"{shots}-shot needs {shots} {task} questions on other images than {sample.group!r}; "
            f"the file has {len(chosen)}",
            path=root / f"{task}.json",
            field="image_name",
        )
    return root, chosen


def _answer_text(sample: Sample) -> str:
    letters = sample.answer if isinstance(sample.answer, list) else [str(sample.answer)]
    return f"<answer>{','.join(letters)}</answer>"


def shot_turns(root: Path, exemplars: list[Sample], max_side: int | None) -> list[Message]:
    """A user turn (image, the paper's user text) and the assistant's answer, per exemplar."""
    from kinegraph.agents import encode_image

    turns = []
    for shot in exemplars:
        image: ImagePart = encode_image(root / shot.context["image_name"], max_side=max_side)
        turns.append(Message(role="user", content=[image, TextPart(text=user_prompt(shot))]))
        turns.append(Message(role="assistant", content=_answer_text(shot)))
    return turns


def answer_with_shots(shots: int, seed: int, max_side: int | None) -> Callable[..., Any]:
    """One question after its exemplars; exemplars the data cannot give end it as an input error."""

    async def answer(state: QuestionState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        sample, start = state["sample"], time.perf_counter()
        multi = bool(sample.metadata.get("multi_select"))
        try:
            root, exemplars = await asyncio.to_thread(draw_shots, sample, shots, seed)
            turns = await asyncio.to_thread(shot_turns, root, exemplars, max_side)
        except DataError as exc:
            return {"results": [prediction(sample, status=Status.input_error, error=str(exc))]}
        text = user_prompt(sample)
        drawn = [
            {"sample_id": s.id, "image_name": s.context["image_name"], "answer": s.answer} for s in exemplars
        ]
        trace: list[dict[str, Any]] = [
            {"node": "draw_shots", "shots": shots, "seed": seed, "exemplars": drawn},
            {"node": "answer_question", "prompt": text, "system": "multi" if multi else "single"},
        ]
        response, error = await ask(runtime, question_request(sample, state["images"], text, turns))
        if response is None:
            return {"results": [prediction(sample, trace=trace, frames=state["frame_record"], **error)]}
        trace.append({"node": "answer_question", "raw": response.text, "cached": response.cached})
        letters = parse_letters(response.text, multi)
        result = prediction(
            sample,
            raw=response.text,
            answer=(letters if multi else letters[0]) if letters else None,
            status=Status.ok if letters else Status.parse_failure,
            trace=trace,
            frames=state["frame_record"],
            usage=response.usage,
            latency_s=time.perf_counter() - start,
        )
        return {"results": [result]}

    return answer


def build_few_shot(shots: int = 1, seed: int = 0, max_side: int | None = None) -> CompiledStateGraph:
    """`autodridm.few_shot`: `shots` same-task exemplars (image + answer) before the question (the paper
    reports 1, 2 and 5)."""
    if shots < 1:
        raise ValueError(f"shots must be at least 1 (0-shot is autodridm.baseline), got {shots}")
    return question_graph(answer_with_shots(shots, seed, max_side), max_side=max_side)
