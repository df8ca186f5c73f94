"""TAD answer extraction: upstream's letter regexes, list regexes with their priority, the frame quirk."""

from __future__ import annotations

import pytest

from kinegraph.errors import DataError
from kinegraph.evaluators.tad_answers import (
    extract_exact_scene_cot,
    extract_letter,
    extract_letter_scene_cot,
    frames_to_keysegments,
    parse_localization,
    parse_number_list,
    positions_to_keysegments,
    split_thinking,
)

OPTIONS = ["A. Turn left.", "B. Straight, constant speed.", "C. Stopped.", "D. Starting."]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("B. Straight, constant speed.", "B"),
        ("Answer: C)", "C"),
        ("D", "D"),
        (" D \n", "D"),
        ("I think B.", "N/A"),  # only the first capital+mark is tried ("I "): upstream quirk
        ("The answer is B", "N/A"),  # no mark after B, and not a one-character reply
        ("E. none", "N/A"),  # letter outside the options
        ("", "N/A"),
    ],
)
def test_extract_letter_matches_upstream(text, expected):
    assert extract_letter(text, OPTIONS) == expected


def test_answer_tag_content_is_what_gets_parsed():
    thinking, answer = split_thinking("<think>ego slows</think> blah A. <answer> C </answer>")
    assert (thinking, answer) == ("ego slows", "C")
    assert extract_letter(answer, OPTIONS) == "C"
    assert split_thinking("no tags")[1] == "no tags"


def test_blind_mode_reads_boxed_first():
    assert extract_letter("\\boxed{D} rather than A.", OPTIONS, blind=True) == "D"
    assert extract_letter("\\boxed{D} rather than A.", OPTIONS) == "A"


def test_malformed_options_raise_where_upstream_crashes():
    with pytest.raises(DataError, match="options"):
        extract_letter("A", None)
    with pytest.raises(DataError, match="one-character"):
        extract_letter("A", ["A", "B. x"])


def test_scene_cot_letter_takes_first_capital_inside_tags():
    assert extract_letter_scene_cot("Reasoning... <answer>Option B</answer>", OPTIONS) == "N/A"  # "O" first
    assert extract_letter_scene_cot("Reasoning A. <answer>b or C</answer>", OPTIONS) == "C"
    assert extract_letter_scene_cot("so \\boxed{D}", OPTIONS) == "D"
    assert extract_letter_scene_cot("C. because", OPTIONS) == "C"
    assert extract_exact_scene_cot("x <answer> Turn left </answer>") == "Turn left"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[0, 1, 2]", [0, 1, 2]),
        ("Frames 3, 4 and 5", [3, 4, 5]),  # after-word list (3) beats the first number run "3, 4" (2)
        ("Frame 2, frame 9", [2, 9]),  # every "frame N" (2) beats the first run "2" (1)
        ("1\n2\n3", [1, 2, 3]),
        ("text 7 8, frames 1 2", [7, 8]),  # tie in length: the first run outranks the after-word list
        ("none of them", []),
    ],
)
def test_number_list_candidates_and_priority(text, expected):
    assert parse_number_list(text) == expected


KEYFRAMES_INDEX = [
    {"segment_index_key": "4", "indices": list(range(0, 10))},
    {"segment_index_key": "9", "indices": list(range(5, 15))},
    {"segment_index_key": "14", "indices": list(range(10, 20))},
]


def test_frame_numbers_compare_with_zero_based_indices_unshifted():
    # "Frame10" is the 10th frame (0-based index 9, inside segments 4 and 9), but upstream compares the
    # number 10 itself with the indices: only segments 9 and 14 contain 10. Kept for parity.
    assert frames_to_keysegments([10], KEYFRAMES_INDEX) == [9, 14]
    assert frames_to_keysegments([0], KEYFRAMES_INDEX) == [4]
    assert frames_to_keysegments([], KEYFRAMES_INDEX) == []


def test_localization_full_frames_and_scene_cot_positions():
    scene = {"keyframes_index_formatted": KEYFRAMES_INDEX, "keysegments": [4, 9, 14]}
    assert parse_localization("Frames 0, 1 and 2", scene) == [4]
    # Scene-CoT: 1-based positions into `keysegments`; 7 is out of range and skipped.
    assert positions_to_keysegments([1, 3, 7], [4, 9, 14]) == [4, 14]
    assert parse_localization(
        "<answer>[2, 3]</answer>", scene, full_frames=False, strip_answer_tags=True
    ) == [9, 14]
    assert parse_localization("no list", scene) == []
