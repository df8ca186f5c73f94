"""The Sample a request asks, shaped as the graph's benchmark shapes an ad-hoc question (its card).

A graph reads its family's sample layout (EgoDyn's question id and answer type, TAD's keysegments and
level, QuantiPhy's prior, DSI's and AutoDriDM's option text); the family's card (`Card.ask`) turns the
request into the sample that family's loader would have written. Graphs of no benchmark get the plain
sample.
"""

from __future__ import annotations

from typing import Any

from kinegraph.benchmarks.card import Question, QuestionRefused, plain_sample
from kinegraph.serve.inputs import invalid
from kinegraph.serve.schemas import QARequest
from kinegraph.suites import card_of
from kinegraph.types import Media, Sample

#: request fields a card may read besides the question, options, media and context
EXTRAS = ("question_id", "task", "keysegments", "prior")


def request_question(request: QARequest, request_id: str, media: Media, context: dict[str, Any]) -> Question:
    """The request as the ad-hoc question a card takes (extras as plain JSON)."""
    extras = {name: getattr(request, name) for name in EXTRAS}
    if request.prior is not None:
        extras["prior"] = request.prior.model_dump()
    return Question(request_id, request.question, request.options, media, context, extras)


def request_sample(
    request: QARequest, family: str | None, request_id: str, media: Media, context: dict[str, Any]
) -> tuple[Sample, dict[str, str]]:
    """The sample `request` asks of a graph of `family`, and the inputs made on the way (`inputs`)."""
    question = request_question(request, request_id, media, context)
    card = card_of(family)
    if card is None:
        return plain_sample(question, family or "serve")
    try:
        return card.ask(question)
    except QuestionRefused as exc:
        raise invalid(str(exc)) from None
