"""AutoDriDM's analyzer: a second model tags an answer's reasoning with the paper's error modes (E1-E9).

The paper (Sec 4.3, Appendix Figure 14, "Prompt 3") fine-tunes Qwen2.5-VL-7B as the analyzer; its weights
are not released, and the prompt works zero-shot with any VLM (the paper's Table 2 baselines). The analyzer
is the `analyzer` model role: a run names it (`--role analyzer=PROVIDER:MODEL`), it has no default, so a
model never silently judges itself. It sees the image, the question, options, the correct answer, the
model's final answer and its reasoning (the `<think>` text, else the whole output), and replies with
integer labels: 0 = correct, 1-9 = E1-E9.

The tags go in the prediction's metadata (`error_tags`, e.g. ["E1", "E3"], or ["correct"]); a failed or
unreadable analysis leaves `analyzer_error` there instead. The answer, its status and its score are
untouched: the tags are a non-official measurement beside the score.
"""

from __future__ import annotations

import re
import time
from typing import Any

from langgraph.runtime import Runtime

from kinegraph.agents.protocol import GenerateRequest, Message, TextPart
from kinegraph.evaluators.autodridm_tags import ANALYZER_ERROR, ERROR_TAGS
from kinegraph.graphs.nodes import ask, model_of
from kinegraph.graphs.state import GraphContext, QuestionState
from kinegraph.types import DEFAULT_ROLE, Prediction, Sample, Status

ANALYZER = "analyzer"
MAX_NEW_TOKENS = 64

#: Prompt 3, Error Tagging, System Instruction (Appendix, verbatim).
SYSTEM_PROMPT = (
    "You are an autonomous-driving evaluation assistant for multimodal (image + text) questions. Your job is "
    "to analyze a model's final answer and its detailed reasoning (chain-of-thought), detect which error "
    "patterns apply, and map them to the integer labels defined below. The user input will always contain: "
    "(1) the original question, (2) the question options, (3) the correct answer, (4) the model's final "
    "answer, (5) the model's detailed reasoning, and (6) an image associated with the question. Use both "
    "the image and the textual inputs (final answer + reasoning) to decide which label(s) apply.\n\n"
    "Label definitions (0-9):\n"
    "- 0 = Correct – The model's final answer is correct and its reasoning is sound and sufficient.\n"
    "- 1 = Logical Reasoning Error – Perception may be correct, but the subsequent reasoning is logically "
    "invalid or contradicts traffic rules or causality.\n"
    "- 2 = Semantic Feature Omission – The model overlooks or misjudges safety-critical semantic/visual cues "
    "(e.g., brake lights, turn signals, pedestrian gestures) or other discriminative attributes necessary "
    "for correct recognition and categorization.\n"
    "- 3 = Model Hallucination – The model produces information inconsistent with the actual input (e.g., "
    "invents non-existent objects, attributes, or relations).\n"
    "- 4 = Modality Imbalance – The model over-relies on one modality (text or image) while neglecting the "
    "other, causing an error.\n"
    "- 5 = Spatial Relation Misjudgment – The model makes incorrect judgments about spatial relations (e.g., "
    "distance, relative position, depth).\n"
    "- 6 = Limited Logical Inference – The model derives a decision from insufficient local evidence without "
    "integrating broader scene context.\n"
    "- 7 = Generalization Deficit – The model generalizes poorly to rare or out-of-distribution scenarios "
    "(e.g., construction zones, traffic incidents, temporary lane closures).\n"
    "- 8 = Decision Boundary Instability – Near critical operating points, small input perturbations cause "
    "large changes in the chosen action.\n"
    "- 9 = Target Priority Misjudgment – The model fails to correctly prioritize among competing objectives "
    "(e.g., yielding to pedestrians vs. maintaining speed).\n\n"
    "Classification rules:\n"
    "- Use both the image and the provided text (final answer + reasoning) to decide labels.\n"
    "- If the final answer is correct but the reasoning is flawed in any way, do NOT output 0; instead "
    "output the label(s) for the flawed aspects (you may include multiple labels).\n\n"
    "Output format:\n"
    "Your output must be ONLY a comma-separated list of integers (no words, no punctuation except commas "
    "and digits). Examples:\n0\n7\n1,3\n2,6,9"
)
#: Prompt 3, User Input Template (Appendix, verbatim).
USER_TEMPLATE = (
    "IMAGE: {image}\nQUESTION: {question}\nOPTIONS: {options}\nANSWER: {answer}\n"
    "MODEL FINAL ANSWER: {model_answer}\nMODEL REASONING: {reasoning}"
)

_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL | re.IGNORECASE)
_LABEL_LIST = re.compile(r"^\s*\d+(\s*,\s*\d+)*\s*$")


def parse_labels(text: str) -> list[str]:
    """The tags of the analyzer's reply: "0" -> ["correct"], "1,3" -> ["E1", "E3"]; a ValueError when
    it is not the comma-separated list of integers 0-9 the prompt asks for."""
    if not _LABEL_LIST.match(text):
        raise ValueError(f"analyzer reply is not a comma-separated list of labels: {text[:80]!r}")
    labels = sorted({int(v) for v in text.split(",")})
    if any(v > 9 for v in labels):
        raise ValueError(f"analyzer label outside 0-9: {text[:80]!r}")
    return ["correct" if v == 0 else f"E{v}" for v in labels]


def _joined(value: Any) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def analyzer_prompt(sample: Sample, answered: Prediction) -> str:
    """Prompt 3's user text for one answered question."""
    raw = answered.raw or ""
    think = _THINK.search(raw)
    return USER_TEMPLATE.format(
        image=sample.context.get("image_name", ""),
        question=sample.question,
        options=sample.context.get("options_text", ""),
        answer=_joined(sample.answer),
        model_answer=_joined(answered.answer) if answered.answer is not None else "",
        reasoning=(think.group(1) if think else raw).strip(),
    )


async def analyze_reasoning(
    state: QuestionState, answered: Prediction, runtime: Runtime[GraphContext]
) -> Prediction:
    """`answered` with the analyzer's tags in its metadata, its trace and usage (an answer the model never
    gave is not analyzed: `analyzer_error` says so)."""
    if answered.raw is None:
        return _with(answered, {ANALYZER_ERROR: f"no answer to analyze ({answered.status})"})
    sample, start = state["sample"], time.perf_counter()
    text = analyzer_prompt(sample, answered)
    request = GenerateRequest(
        messages=[
            Message(role="system", content=SYSTEM_PROMPT),
            Message(role="user", content=[*state["images"], TextPart(text=text)]),
        ],
        temperature=0.0,
        max_tokens=MAX_NEW_TOKENS,
        metadata={"sample_id": sample.id, "role": ANALYZER},
    )
    response, error = await ask(runtime, request, ANALYZER)
    model = model_of(runtime, ANALYZER)
    step: dict[str, Any] = {"node": "analyze_reasoning", "role": ANALYZER, "model": model, "prompt": text}
    if response is None:
        status = error.get("status", Status.api_error)
        return _with(answered, {ANALYZER_ERROR: f"{status}: {error.get('error')}"}, step)
    step.update(raw=response.text, cached=response.cached)
    try:
        found: dict[str, Any] = {ERROR_TAGS: parse_labels(response.text)}
    except ValueError as exc:
        found = {ANALYZER_ERROR: f"{Status.parse_failure}: {exc}"}
    return _with(
        answered,
        found,
        step,
        usage_by_role={DEFAULT_ROLE: answered.usage, ANALYZER: response.usage},
        usage=answered.usage + response.usage,
        latency_s=answered.latency_s + time.perf_counter() - start,
    )


def _with(
    answered: Prediction, found: dict[str, Any], step: dict[str, Any] | None = None, **fields: Any
) -> Prediction:
    trace = [*answered.trace, step] if step is not None else answered.trace
    return answered.model_copy(update={"metadata": {**answered.metadata, **found}, "trace": trace, **fields})
