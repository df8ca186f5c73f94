"""Stand-in VLMs for the `<suite>.agent` graphs: each calls the suite's tools, then answers from their output.

Like the other readers they see text only. Offered tools and no tool result yet, a model calls the tools
its question needs (some questions need none, so runs have questions with and without calls); once the
results are in it answers with the suite's text reader, the tool output written as the sentences the
reader understands. They read request bodies of the OpenAI Chat Completions and Anthropic Messages wires.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kinegraph.agents import encode_image
from kinegraph.agents.loopback_wire import Reply
from kinegraph.benchmarks.egodyn.questions import QUESTION_BANK
from kinegraph.media import read_video
from tests.support.suite_readers import autodridm_reader, dsi_reader, stsbench_reader, tad_reader
from tests.support.text_reader_model import answer_text
from tests.support.tool_caller_model import conversation_text, has_tool_result, offered_tools

Responder = Callable[[dict[str, Any]], "str | Reply"]
#: The EgoDyn questions the registry's visual odometry answers (its `answers` keys).
VO_QUESTIONS = (
    "yaw_rate_turn_direction",
    "speed_trend",
    "significant_heading_change",
    "high_lateral_accel",
    "stop_and_go",
    "brake_then_turn",
)


def tool_outputs(body: dict[str, Any]) -> list[str]:
    """The tool results a conversation holds, in order (either wire format)."""
    outputs = []
    for message in body["messages"]:
        if message["role"] == "tool":
            outputs.append(message["content"])
        elif isinstance(message["content"], list):
            outputs += [b["content"] for b in message["content"] if b.get("type") == "tool_result"]
    return outputs


def first_image(body: dict[str, Any]) -> bytes:
    for message in body["messages"]:
        for part in message["content"] if isinstance(message["content"], list) else []:
            if part.get("type") == "image_url":
                return base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
            if part.get("type") == "image":
                return base64.b64decode(part["source"]["data"])
    raise AssertionError("no image in the request")


def _as_text(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def agent_model(
    calls: Callable[[str], list[str]], answer: Callable[[str, list[str]], str]
) -> Callable[[dict[str, Any]], str | Reply]:
    """Calls `calls(prompt)` (the offered ones) first; then `answer(text, tool outputs)`."""

    def respond(body: dict[str, Any]) -> str | Reply:
        text = conversation_text(body)
        if body.get("tools") and not has_tool_result(body):
            wanted = [name for name in calls(text) if name in offered_tools(body)]
            if wanted:
                return Reply(text="", tool_calls=[(name, {}) for name in wanted])
        return answer(text, tool_outputs(body) if has_tool_result(body) else [])

    return respond


def egodyn_question(text: str) -> str | None:
    """The bank id of the question in `text`."""
    return next((q.question_id for q in QUESTION_BANK if q.text in text), None)


def _egodyn_answer(text: str, outputs: list[str]) -> str:
    """Visual odometry's own answer to the question when it gave one, else the blind text reader's."""
    qid = egodyn_question(text)
    for output in outputs:
        if not output.startswith("Error") and qid in json.loads(output).get("answers", {}):
            return json.loads(output)["answers"][qid]
    return answer_text(text)


def egodyn_model() -> Responder:
    """Calls `visual_odometry` on the six questions it answers."""
    return agent_model(
        lambda t: ["visual_odometry"] if egodyn_question(t) in VO_QUESTIONS else [], _egodyn_answer
    )


def tad_model() -> Responder:
    """Calls both tools on every question, answers as `tad_reader` from the conversation."""
    return agent_model(lambda t: ["ego_motion_map", "camera_motion"], lambda t, o: tad_reader(_as_text(t)))


def stsbench_model() -> Responder:
    """Calls `ego_motion_map` on every question, answers as `stsbench_reader` from the conversation."""
    return agent_model(lambda t: ["ego_motion_map"], lambda t, o: stsbench_reader(_as_text(t)))


def _camera_sentences(outputs: list[str]) -> str:
    directions = [json.loads(o)["direction"] for o in outputs if not o.startswith("Error")]
    return "".join(f"\nthe camera moves {d}" for d in directions if d != "static")


def dsi_model() -> Responder:
    """Calls `camera_motion` on the camera-motion and camera-distance questions only."""
    wanted = ("How is the camera moving", "distance between the camera")
    return agent_model(
        lambda t: ["camera_motion"] if any(w in t for w in wanted) else [],
        lambda t, o: dsi_reader(_as_text(t + _camera_sentences(o))),
    )


def _cue_sentences(outputs: list[str]) -> str:
    cues = [json.loads(o) for o in outputs if not o.startswith("Error")]
    return "".join(f"\nillumination: {c['illumination']}; lit traffic lamp: {c['lamp']}" for c in cues)


def autodridm_model() -> Responder:
    """Calls `image_cues` on the weather, traffic-light and best-choice questions only."""
    wanted = ("weather condition", "state of the traffic light", "best choice")
    return agent_model(
        lambda t: ["image_cues"] if any(w in t for w in wanted) else [],
        lambda t, o: autodridm_reader(_as_text(t + _cue_sentences(o))),
    )


def quantiphy_model(world: Path) -> Responder:
    """Boxes objects perfectly (it knows each video by its first frame) and asks the pixel-scale
    calculator; it answers with the calculator's answer, or "1 m" (a guess) without one."""
    truth = json.loads((world / "quantiphy_truth.json").read_text())
    header, *lines = csv.reader((world / "quantiphy_validation.csv").open())
    rows = [{"id": line[0], **dict(zip(header[1:], line[1:], strict=True))} for line in lines]
    videos = {}
    for vid in truth["videos"]:
        frames, _ = read_video(world / "validation_videos" / f"{vid}.mp4", [0])
        videos[hashlib.sha256(encode_image(frames[0]).data).hexdigest()] = vid

    def respond(body: dict[str, Any]) -> str | Reply:
        text = conversation_text(body)
        if has_tool_result(body):
            output = tool_outputs(body)[-1]
            return "1 m" if output.startswith("Error") else json.loads(output)["answer"]
        if "pixel_scale_calculator" not in offered_tools(body):
            return "1 m"
        vid = videos[hashlib.sha256(first_image(body)).hexdigest()]
        row = next(r for r in rows if r["video_id"] == vid and f"{r['question']}\n" in text)
        objects, grounding = truth["videos"][vid]["objects"], truth["rows"][row["id"]]
        three_d = row["video_type"][1] == "3"
        arguments = {
            "prior": row["ground_truth_prior"],
            "question": row["question"],
            "prior_box_px": objects[grounding["prior_object"]]["seed_box_px"],
            "target_boxes_px": [objects[t]["seed_box_px"] for t in grounding["target_objects"]],
            "depth_info": row["depth_info"] if three_d else "",
            "dimension": "3d" if three_d else "2d",
        }
        return Reply(text="", tool_calls=[("pixel_scale_calculator", arguments)])

    return respond
