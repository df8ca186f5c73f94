"""DSI-Bench graphs: the official RAWQA prompt, the paper's FFR prompt, and RAWQA with measured self-motion.

A group is one metadata row: its four variants (std, hflip, reverse, reverse_hflip), each a different
video, so every question decodes its own clip (frames at the official 5 fps sampling, at most
`max_frames`, evenly thinned). As upstream, an answer without `<answer>X</answer>` is asked again (the first
ask and up to 10 retries; re-asks sample at temperature 1 so that they can differ, upstream relied on API
nondeterminism) and becomes "E" (always wrong) when none parses.

`dsi.ffr` is the paper's free-form reasoning setting (Appendix A.2): the same request with the FFR
instructions, which ask for `<think>` reasoning before `<answer>`. Upstream ships no FFR code; its answer
regex searches the whole reply, so the same extraction, retries and "E" apply (the first `<answer>X</answer>`
counts, even one quoted inside the reasoning, as `re.search` does; reasoning cut off at the token limit
leaves no answer and is asked again), and the suite scores it as RAWQA (Tables 2 and A.1 compare the two
on the same metrics).

`dsi.tools` (non-official) adds what the benchmark probes, self-motion vs object motion: the camera's
own motion measured from the same frames by dense optical flow (`tools.camera_motion`), as a text block
before the question.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from kinegraph.agents.protocol import GenerateRequest, ImagePart, Message, TextPart
from kinegraph.benchmarks.dsi.loader import RAWQA_PROMPT, VIDEO_SAMPLING_FPS, build_prompt
from kinegraph.errors import DataError
from kinegraph.evaluators.dsi import FAILED_ANSWER, MAX_ATTEMPTS, extract_answer
from kinegraph.graphs.nodes import ask, fan_out, prediction
from kinegraph.graphs.state import GraphContext, GroupState, QuestionState
from kinegraph.media import load_frames, video_info
from kinegraph.types import FrameRecord, Media, Sample, Status, Usage

MAX_NEW_TOKENS = 2048  # the official max_length
MAX_FRAMES = 32

ToolBlock = Callable[[np.ndarray, FrameRecord], str | None]

# The FFR system prompt of the paper (Appendix A.2), with the typeset quotes (‘‘ ’’, ’A’) as the ASCII
# quotes of the repo's RAWQA text and, like that text, a final newline, so that the message layout is
# upstream's. Kept verbatim: lower-case "please", and "your response should only be '<answer>A</answer>'"
# although the same prompt asks for reasoning first (the paper's own contradiction).
FFR_PROMPT = (
    "You are a vision-language expert.\n"
    "You are given a clip of video and your task is to answer a question about the video.\n"
    "please provide your reasons step by step in details, then provide *ONE* correct answer selecting "
    "from the options.\n"
    "You only need to provide *ONE* correct answer selecting from the options listed below. For example, "
    "if you think the correct answer is 'A' from 'A. Above B. Under C. Front D. Behind', your response "
    "should only be '<answer>A</answer>'.\n"
    "Please answer the question in this format strictly:\n"
    "<think>[replace your reasoning here]</think>\n"
    "<answer>[replace your answer here, A, B, C, or D]</answer>\n"
)


def sampled_media(media: Media, fps: float, max_frames: int) -> Media:
    """The video's frames at `fps` (every round(native / fps)-th frame), thinned evenly to `max_frames`."""
    if media.video_path is None:
        raise DataError("video media without a path", field="video_path")
    n_total, native_fps = video_info(media.video_path)
    step = max(1, round(native_fps / fps)) if native_fps > 0 else 1
    indices = list(range(0, n_total, step))
    if len(indices) > max_frames:
        indices = [indices[i] for i in np.linspace(0, len(indices) - 1, max_frames).round().astype(int)]
    return media.model_copy(update={"frame_indices": indices, "fps": native_fps or None})


def camera_motion_block(frames: np.ndarray, record: FrameRecord) -> str | None:
    """Non-official: the camera's self-motion measured by dense optical flow and, where the frames show a
    road, by ground-plane visual odometry, as sentences for the VLM."""
    from kinegraph.tools.camera_motion import camera_direction, camera_motion

    if len(frames) < 2:
        return None
    motion = camera_motion(frames)
    direction = camera_direction(motion)
    verdict = "the camera is static" if direction == "static" else f"the camera moves {direction}"
    flow = (
        "Camera self-motion measured from the video frames by a deterministic tool (median dense optical "
        "flow "
        f"of the whole image): horizontal shift {motion.shift_x_px:+.2f} px/frame (negative: the scene "
        f"slides left), expansion {motion.expansion_px:+.3f} px/frame (positive: the scene grows), so "
        f"{verdict}. Motion of an object relative to the scene is its own motion minus this."
    )
    return f"{flow}\n{ground_motion_sentence(frames, record)}"


def ground_motion_sentence(frames: np.ndarray, record: FrameRecord) -> str:
    """The ground-plane VO reading of the clip, or why it does not apply (never a silent zero)."""
    from kinegraph.tools.camera_model import carla_default
    from kinegraph.tools.ego_trajectory import estimate_trajectory, road_plane_fits

    name = "Ground-plane visual odometry (assumes a forward camera about 1.6 m above a flat road)"
    if len(frames) < 3 or len(record.timestamps_s) != len(frames):
        return f"{name}: not run (needs at least 3 frames with timestamps)."
    try:
        trajectory = estimate_trajectory(
            frames, record.timestamps_s, carla_default(frames.shape[2], frames.shape[1])
        )
    except ValueError:
        return f"{name}: no road surface could be tracked in these frames, so it gives no reading."
    if not road_plane_fits(trajectory):
        return f"{name}: the tracked points do not move like a road plane, so it gives no reading."
    forward, left = trajectory.xy_m[-1]
    turn = float(np.degrees(trajectory.yaw_rad[-1]))
    return (
        f"{name}: over the clip the camera moved {forward:+.1f} m forward and {left:+.1f} m to the left "
        f"(negative: backward / right) and turned {turn:+.1f} deg (+ = left)."
    )


def prompt_text(sample: Sample, block: str | None, instructions: str = RAWQA_PROMPT) -> str:
    """The official text with `instructions` in place of RAWQA's; a tool block goes between the
    instructions and the question."""
    rawqa = build_prompt(sample.question, sample.context.get("options_text", ""))
    official = instructions + rawqa.removeprefix(RAWQA_PROMPT)
    if block is None:
        return official
    head, sep, question = official.partition("\nQuestion:\n")
    return f"{head}{block}\n{sep}{question}"


def decode_variant(sample: Sample, max_frames: int) -> tuple[np.ndarray, FrameRecord, list[ImagePart]]:
    """This variant's frames at the sampling rate (at most `max_frames`), their record and JPEGs."""
    from kinegraph.agents import encode_image

    fps = float(sample.context.get("sampling_fps", VIDEO_SAMPLING_FPS))
    frames, record = load_frames(sampled_media(sample.media, fps, max_frames))
    return frames, record, [encode_image(f) for f in frames]


def answer_question(
    tool: ToolBlock | None, max_frames: int, max_attempts: int, instructions: str = RAWQA_PROMPT
) -> Callable[..., Any]:
    """Decode this variant's video, (measure,) ask until `<answer>X</answer>` parses, record the letter."""

    async def answer(state: QuestionState, runtime: Runtime[GraphContext]) -> dict[str, Any]:
        sample, start = state["sample"], time.perf_counter()
        runtime.context.stats.decodes += 1
        try:
            frames, record, images = await asyncio.to_thread(decode_variant, sample, max_frames)
            block = await asyncio.to_thread(tool, frames, record) if tool is not None else None
        except (DataError, OSError, ValueError) as exc:
            return {"results": [prediction(sample, status=Status.input_error, error=str(exc))]}
        text = prompt_text(sample, block, instructions)
        trace: list[dict[str, Any]] = [{"node": "answer_question", "prompt": text, "n_images": len(images)}]
        usage, raw, letter = Usage(), None, None
        for attempt in range(max_attempts):
            request = GenerateRequest(
                messages=[Message(role="user", content=[*images, TextPart(text=text)])],
                temperature=0.0 if attempt == 0 else 1.0,
                max_tokens=MAX_NEW_TOKENS,
                metadata={"sample_id": sample.id, "attempt": attempt},
            )
            response, error = await ask(runtime, request)
            if response is None:
                fields = {**error, "latency_s": time.perf_counter() - start}
                return {
                    "results": [
                        prediction(sample, raw=raw, trace=trace, frames=record, usage=usage, **fields)
                    ]
                }
            usage, raw = usage + response.usage, response.text
            trace.append(
                {"node": "answer_question", "attempt": attempt, "raw": raw, "cached": response.cached}
            )
            letter = extract_answer(raw)
            if letter is not None:
                break
        result = prediction(
            sample,
            raw=raw,
            answer=letter or FAILED_ANSWER,
            status=Status.ok if letter else Status.parse_failure,
            trace=trace,
            frames=record,
            usage=usage,
            latency_s=time.perf_counter() - start,
        )
        return {"results": [result]}

    return answer


def _graph(
    tool: ToolBlock | None, max_frames: int, max_attempts: int, instructions: str = RAWQA_PROMPT
) -> CompiledStateGraph:
    if max_attempts < 1 or max_frames < 2:
        raise ValueError(f"need max_attempts >= 1 and max_frames >= 2, got {max_attempts}, {max_frames}")
    return variant_graph(answer_question(tool, max_frames, max_attempts, instructions))


def variant_graph(answer: Callable[..., Any]) -> CompiledStateGraph:
    """One `answer_question` branch per variant of the row, each decoding its own video."""
    graph = StateGraph(GroupState, context_schema=GraphContext)
    graph.add_node("answer_question", answer)
    graph.add_conditional_edges(START, fan_out("answer_question"), ["answer_question"])
    graph.add_edge("answer_question", END)
    return graph.compile()


def build_baseline(max_frames: int = MAX_FRAMES, max_attempts: int = MAX_ATTEMPTS) -> CompiledStateGraph:
    """`dsi.baseline`: the video's frames and the official RAWQA prompt."""
    return _graph(None, max_frames, max_attempts)


def build_ffr(max_frames: int = MAX_FRAMES, max_attempts: int = MAX_ATTEMPTS) -> CompiledStateGraph:
    """`dsi.ffr`: the paper's free-form reasoning setting, `<think>` then `<answer>` (FFR prompt)."""
    return _graph(None, max_frames, max_attempts, FFR_PROMPT)


def build_tools(max_frames: int = MAX_FRAMES, max_attempts: int = MAX_ATTEMPTS) -> CompiledStateGraph:
    """`dsi.tools`: plus the camera's self-motion measured by dense optical flow (non-official)."""
    return _graph(camera_motion_block, max_frames, max_attempts)
