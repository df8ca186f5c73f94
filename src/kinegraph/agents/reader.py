"""The `reader` provider: a built-in model that reads only the prompt's text (it cannot see images).

`--model reader:text` needs no key, server or download. With a kinematics timeseries or tool readings in
the prompt it reasons from those numbers with textbook rules; without them it gives the first option,
as a blind model would. So a graph that puts tool outputs into the prompt scores above the same graph
without them: the demo's "VLM alone vs VLM with tools", shown on a machine with no model. It answers
EgoDyn-style questions; for other benchmarks it says it cannot tell (scored as unparsed).
"""

from __future__ import annotations

import re
from typing import Any

from kinegraph.agents.protocol import GenerateRequest, GenerateResponse
from kinegraph.types import Usage

ROW = re.compile(r"^(t\(s\)|speed\(m/s\)|accel\(m/s²\)|yaw_rate\(rad/s\)|jerk\(m/s³\)):\s*(.+)$", re.M)
QUESTION = re.compile(r"^(?P<q>.+?) \[(?P<opts>[^\]]+)\]$", re.M)


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


class ReaderBackend:
    """Answers each request from the text of its messages (`answer_text`)."""

    provider = "reader"
    cacheable = False

    def __init__(self, model: str = "text") -> None:
        self.model = model

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        text = "\n".join(m.text for m in request.messages)
        answer = answer_text(text)
        usage = Usage(input_tokens=len(text.split()), output_tokens=len(answer.split()))
        return GenerateResponse(text=answer, model=f"reader:{self.model}", usage=usage)


def create_reader(model: str, *, base_url: str | None = None, **options: Any) -> ReaderBackend:
    """Factory for `reader:NAME` (it takes no options; a base_url is ignored: it runs in process)."""
    if options:
        raise TypeError(f"create_reader() got an unexpected keyword argument '{next(iter(options))}'")
    return ReaderBackend(model)
