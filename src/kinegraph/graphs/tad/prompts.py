"""TAD prompts as upstream builds them (vbdi/tad_bench@1c89f7e: baseline, tcogmap, cot_steps, cot_utils).

Upstream writes `Frame{i}: <IMAGE_TOKEN>` placeholders into the text and lmdeploy puts each image there;
for chat APIs the images are interleaved at those places (`interleave`). The recorded prompt keeps the
placeholders so it reads as upstream's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from kinegraph.agents.protocol import ContentPart, ImagePart, TextPart
from kinegraph.types import Sample

IMAGE_TOKEN = "<IMAGE_TOKEN>"
BLIND_TEXT = (
    "A forward-facing video from a car driving through urban streets, showing roads, vehicles, pedestrians, "
    "and city infrastructure is given."
)
THINKING = "Output the thinking process in <think> </think> and final answer in <answer> </answer> tags. "
MAX_NEW_TOKENS = 1024  # upstream GenerationConfig
LLM_MAX_NEW_TOKENS = 512  # Scene-CoT answering LLM
LLM_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
CAPTION_START = (
    34  # upstream strips `Description of video keysegment N:` with [34:] (see `cot_caption_block`)
)

MOTION_TYPES = (
    "Stopped",
    "Turn left",
    "Turn right",
    "Change lane to the left",
    "Change lane to the right",
    "Starting",
    "Stopping",
    "Straight, constant speed",
)
_MOTION_LIST = "\n".join(f"- {m}" for m in MOTION_TYPES)


def frame_placeholders(n_images: int) -> str:
    return "\n".join(f"Frame{i + 1}: {IMAGE_TOKEN}" for i in range(n_images))


def question_prompt(
    sample: Sample, n_images: int, context: Sequence[str] = (), blind: bool = False, thinking: bool = False
) -> str:
    """Frames (or the blind stand-in), context lines (motion summaries / ego poses), question, options."""
    head = BLIND_TEXT if blind else frame_placeholders(n_images)
    context_str = f"{head}\n{chr(10).join(context)}".strip()
    parts = [context_str, sample.question]
    if sample.options:
        parts.append("\n".join(sample.options))
    if thinking:
        parts.append(THINKING)
    return "\n".join(p for p in parts if p).strip()


def interleave(prompt: str, images: Sequence[ImagePart]) -> list[ContentPart]:
    """Replace each `<IMAGE_TOKEN>` with its image, in order (text between placeholders kept)."""
    pieces = prompt.split(IMAGE_TOKEN)
    if len(pieces) - 1 != len(images):
        raise ValueError(f"{len(pieces) - 1} image placeholders for {len(images)} images")
    content: list[ContentPart] = []
    for i, piece in enumerate(pieces):
        if piece.strip():
            content.append(TextPart(text=piece.strip()))
        if i < len(images):
            content.append(images[i])
    return content


def cot_step1(n_images: int) -> str:
    """Scene-CoT step 1: the scene description (the images go with this turn only)."""
    return (
        f"{frame_placeholders(n_images)}\n\n"
        "You are an expert in autonomous driving scene understanding. You are given a sequence of frames "
        "from the "
        "front camera of a vehicle.\nYour first task is to provide a concise, high-level description of the "
        "overall "
        "scene including the nearby vehicles with distinguishable descriptions. \nDescribe the scene in a "
        "few "
        "sentences. Focus only on what you can see."
    ).strip()


def cot_step2(step1: str) -> str:
    """Scene-CoT step 2: the ego vehicle's motion, ending in one of the eight motion types."""
    return (
        f"Based on the provided frames and your previous scene description:\n---\n{step1}\n---\n"
        "Now, focus *only* on the ego vehicle's motion. Analyze how the background and lane markings move "
        "across "
        "the frames. Is the ego vehicle moving forward, turning, changing lanes, starting from a stop, or "
        "stopping?"
        "\n\nDescribe your reasoning in one or two sentences, and then conclude with the most likely motion "
        "type.\n"
        f"**Your final conclusion must be one of these exact phrases**:\n{_MOTION_LIST}"
    )


def cot_step3(step1: str, step2: str) -> str:
    """Scene-CoT step 3: nearby vehicles' motion, with the same eight types."""
    return (
        f"Excellent. Your analysis of the scene and the ego vehicle's motion "
        f"was:\n---\n{step1}\n{step2}\n---\n"
        "Now, analyze nearby vehicles (cars, trucks, buses, bicycles, motorcycles, trailer, construction "
        "vehicle) "
        "in front of or near the ego vehicle. For each distinct vehicle, provide a brief reasoning and "
        "conclude "
        f"with its most likely motion type (including stopped) from the following list:\n{_MOTION_LIST}\n\n"
        "If there are no other  vehicles or their motion is unclear, state that."
    )


def cot_step4(step2: str, step3: str, phrases: dict[str, str]) -> str:
    """Scene-CoT step 4: one JSON object with the ego's and each nearby vehicle's motion phrase."""
    return (
        f"Based on all the previous analysis:\n---\nEgo Vehicle Analysis Summary:\n{step2}\n---\n"
        f"Nearby Vehicles Analysis Summary:\n{step3}\n---\n"
        "Your final task is to consolidate this information into a single JSON object. \n"
        "- First, extract the final motion classification for the ego vehicle and each nearby vehicle from "
        "your "
        "previous responses.\n- Second, map each classification to the corresponding descriptive phrase "
        "using the "
        "provided dictionary.\n- Finally, construct the JSON object.\n\n"
        f"**Motion Phrases Dictionary**:\n{json.dumps(phrases, indent=2)}\n\n"
        '**Output Format**:\n{\n  "ego_vehicle_motion": "<phrase from dictionary>",\n  '
        '"nearby_vehicles_motion": '
        '[\n    {\n      "vehicle_id": "<a brief, unique description, e.g., \'white SUV in front\'>",\n      '
        '"motion": "<phrase from dictionary>"\n    },\n    ...\n  ]\n}\n\n'
        "**Important**: Respond with *only* the raw JSON object and nothing else. Do not wrap it in "
        "markdown or "
        "add any explanations."
    )


def cot_caption(final_json: str, position: int) -> str:
    """Upstream's stored caption: the JSON in a ```json block, `Description of video keysegment N:` before "
    "it."""
    text = final_json.strip()
    if not text.startswith("```json"):
        text = f"```json\n{text}\n```"
    lines = text.splitlines()
    if "```json" not in lines:  # e.g. "```json{...": upstream raises and stores an error caption
        raise ValueError("No JSON block found in caption text.")
    lines.insert(lines.index("```json"), f"Description of video keysegment {position}:")
    return "\n".join(lines)


def cot_caption_block(position: int, step1: str | None, caption: str, style: str = "both") -> str:
    """One keysegment's text for the answering LLM.

    Quirk kept for parity: `caption[34:]` drops the `Description of video keysegment N:` line only for
    one-digit N; from N = 10 a stray ":" stays. `style` is TAD Table 10's ablation: `both` (upstream's,
    the default), `scene` (the Step-1 scene description only) or `summary` (the Step-4 summary only);
    the paper prints no text for the other two, so they are the default's block with one part left out.
    """
    head = f"The following information provides a description of video keysegment {position}: \n"
    scene = f"Scene Description: \n{step1 if step1 is not None else 'None' + chr(10)}"
    summary = f"Summary Description: {caption[CAPTION_START:]}"
    if style == "scene":
        return head + scene
    if style == "summary":
        return head + summary
    return f"{head}{scene}\n{summary}"


CAPTIONS_INSTRUCTION = (
    "Use the following descriptions of the video keysegments to assist in answering the question. Each "
    "keysegment "
    "corresponds to a short, five-second snippet of the original video. The original video is of a traffic "
    "scene "
    "from the perspective of an autonomous driving vehicle. In addition to using the video keysegment "
    "captions "
    "themselves, use logic, reasoning, and knowledge of traffic rules to answer the question. You may "
    "provide "
    "some justification, but please enclose the succint, final answer to the question between "
    "<answer></answer> "
    "tags.\n"
)


def cot_answer_prompt(sample: Sample, blocks: Sequence[str]) -> str:
    """`format_prompt_cap2ans`, option 3: question, options, the instruction and the keysegment blocks."""
    caption_text = CAPTIONS_INSTRUCTION + "".join(b + "\n\n" for b in blocks)
    if sample.options:
        return f"\n{sample.question}\n{chr(10).join(sample.options)}\n{caption_text}".strip()
    return f"{sample.question}\n{caption_text}".strip()
