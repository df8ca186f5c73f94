"""A stand-in VLM for loopback servers: it reads only the prompt text (it cannot see images).

With a kinematics timeseries or tool measurements in the prompt it reasons from those numbers with
textbook rules; without them it gives the first option, like a blind model.
"""

from __future__ import annotations

import re
from typing import Any

ROW = re.compile(r"^(t\(s\)|speed\(m/s\)|accel\(m/s²\)|yaw_rate\(rad/s\)|jerk\(m/s³\)):\s*(.+)$", re.M)
QUESTION = re.compile(r"^(?P<q>.+?) \[(?P<opts>[^\]]+)\]$", re.M)


def prompt_text(body: dict[str, Any]) -> str:
    parts = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        else:
            parts += [c.get("text", "") for c in content if c.get("type") == "text"]
    return "\n".join(parts)


def _series(text: str) -> dict[str, list[float]]:
    return {name: [float(v) for v in values.split(",")] for name, values in ROW.findall(text)}


def _answer(question: str, options: list[str], s: dict[str, list[float]]) -> str:
    speed, accel, yaw, jerk = (
        s.get(k, []) for k in ("speed(m/s)", "accel(m/s²)", "yaw_rate(rad/s)", "jerk(m/s³)")
    )
    if not speed:
        return options[0]
    peak_yaw = max(yaw, key=abs) if yaw else 0.0
    lateral = [v * abs(w) for v, w in zip(speed, yaw, strict=False)]
    rules = {
        "turning left": "left" if peak_yaw > 0.04 else "right" if peak_yaw < -0.04 else "straight",
        "braking": "emergency"
        if min(accel) < -1.59
        else "moderate"
        if min(accel) < -0.89
        else "low"
        if min(accel) < -0.18
        else "none",
        "speed regime": "stopped"
        if max(speed) < 0.5
        else "slow"
        if max(speed) < 5
        else "urban"
        if max(speed) < 13.9
        else "highway",
        "accelerating, decelerating": "accelerating"
        if sum(accel) / len(accel) > 0.25
        else "decelerating"
        if sum(accel) / len(accel) < -0.25
        else "steady",
        "mean speed below": "yes" if sum(speed) / len(speed) < 5 else "no",
        "lateral acceleration": "yes" if max(lateral) > 2.0 else "no",
        "stop-and-go": "yes" if min(speed) < 0.5 and max(speed) > 2.0 else "no",
        "smooth": "smooth" if jerk and sum(map(abs, jerk)) / len(jerk) < 1.25 else "moderate",
        "15 degrees": "yes" if sum(abs(w) for w in yaw) * 0.3 > 0.2618 else "no",
    }
    for key, answer in rules.items():
        if key in question and answer in options:
            return answer
    return options[0]


READING = re.compile(r"^\s*- (.+?) -> (\S+)$", re.M)


def text_reader(body: dict[str, Any]) -> str:
    """Answer the prompt's question(s) from its text alone: tool readings first, then the numbers."""
    return answer_text(prompt_text(body))


def answer_text(text: str) -> str:
    """The answer(s) to the question(s) in `text`, read from the tool readings and numbers it holds."""
    series = _series(text)
    readings: dict[str, str] = {}
    for question, answer in READING.findall(text):
        readings.setdefault(question, answer)  # the first tool listed is trusted first
    questions = QUESTION.findall(text)
    if not questions:
        return "I cannot tell."
    answers = []
    for q, opts in questions:
        question = q.split(". ", 1)[-1]
        answers.append(
            readings.get(question) or _answer(question, [o.strip() for o in opts.split("/")], series)
        )
    if len(answers) == 1:
        return answers[0]
    return "\n".join(f"A{i}. {a}" for i, a in enumerate(answers, 1))
