"""QuantiPhy prompts as upstream `model_run_example/run_API_results.py` builds them.

Zero-shot v3 (frames + ground-truth prior), v1 (no frames), v2 (counterfactual `alt_prior`), and the
chain-of-thought sequence (cot_q1..3, then the main question with the valid sub-answers as context).
"""

from __future__ import annotations

import math
from typing import Any

from kinegraph.types import Sample

SYSTEM_PROMPT = (
    "You are an expert video analyst specializing in physics measurements.\n"
    "Analyze the video frames carefully and provide ONLY the numerical answer with units. "
    "No explanation or reasoning needed.\n"
    "Format your response as: [value] [unit]\n"
    "Example: 2.5 cm\n"
    "Be as accurate as possible with measurements and calculations. "
    "Please give me an estimated answer even if you are not sure."
)
ZERO_SHOT_SUFFIX = "\n\nPlease answer the question with numbers and units ONLY. No explanation needed."
DEPTH_LEAD = (
    "Additionally, you have the following information about the distance between the objects in "
    "the video and the shooting camera: "
)


def _present(value: Any) -> bool:
    return (
        value is not None
        and not (isinstance(value, float) and math.isnan(value))
        and str(value).strip() != ""
    )


def context_prefix(prior: Any, depth_info: Any) -> str:
    """`Given that {prior}.` plus the depth entries, ending in punctuation and one space (upstream)."""
    parts = []
    if _present(prior):
        parts.append(f"Given that {prior}.")
    if _present(depth_info):
        parts.append(DEPTH_LEAD + str(depth_info))
    context = " ".join(parts).strip()
    if context and context[-1] not in ".!?":
        context += "."
    return context + " " if context else ""


def depth_for(sample: Sample) -> Any:
    """Depth entries are shown only for 3D videos (video_type[1] == '3'), as upstream."""
    video_type = str(sample.metadata.get("video_type", ""))
    return sample.context.get("depth_info") if len(video_type) >= 2 and video_type[1] == "3" else None


def zero_shot_text(sample: Sample, prior: Any) -> str:
    return f"{context_prefix(prior, depth_for(sample))}{sample.question}{ZERO_SHOT_SUFFIX}"


def cot_step_text(question: str, previous_context: str) -> str:
    """One sub-question; the previous valid sub-answers come first when there are any."""
    if previous_context:
        return (
            f"{previous_context}\n\nNow answer this question: {question}\n\n"
            "Please only provide the final numerical answer with units in this format: [value] [unit]"
        )
    # upstream's text, doubled word included
    return (
        f"{question}\n\nPlease only provide the final numerical answer answer with units in this format: "
        "[value] [unit]"
    )


def cot_final_text(sample: Sample, cot_context: str) -> str:
    prefix = context_prefix(sample.context.get("ground_truth_prior"), depth_for(sample))
    if cot_context:
        return (
            f"{prefix}\n\nBased on the following previous questions and answers:\n\n{cot_context}\n"
            f"Now answer this question: {sample.question}\n\n"
            "Please only provide the final numerical answer in this format: [value] [unit]"
        )
    return (
        f"{prefix}{sample.question}\n\n"
        "Please only provide the final numerical answer with units in this format: [value] [unit]."
    )
