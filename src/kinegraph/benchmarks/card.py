"""A benchmark's card: what every door needs to know of a benchmark, in one place on its registry entry.

A `Card` names the paper, the licence and the upstream code (repo@commit), where the data lives on the
Hugging Face Hub (`HubLayout`), the typed schema of its samples' `context`, and how an ad-hoc question
(text, options, media, extras) becomes the `Sample` its loader would have written (`Card.ask`). Serve,
Studio, `data fetch|check`, `list`, `evaluate` and the CLI read a benchmark's facts from its card
(`suites.get(name).card`) and never test a benchmark's name.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kinegraph.types import Media, Sample

_LETTERED = re.compile(r"^\s*([A-Z])\s*[.:]\s*(.+?)\s*$", re.S)


class QuestionRefused(ValueError):
    """An ad-hoc question a benchmark's graphs cannot take; `str()` is one line naming the field."""


@dataclass(frozen=True)
class HubLayout:
    """A benchmark's Hub dataset: repo, files to fetch, files that must be present, the loader's path.

    `required` lists groups of alternatives relative to the fetched folder: every group needs one present
    path. `frame_index` names a clips index whose rows list frames under the folder's `nuscenes/` root
    (`data check` verifies the join).
    """

    repo_id: str
    allow_patterns: tuple[str, ...]
    required: tuple[tuple[str, ...], ...]
    video_globs: tuple[str, ...] = ()
    needs_nuscenes: bool = False
    loader_file: tuple[str, ...] = ()  # the loader reads this file (first present) instead of the folder
    frame_index: str | None = None
    notes: tuple[str, ...] = ()

    def loader_path(self, root: Path) -> Path:
        """The path the suite's `load` takes for a fetched folder `root`."""
        for name in self.loader_file:
            if (root / name).is_file():
                return root / name
        return root / self.loader_file[0] if self.loader_file else root


@dataclass(frozen=True)
class Question:
    """An ad-hoc question a door was asked: its text and options, the clip, the context the door already
    built (trajectory arrays, ego poses), and the extras (`question_id`, `task`, `keysegments`, `prior`)."""

    id: str
    text: str
    options: list[str] | None = None
    media: Media = field(default_factory=Media)
    context: dict[str, Any] = field(default_factory=dict)
    extras: dict[str, Any] = field(default_factory=dict)


#: A card's question shaper: the Sample fields (edited in place) and what it made (`made`, in place).
Shape = Callable[[Question, dict[str, Any], dict[str, str]], None]


def plain_fields(question: Question, benchmark: str) -> dict[str, Any]:
    """The Sample fields any benchmark starts from: one question, its own group, numeric without options."""
    return {
        "id": question.id,
        "benchmark": benchmark,
        "group": question.id,
        "question_id": question.extras.get("question_id"),
        "question": question.text,
        "options": question.options,
        "media": question.media,
        "context": dict(question.context),
        "metadata": {"answer_type": "multiclass" if question.options else "numeric"},
    }


def lettered(options: list[str], separator: str) -> list[str]:
    """Options as `A<separator>text` (already-lettered options keep their letters)."""
    out = []
    for i, option in enumerate(options):
        match = _LETTERED.match(option)
        letter, text = (match.group(1), match.group(2)) if match else (chr(ord("A") + i), option.strip())
        out.append(f"{letter}{separator}{text}")
    return out


def _unchanged(question: Question, fields: dict[str, Any], made: dict[str, str]) -> None:
    """No family layout: the plain sample."""


@dataclass(frozen=True)
class Card:
    """One benchmark's facts (see the module docstring); `ask` turns an ad-hoc question into a Sample.

    `keyframe_rate_hz` is set where the benchmark's graphs read keyframes (frame files): a door given a
    video samples it at that rate first. `vlm_free_scope` says what the benchmark's VLM-free graphs
    answer, for the refusal of any other question. `data_hint` is the `--data` a reproduction needs.
    """

    name: str
    title: str
    paper: str
    licence: str
    upstream: str
    hub: HubLayout | None = None
    context: type = dict
    shape: Shape = _unchanged
    keyframe_rate_hz: float | None = None
    vlm_free_scope: Callable[[], str] | None = None
    data_hint: str = "--data PATH"
    manual_steps: tuple[str, ...] = ()

    def ask(self, question: Question) -> tuple[Sample, dict[str, str]]:
        """The Sample this benchmark's loader would write for `question`, and the inputs made on the way
        (`{"keysegments": "derived"}`, ...); a `QuestionRefused` naming the field when it cannot be."""
        made: dict[str, str] = {}
        fields = plain_fields(question, self.name)
        self.shape(question, fields, made)
        return Sample(**fields), made


def plain_sample(question: Question, benchmark: str = "serve") -> tuple[Sample, dict[str, str]]:
    """The Sample of a question to a graph of no benchmark: the plain fields, nothing made."""
    return Sample(**plain_fields(question, benchmark)), {}
