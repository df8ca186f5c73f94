"""STSBench graphs: upstream's multi-image VLM prompt, and the same with TAD's TCogMap ego-motion line.

A graph runs on one scenario record: its frames (CAM_FRONT for ego scenarios, the agent's camera
otherwise) are decoded and encoded once. The prompt follows upstream's multi-image VLM extractor
(`vqa_extractor/qwen.py` @38c5174): `Frame-k:` images, the frame-rate sentence, the question, `Options:`
and the letter-only instruction; upstream's expert persona, camera-rig paragraph and option glossary are
left out (the glossary's long descriptions are not in STSnu.json). The answer is the raw output: the
official scorer reads its first character.

TCogMap on STSBench (the TAD paper's "minimal adaptation", undocumented there): the record's ego poses
(`ego.xyz`, `ego.yaw`, 2 Hz keyframes, so 0.5 s apart) go through Algorithm 1, and the line
`Motion summary: The ego-vehicle is ...` is written before the question. Agent-only records carry no ego
poses and get no line.

Scene-CoT on STSBench (the paper's Table 6, also "minimally adapted" and undocumented): the scenario is
one keysegment. The captioner's four turns see 4 frames sampled as in TAD; the answerer gets the question,
the options and TAD's caption instruction with "five-second" replaced by the scenario's length (frames at
2 Hz), and its `<answer>` letter is what the official scorer reads (`OFFICIAL_PREDICTION`), since its raw
text starts with the reasoning.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from kinegraph.agents.protocol import GenerateRequest, Message
from kinegraph.evaluators.tad_answers import NOT_AVAILABLE, extract_letter_scene_cot
from kinegraph.graphs.nodes import (
    ask,
    prediction,
)
from kinegraph.graphs.shapes import question_graph
from kinegraph.graphs.state import GraphContext, QuestionState
from kinegraph.graphs.tad import prompts as tad_prompts
from kinegraph.graphs.tad.prompts import IMAGE_TOKEN, interleave
from kinegraph.graphs.tad.scene_cot import SceneCotRecipe, sampled_tokens, scene_cot_graph
from kinegraph.tools import tcogmap
from kinegraph.types import Prediction, Sample, Status

#: Prediction metadata key: the text the official scorer reads when it is not the raw output.
OFFICIAL_PREDICTION = "official_prediction"
NO_FRAMES = "no frames: load STSBench with --data-option data_root=DIR (the sensor files)"

KEYFRAME_RATE_HZ = 2.0  # STSnu frames are 2 Hz keyframes
KEYFRAME_PERIOD_US = 500_000
POSTAMBLE = (
    "Please answer only with the letter of an option from the multiple choice list, e.g. A or B or C or D, "
    "and nothing else."
)
MAX_NEW_TOKENS = 16

ContextFn = Callable[[Sample], list[str]]


def prompt(sample: Sample, n_images: int, context: list[str]) -> str:
    """Frame placeholders, frame-rate sentence, context lines, question, options, letter-only instruction."""
    frames = "\n".join(f"Frame-{i + 1}: {IMAGE_TOKEN}" for i in range(n_images))
    rate = f"You are provided the {n_images} sequential video frames captured at 2 frames per second."
    options = "Options:\n" + "\n".join(sample.options or [])
    return "\n".join(p for p in (frames, rate, *context, sample.question, options, POSTAMBLE) if p)


def no_context(sample: Sample) -> list[str]:
    return []


def ego_motion_context(sample: Sample) -> list[str]:
    """The TCogMap line from the record's ego poses; none for agent scenarios or fewer than 2 poses."""
    ego = sample.context.get("ego")
    if not ego or len(ego.get("xyz") or []) < 2:
        return []
    xyz = np.asarray(ego["xyz"], dtype=float)
    yaw = np.asarray(ego["yaw"], dtype=float)
    if xyz.ndim != 2 or xyz.shape[1] != 3 or yaw.shape != (len(xyz),):
        raise ValueError(f"ego poses disagree: xyz {xyz.shape}, yaw {yaw.shape}")
    rotation = np.stack([np.cos(yaw / 2), np.zeros_like(yaw), np.zeros_like(yaw), np.sin(yaw / 2)], axis=1)
    line = tcogmap.segment_context(np.arange(len(xyz)) * KEYFRAME_PERIOD_US, xyz, rotation)
    return [line] if line else []


def first_character(raw: str, sample: Sample) -> tuple[str | None, Status]:
    """What the official scorer compares: the raw output's first character (no parsing at all)."""
    if not raw:
        return None, Status.parse_failure
    letters = {o[0] for o in sample.options or [] if o}
    return raw[0], Status.ok if raw[0].upper() in letters else Status.parse_failure


def answer_question(context: ContextFn) -> Callable[..., Any]:
    """Ask the scenario's question with its frames (and context lines)."""

    async def answer(state: QuestionState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        sample, start = state["sample"], time.perf_counter()
        try:
            lines = context(sample)
        except ValueError as exc:
            return {"results": [prediction(sample, status=Status.input_error, error=str(exc))]}
        text = prompt(sample, len(state["images"]), lines)
        request = GenerateRequest(
            messages=[Message(role="user", content=interleave(text, state["images"]))],
            max_tokens=MAX_NEW_TOKENS,
            metadata={"sample_id": sample.id},
        )
        response, error = await ask(runtime, request)
        trace = [{"node": "answer_question", "prompt": text}]
        if response is None:
            return {"results": [prediction(sample, trace=trace, frames=state["frame_record"], **error)]}
        trace.append({"node": "answer_question", "raw": response.text, "cached": response.cached})
        answer, status = first_character(response.text, sample)
        result = prediction(
            sample,
            raw=response.text,
            answer=answer,
            status=status,
            trace=trace,
            frames=state["frame_record"],
            usage=response.usage,
            latency_s=time.perf_counter() - start,
        )
        return {"results": [result]}

    return answer


def _graph(context: ContextFn, max_side: int | None) -> CompiledStateGraph:
    return question_graph(answer_question(context), max_side=max_side)


def build_baseline(max_side: int | None = None) -> CompiledStateGraph:
    """`stsbench.baseline`: the scenario's frames and upstream's multiple-choice prompt."""
    return _graph(no_context, max_side)


def build_tcogmap(max_side: int | None = None) -> CompiledStateGraph:
    """`stsbench.tcogmap`: plus TCogMap's ego-motion line from the record's ego poses."""
    return _graph(ego_motion_context, max_side)


# --- Scene-CoT ----------------------------------------------------------------------------------------------


def scenario_segment(samples: list[Sample], frames_per_segment: int) -> list[tuple[int, list[str]]]:
    """The scenario as keysegment 1, its frames sampled as TAD samples a keysegment's."""
    return [(1, sampled_tokens(list(samples[0].media.frame_paths), frames_per_segment))]


def every_caption(sample: Sample, captions: dict[str, dict]) -> list[int]:
    return sorted(int(p) for p in captions)


def scene_cot_prompt(sample: Sample, blocks: list[str]) -> str:
    """TAD's answering prompt, the keysegment's length set to the scenario's (frames at 2 Hz)."""
    seconds = len(sample.media.frame_paths) / KEYFRAME_RATE_HZ
    text = tad_prompts.cot_answer_prompt(sample, blocks)
    return text.replace("a short, five-second snippet", f"a short, {seconds:g}-second snippet", 1)


def scene_cot_finish(sample: Sample, state: QuestionState, raw: str, fields: dict[str, Any]) -> Prediction:
    """The `<answer>` letter (TAD's Scene-CoT extractor); the official scorer reads that letter."""
    letter = extract_letter_scene_cot(raw, sample.options)
    answered = letter != NOT_AVAILABLE
    return prediction(
        sample,
        raw=raw,
        answer=letter if answered else None,
        status=Status.ok if answered else Status.parse_failure,
        frames=state.get("frame_record"),
        metadata={**sample.metadata, OFFICIAL_PREDICTION: letter if answered else ""},
        **fields,
    )


SCENE_COT = SceneCotRecipe(
    segments=scenario_segment, positions=every_caption, prompt=scene_cot_prompt, finish=scene_cot_finish
)


def build_scene_cot(frames_per_segment: int = 4, max_side: int | None = None) -> CompiledStateGraph:
    """`stsbench.scene_cot`: TAD's Scene-CoT on the scenario as one keysegment (captioner, then answerer)."""
    return scene_cot_graph(SCENE_COT, frames_per_segment, max_side, NO_FRAMES)
