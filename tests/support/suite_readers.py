"""Stand-in VLMs for the loopback server that read only the prompt text (they cannot see images).

Each answers from what tools wrote into the prompt (TCogMap lines, measured camera motion, image cues)
with plain rules, and otherwise like a blind model (a fixed prior or the first option).
"""

from __future__ import annotations

import re
from typing import Any

from kinegraph.tools.tcogmap import PHRASES
from tests.support.text_reader_model import prompt_text

ACTION_OF_PHRASE = {phrase: action for action, phrase in PHRASES.items()}
SEGMENT_MAP = re.compile(r"^Motion summary: The ego-vehicle is (.+)$", re.M)
SCENE_MAP = re.compile(r"^Motion summary for Frame(\d+) to Frame(\d+): The ego-vehicle is (.+)$", re.M)
LETTERED = re.compile(r"^([A-Z])\. (.+?)\.?$", re.M)


def _options(text: str) -> dict[str, str]:
    return {letter: body.strip() for letter, body in LETTERED.findall(text)}


def _pick(options: dict[str, str], wanted: str | None) -> str:
    for letter, body in options.items():
        if wanted is not None and body.lower() == wanted.lower():
            return letter
    return "A"


def _collapse(actions: list[str]) -> list[str]:
    return [a for i, a in enumerate(actions) if i == 0 or a != actions[i - 1]]


def tad_reader(body: dict[str, Any]) -> str:
    """TAD from TCogMap lines: segment label, durations, order, localisation (1-based frames as shown)."""
    text = prompt_text(body)
    options = _options(text)
    segment = SEGMENT_MAP.search(text)
    label = ACTION_OF_PHRASE.get(segment.group(1)) if segment else None
    scene = [(int(a), int(b), ACTION_OF_PHRASE.get(p, "")) for a, b, p in SCENE_MAP.findall(text)]
    actions = [a for _, _, a in scene]
    if "exactly one full phrase" in text:
        return label or "Straight, constant speed"
    if "explicit list of all frame numbers" in text:
        wanted = re.search(r"doing action '([^']+)'", text)
        frames = sorted(
            {f for a, b, act in scene if wanted and act.lower() == wanted.group(1) for f in range(a, b + 1)}
        )
        return str(frames or [1])
    if "spend the most time" in text and actions:
        return _pick(options, max(dict.fromkeys(actions), key=actions.count))
    if "temporal order" in text and actions:
        return _pick(options, "; ".join(_collapse(actions)))
    if "happened earlier" in text and actions:
        seen = [body for body in options.values() if body in actions]
        return _pick(options, min(seen, key=actions.index) if seen else None)
    return _pick(options, label)


STS_OF_PHRASE = {
    "turning to the left.": "Ego is turning left",
    "turning to the right.": "Ego is turning right",
    "stopping.": "Ego is stopping",
    "starting from a stop.": "Ego is accelerating",
    "changing lane to the left.": "Ego is changing lanes",
    "changing lane to the right.": "Ego is changing lanes",
}


def stsbench_reader(body: dict[str, Any]) -> str:
    """STSBench ego scenarios from the TCogMap line; the first option otherwise."""
    text = prompt_text(body)
    segment = SEGMENT_MAP.search(text)
    return _pick(_options(text), STS_OF_PHRASE.get(segment.group(1)) if segment else None)


CAMERA = re.compile(r"the camera (?:moves|is moving) (left|right|forward|backward)")
OPTION_PAIR = re.compile(r"([A-D]): ([^;]+)")


def dsi_reader(body: dict[str, Any]) -> str:
    """DSI camera and distance questions from the measured camera motion; "A" otherwise."""
    text = prompt_text(body)
    options = dict(OPTION_PAIR.findall(text.split("Question:")[-1]))
    motion = CAMERA.search(text)
    wanted = None
    if motion and "How is the camera moving" in text:
        wanted = f"moving {motion.group(1)}"
    elif motion and "distance between the camera" in text and motion.group(1) in ("forward", "backward"):
        wanted = "getting closer" if motion.group(1) == "forward" else "getting farther"
    letter = next((k for k, v in options.items() if v.strip() == wanted), "A")
    return f"<answer>{letter}</answer>"


def autodridm_reader(body: dict[str, Any]) -> str:
    """AutoDriDM from the measured image cues (illumination, lit lamp); the first option otherwise."""
    text = prompt_text(body)
    options = {k: v.strip().lower() for k, v in re.findall(r"([A-Z])\.([^;\n]+)", text.split("OPTIONS:")[-1])}
    night = "illumination: night" in text
    day = "illumination: daylight" in text
    lamp = re.search(r"lit traffic lamp: (red|yellow|green|none)", text)
    wanted = None
    if "weather condition" in text and (day or night):
        wanted = "nighttime" if night else "daytime"
    elif "state of the traffic light" in text and lamp:
        wanted = "there is no traffic light" if lamp.group(1) == "none" else lamp.group(1)
    elif "best choice" in text and lamp:
        wanted = "slow down/make an emergency stop" if lamp.group(1) == "red" else "drive straight"
    letter = next((k for k, v in options.items() if v == wanted), "A")
    return f"<think>From the measurements.</think><answer>{letter}</answer>"
