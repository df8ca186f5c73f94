"""Where each benchmark lives on the Hugging Face Hub, read from the benchmark cards on the registry.

A benchmark's card carries its `HubLayout` (repo, files to fetch, files that must be present, the
loader's path). Data sources that are no benchmark but that benchmarks read (nuScenes) have a card too,
in `SOURCES`: one without a Hub layout says in `manual_steps` what to download by hand and where.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from kinegraph.benchmarks.card import Card, HubLayout
from kinegraph.benchmarks.nuscenes.card import CARD as NUSCENES
from kinegraph.errors import UsageError
from kinegraph.suites import suites

#: cards of data that benchmarks read and that is no benchmark itself
SOURCES: tuple[Card, ...] = (NUSCENES,)
#: what to download by hand for the nuScenes frames EgoDyn, TAD and STSBench read
NUSCENES_STEPS = NUSCENES.manual_steps


def data_cards() -> dict[str, Card]:
    """Every card `data fetch|check` knows: the registered benchmarks' (in registration order), then
    the sources'."""
    cards = {}
    for name in suites.in_order():
        card = suites.get(name).card
        if card is not None:
            cards[name] = card
    return {**cards, **{card.name: card for card in SOURCES}}


def data_card(name: str) -> Card:
    """The card of `name`; an unknown name is refused with the known ones."""
    cards = data_cards()
    if name not in cards:
        raise UsageError(f"unknown benchmark {name!r} for data fetch/check; known: {', '.join(cards)}")
    return cards[name]


def layout(benchmark: str) -> HubLayout:
    """The Hub layout of `benchmark`; an unknown name, or data that is not on the Hub, is refused."""
    card = data_card(benchmark)
    if card.hub is None:
        raise UsageError(f"{benchmark} is not on the Hub: `kinegraph data fetch {benchmark}` says what to do")
    return card.hub


class _Layouts(Mapping[str, HubLayout]):
    """Benchmark name -> Hub layout, read from the cards when asked (importing no suite before)."""

    def _all(self) -> dict[str, HubLayout]:
        return {name: card.hub for name, card in data_cards().items() if card.hub is not None}

    def __getitem__(self, name: str) -> HubLayout:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


LAYOUTS: Mapping[str, HubLayout] = _Layouts()
