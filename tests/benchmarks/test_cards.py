"""Every benchmark's card: complete, on its registry entry, and its ad-hoc question shaped as its loader
shapes a sample (context fields its schema types, the benchmark's own name)."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter

from kinegraph.benchmarks.card import HubLayout, Question, QuestionRefused
from kinegraph.suites import card_of, suites
from kinegraph.types import Media

VIDEO = Media(kind="video", video_path="clip.mp4", fps=10.0)
FRAMES = Media(
    kind="frames", frame_paths=[f"f{i}.jpg" for i in range(6)], timestamps_s=[0.5 * i for i in range(6)]
)
IMAGE = Media(kind="frames", frame_paths=["images/a.jpg"])
PRIOR = {"quantity": "the ball's diameter", "value": 0.22, "unit": "m", "at_time_s": None, "depths": None}
#: one ad-hoc question per benchmark, with the media and extras its graphs read
QUESTIONS: dict[str, Question] = {
    "egodyn": Question("q", "Is the vehicle turning left, right, or going straight?", None, VIDEO),
    "quantiphy": Question("q", "What is the ball's speed?", None, VIDEO, extras={"prior": PRIOR}),
    "tad": Question(
        "q", "What is the ego vehicle doing?", ["Stop.", "Go."], FRAMES, extras={"task": "mc_action"}
    ),
    "stsbench": Question("q", "Which maneuver?", ["Turn left.", "Go straight."], FRAMES),
    "dsi": Question("q", "How does the camera move?", ["left", "right"], VIDEO),
    "autodridm": Question("q", "What should the ego vehicle do?", ["Stop", "Go"], IMAGE),
}


@pytest.mark.parametrize("name", suites.names())
def test_every_suite_carries_a_complete_card(name: str) -> None:
    card = card_of(name)
    assert card is not None and card.name == name
    assert card.title and card.paper and card.licence
    assert "@" in card.upstream and card.upstream.startswith("github.com/")
    assert isinstance(card.hub, HubLayout) and "/" in card.hub.repo_id
    assert card.context is not dict and card.context.__annotations__
    assert card.data_hint.startswith("--data ")


@pytest.mark.parametrize("name", suites.names())
def test_an_ad_hoc_question_becomes_a_sample_of_the_benchmark(name: str) -> None:
    card = card_of(name)
    sample, made = card.ask(QUESTIONS[name])
    assert sample.benchmark == name and sample.id == "q" and sample.question == QUESTIONS[name].text
    TypeAdapter(card.context).validate_python(sample.context)  # only fields the schema types
    assert isinstance(made, dict)


def test_the_shapes_fill_what_the_graphs_read() -> None:
    ego, made = card_of("egodyn").ask(QUESTIONS["egodyn"])
    assert (ego.question_id, ego.options, made) == (
        "yaw_rate_turn_direction",
        ["left", "right", "straight"],
        {"question_id": "matched"},
    )
    tad, _ = card_of("tad").ask(QUESTIONS["tad"])
    assert tad.options == ["A. Stop.", "B. Go."] and tad.metadata["level"] == "segment"
    assert tad.context["keyframes_index_formatted"] == [
        {"segment_index_key": "3", "indices": [0, 1, 2, 3, 4, 5]}
    ]
    derived, made = card_of("tad").ask(Question("q", "When?", None, FRAMES, extras={"keysegments": "derive"}))
    assert made == {"keysegments": "derived"} and derived.metadata["level"] == "scene"
    phy, _ = card_of("quantiphy").ask(QUESTIONS["quantiphy"])
    assert phy.context["ground_truth_prior"] == "the ball's diameter = 0.22 m"


@pytest.mark.parametrize(
    ("name", "question", "message"),
    [
        (
            "egodyn",
            Question("q", "?", extras={"question_id": "nope"}),
            "question_id: 'nope' is not an EgoDyn question",
        ),
        ("tad", Question("q", "?", None, FRAMES, extras={"task": "nope"}), "task: 'nope' is not a TAD task"),
        ("tad", Question("q", "?"), "frames: TAD graphs read keyframes"),
        ("dsi", Question("q", "?", None, FRAMES), "video: DSI graphs sample a video"),
        ("autodridm", Question("q", "?", None, FRAMES), "images: AutoDriDM graphs read exactly one image"),
    ],
)
def test_a_question_the_graphs_cannot_take_is_refused_naming_the_field(
    name: str, question: Question, message: str
) -> None:
    with pytest.raises(QuestionRefused, match=f"^{message}"):
        card_of(name).ask(question)
