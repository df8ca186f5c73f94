"""Benchmark homes: one package per benchmark (`benchmarks/<name>/`: loader, vocabulary, synthetic world
and card), the card's shared types, and the machinery several homes share (`synthetic/`, Hub tables).

The benchmark registry is `kinegraph.suites.suites`; each suite carries its home's `Card`. A loader imports
nothing from `evaluators/` or `graphs/`.
"""

from kinegraph.benchmarks.card import Card, HubLayout, Question, QuestionRefused

__all__ = ["Card", "HubLayout", "Question", "QuestionRefused"]
