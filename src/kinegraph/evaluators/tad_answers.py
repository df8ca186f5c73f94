"""TAD answer extraction, as upstream `baseline_*`, `tcogmap_*` and `cot_utils.py` (vbdi/tad_bench@1c89f7e).

Three extractors, one per upstream family: the baseline/TCogMap letter extractor (optionally `\\boxed{}`
first, the blind variant), the Scene-CoT letter extractor, and the keysegment-list parser shared by all,
with its five regexes and their tie-break priority. Upstream returns "N/A" for an unparsable letter and
`[]` for an unparsable list; both then score 0.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from kinegraph.errors import DataError

NOT_AVAILABLE = "N/A"  # upstream's prediction for an unparsable multiple-choice answer
ERROR = "ERROR"  # upstream's prediction when inference raised

_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
_LETTER_THEN_MARK = re.compile(r"([A-Z])[\.\s\:\)]")
_BOXED_LETTER = re.compile(r"\\boxed\{([A-Z])\}")
_ANY_CAPITAL = re.compile(r"([A-Z])")

# The five candidate lists of `parse_and_map_keysegments`. Lower rank wins a tie in length.
_FIRST_NUMBER_RUN = re.compile(r"\[?\s*\d+(?:[\s,]+\d+)*\s*\]?")
_AFTER_WORD = re.compile(r"(?:keysegments?|frames?)\s+([\d,\sand]+)", re.IGNORECASE)
_WORD_NUMBER = re.compile(r"[-•]?\s*(?:keysegments?|frames?)\s*(\d+)", re.IGNORECASE)
_WHOLE_LIST = re.compile(r"\s*\d+(?:[\s,]+\d+)*\s*[.,;:]?\s*")
_TRAILING_QUOTE = re.compile(r"[\'\"]$")
_DIGITS = re.compile(r"\d+")
_RANK = {"lines": 0, "whole_list": 1, "first_run": 2, "after_word": 3, "word_number": 4}


def split_thinking(raw: str) -> tuple[str | None, str]:
    """(thinking, text to parse): the `<answer>` content if tagged (stripped), else the raw text."""
    think = _THINK.search(raw)
    answer = _ANSWER.search(raw)
    return (
        think.group(1).strip() if think else None,
        answer.group(1).strip() if answer else raw,
    )


def option_letters(options: Sequence[str] | None) -> list[str]:
    """Letters of the options written `"A. ..."` (upstream keeps an option only if its 2nd char is '.')."""
    if options is None:
        # Upstream iterates the options unguarded: its inference loop then writes pred "ERROR".
        raise DataError("multiple-choice question without options", field="options")
    for opt in options:
        if opt and len(opt) < 2:
            # Upstream indexes opt[1] unguarded and the question ends as pred "ERROR".
            raise DataError(f"one-character option {opt!r}", field="options")
    return [opt[0] for opt in options if opt and opt[0].isalpha() and opt[1] == "."]


def extract_letter(text: str, options: Sequence[str] | None, blind: bool = False) -> str:
    """Baseline/TCogMap multiple-choice letter, or "N/A".

    Only the FIRST `X.`/`X `/`X:`/`X)` capital is tried (upstream does not keep searching), so
    "I think B." gives "N/A": a quirk kept for parity. `blind=True` tries `\\boxed{X}` first.
    """
    letters = option_letters(options)
    if blind:
        boxed = _BOXED_LETTER.search(text)
        if boxed and boxed.group(1) in letters:
            return boxed.group(1)
    match = _LETTER_THEN_MARK.search(text)
    if match and match.group(1) in letters:
        return match.group(1)
    cleaned = text.strip()
    return cleaned if len(cleaned) == 1 and cleaned in letters else NOT_AVAILABLE


def _between(text: str, prefix: str, suffix: str) -> str:
    """Upstream slices with two independent `find`s: the suffix may come before the prefix."""
    start = text.find(prefix) + len(prefix)
    return text[start : text.find(suffix)]


def extract_letter_scene_cot(text: str, options: Sequence[str] | None) -> str:
    """Scene-CoT letter (`cot_utils.extract_answer`): first capital in `<answer>` or `\\boxed{}`, or "N/A"."""
    letters = option_letters(options)
    if "<answer>" in text and "</answer>" in text:
        match = _ANY_CAPITAL.search(_between(text, "<answer>", "</answer>"))
    elif "\\boxed{" in text:
        match = _ANY_CAPITAL.search(_between(text, "\\boxed{", "}"))
    else:
        match = _LETTER_THEN_MARK.search(text)
    if match and match.group(1) in letters:
        return match.group(1)
    cleaned = text.strip()
    return cleaned if len(cleaned) == 1 and cleaned in letters else NOT_AVAILABLE


def extract_exact_scene_cot(text: str) -> str:
    """Scene-CoT exact-answer text: the `<answer>` slice if both tags are present, stripped."""
    if "<answer>" in text and "</answer>" in text:
        text = _between(text, "<answer>", "</answer>")
    return text.strip()


def _decimal_lines(lines: Sequence[str]) -> list[int]:
    """Upstream's `map(int, lines)`: a digit-only line `int()` cannot read ("²") raises there, and that
    one question ends as pred "ERROR"; here the DataError makes it one failed prediction as well."""
    try:
        return [int(d) for d in lines]
    except ValueError:
        bad = next(d for d in lines if not d.isdecimal())
        raise DataError(
            f"digit line {bad!r} is not a decimal number (upstream: pred 'ERROR')", field="raw"
        ) from None


def parse_number_list(text: str) -> list[int]:
    """The integer list a localisation answer names; [] when none.

    Five candidates (first run of numbers, after "frame(s)/keysegment(s)", every "frame N", digit-only
    lines, the whole text as a list); the longest wins, ties go to lines < whole list < first run <
    after-word < word-number, as upstream.
    """
    text = text.strip()
    candidates: list[tuple[str, list[int]]] = []
    first_run = _FIRST_NUMBER_RUN.search(text)
    if first_run:
        candidates.append(("first_run", [int(d) for d in _DIGITS.findall(first_run.group())]))
    after_word = _AFTER_WORD.search(text)
    if after_word:
        candidates.append(("after_word", [int(d) for d in _DIGITS.findall(after_word.group(1))]))
    word_numbers = _WORD_NUMBER.findall(text)
    if word_numbers:
        candidates.append(("word_number", [int(d) for d in word_numbers]))
    lines = [line.strip() for line in text.splitlines() if line.strip().isdigit()]
    if lines:
        candidates.append(("lines", _decimal_lines(lines)))
    whole = _WHOLE_LIST.fullmatch(_TRAILING_QUOTE.sub("", text))
    if whole:
        candidates.append(("whole_list", [int(d) for d in _DIGITS.findall(whole.group())]))
    if not candidates:
        return []
    return max(candidates, key=lambda c: (len(c[1]), -_RANK[c[0]]))[1]


def frames_to_keysegments(
    frame_numbers: Sequence[int], keyframes_index: Sequence[Mapping[str, Any]]
) -> list[int]:
    """Every keysegment whose 0-based `indices` contain ANY predicted frame number, sorted.

    Upstream quirk kept for parity: the prompt labels frames `Frame1..FrameN` (1-based) but the numbers
    are compared with the 0-based `indices` without subtracting 1.
    """
    predicted = set(frame_numbers)
    mapped = []
    for group in keyframes_index:
        indices = group.get("indices") or []
        if indices and any(i in predicted for i in indices):
            try:
                mapped.append(int(group.get("segment_index_key")))  # type: ignore[arg-type]
            except ValueError:
                continue  # upstream warns and skips a non-integer key
    return sorted(mapped)


def positions_to_keysegments(positions: Sequence[int], keysegments: Sequence[Any]) -> list[Any]:
    """Scene-CoT mapping: 1-based positions into the scene's `keysegments` list; out-of-range skipped."""
    return [keysegments[p - 1] for p in positions if 1 <= p <= len(keysegments)]


def parse_localization(
    text: str, scene: Mapping[str, Any], full_frames: bool = True, strip_answer_tags: bool = False
) -> list[Any]:
    """Keysegment prediction of a localisation answer (`parse_and_map_keysegments`).

    `full_frames=True` (baseline/TCogMap scene tasks, forced on upstream) maps frame numbers through
    `keyframes_index_formatted`; False (Scene-CoT) maps 1-based positions through `keysegments`.
    `strip_answer_tags` is Scene-CoT's extra `<answer>` slicing before the list is parsed.
    """
    if strip_answer_tags:
        stripped = text.strip()
        if "<answer>" in stripped and "</answer>" in stripped:
            text = _between(stripped, "<answer>", "</answer>")
    numbers = parse_number_list(text)
    if not numbers:
        return []
    if full_frames:
        return frames_to_keysegments(numbers, scene.get("keyframes_index_formatted") or [])
    return positions_to_keysegments(numbers, scene.get("keysegments") or [])
