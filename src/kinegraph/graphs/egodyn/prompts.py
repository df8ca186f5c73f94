"""EgoDyn-Bench prompts as upstream `evaluation/evaluator_common.py` builds them, plus kinegraph's tool text.

One question per request (upstream default) or all of a clip's questions in one request (`--group_by_clip`),
parsed per line with upstream's `[Aa]?(\\d+)[.):]\\s*(.+)`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_ANSWER_LINE = re.compile(r"[Aa]?(\d+)[.):]\s*(.+)")


def context_line(n_frames: int) -> str | None:
    """The line that introduces the frames; none for text-only requests."""
    if n_frames <= 0:
        return None
    if n_frames == 1:
        return "The image shows the forward camera view from a 3-second driving clip."
    return (
        f"The {n_frames} images show the forward camera view at evenly spaced moments across "
        "a 3-second driving clip."
    )


def question_line(question: str, choices: Sequence[str] | None) -> str:
    return f"{question} [{' / '.join(choices)}]" if choices else question


def single_prompt(
    question: str, choices: Sequence[str] | None, n_frames: int, blocks: Sequence[str | None] = ()
) -> str:
    """Context line, optional text blocks (trajectory, tool measurements), the question, the instruction."""
    parts = [p for p in (context_line(n_frames), *blocks) if p]
    parts.append(question_line(question, choices))
    parts.append("Answer with ONLY the chosen option." if choices else "Answer concisely.")
    return "\n".join(parts)


def grouped_prompt(
    questions: Sequence[tuple[str, Sequence[str] | None]], n_frames: int, blocks: Sequence[str | None] = ()
) -> str:
    """All of a clip's questions in one request with numbered answers."""
    parts = [p for p in (context_line(n_frames), *blocks) if p]
    parts.append("\nAnswer each question. Reply ONLY with the numbered answers.")
    parts += [f"Q{i}. {question_line(q, c)}" for i, (q, c) in enumerate(questions, 1)]
    parts.append(f"\nFormat:\nA1. answer\nA2. answer\n...\nA{len(questions)}. answer")
    return "\n".join(parts)


def parse_grouped_response(text: str, n_questions: int) -> list[str]:
    """Numbered answers by position; "" where a number is missing (upstream)."""
    answers = [""] * n_questions
    for line in text.strip().splitlines():
        match = _ANSWER_LINE.match(line.strip())
        if match:
            index = int(match.group(1)) - 1
            if 0 <= index < n_questions:
                answers[index] = match.group(2).strip()
    return answers


def tool_block(measurements: dict[str, str]) -> str | None:
    """Non-official: what deterministic tools measured from the frames, as a text block."""
    lines = [text for text in measurements.values() if text]
    if not lines:
        return None
    return "Measurements from deterministic motion tools (computed from the same frames):\n" + "\n".join(
        lines
    )


PROBE_TITLES = {
    "vo": "Visual odometry (KLT tracks + essential matrix) between consecutive frames",
    "flow": "Dense optical flow (Farneback) between consecutive frames",
    "gpu_flow": "Dense optical flow (Horn-Schunck) between consecutive frames",
    "tcogmap": "TCogMap ego-motion summary of the measured metric trajectory",
    "tcogmap_vo": "TCogMap-style ego-motion summary from visual odometry (pixels)",
}


def describe_probe(name: str, measured: dict) -> str:
    """Non-official: one probe's signals and its reading of the questions it determines, as prompt text."""
    signals = measured.get("signals", {})
    title = PROBE_TITLES.get(name, name)
    lines = [f"{title}: {measured['summary']}" if measured.get("summary") else f"{title}:"]
    for key, values in signals.items():
        if key != "method" and isinstance(values, list):
            lines.append(f"  {key}: " + ", ".join(f"{v:g}" for v in values))
        elif isinstance(values, int | float):
            lines.append(f"  {key}: {values:g}")
    if "yaw_deg" in signals:
        total = sum(signals["yaw_deg"])
        side = "left" if total > 0 else "right"
        lines.append(f"  total heading change: {abs(total):.1f} deg to the {side} (+ = left)")
    answers = measured.get("answers", {})
    if answers:
        from kinegraph.benchmarks.egodyn.questions import default_question_bank

        bank = default_question_bank()
        lines.append("  its reading of the questions it can answer:")
        lines += [f"  - {bank[q].text if q in bank else q} -> {a}" for q, a in answers.items()]
    return "\n".join(lines)
