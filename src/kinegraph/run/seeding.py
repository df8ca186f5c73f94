"""What a run's seed reaches: each model's sampling seed where its provider takes one, and the graph's
`seed` option (frame order, exemplar draw) where `-O seed=` set none. What it did not reach is recorded
in run.json (`seed_sent`) and said in one warning line at run start, never dropped silently."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from kinegraph.agents.providers import SEEDED_PROVIDERS, parse_model_spec
from kinegraph.graphs import graph_spec
from kinegraph.types import RunConfig


def with_run_seed(config: RunConfig) -> RunConfig:
    """`config` with the graph's `seed` option set to the run's seed when the graph takes one, the run has
    a seed and `-O seed=` did not set it (an explicit option wins)."""
    if config.seed is None or "seed" in config.options or not graph_takes_seed(config.graph):
        return config
    return config.model_copy(update={"options": {**config.options, "seed": config.seed}})


def graph_takes_seed(graph: str) -> bool:
    """Whether the graph's builder has a `seed` option."""
    return any(option.name == "seed" for option in graph_spec(graph).options)


def backend_options(config: RunConfig, model: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """A backend's options with the run's seed added where its provider takes one (a `seed` model option
    given for that backend wins)."""
    provider, _ = parse_model_spec(model)
    if config.seed is None or provider not in SEEDED_PROVIDERS:
        return dict(options)
    return {"seed": config.seed, **options}


def check_backend_seed(config: RunConfig, backend: Any) -> None:
    """Refuse, in one line, a backend given in process that does not send the run's seed although its
    provider takes one (run.json would say a seed was sent that was not)."""
    if config.seed is None or backend.provider not in SEEDED_PROVIDERS:
        return
    sends = getattr(getattr(backend, "inner", backend), "params", {}).get("seed")
    if sends is None:
        raise ValueError(
            f"the {backend.provider}:{backend.model} backend given sends no seed but the run's seed is "
            f"{config.seed}: build it with get_backend(..., seed={config.seed})"
        )


def seed_sent(config: RunConfig, role_models: Mapping[str, str]) -> dict[str, bool]:
    """Per model role of the run: whether its requests carry a sampling seed."""
    sent = {}
    for role, model in role_models.items():
        named = config.roles.get(role)
        options = named.options if named is not None else config.model_options
        provider, _ = parse_model_spec(model)
        sent[role] = provider in SEEDED_PROVIDERS and (config.seed is not None or "seed" in options)
    return sent


def warn_unsent_seed(config: RunConfig, role_models: Mapping[str, str], sent: Mapping[str, bool]) -> None:
    """One line on stderr when the run's seed reaches neither a model nor the graph somewhere."""
    if config.seed is None:
        return
    unsent = sorted({role_models[role] for role, ok in sent.items() if not ok})
    if unsent:
        print(
            f"warning: seed {config.seed} is not sent to {', '.join(unsent)} (the provider takes no sampling "
            "seed); run.json records seed_sent false",
            file=sys.stderr,
            flush=True,
        )
    elif not role_models and not graph_takes_seed(config.graph):
        print(
            f"warning: seed {config.seed} changes nothing here: graph {config.graph} runs no model and has "
            "no seed option",
            file=sys.stderr,
            flush=True,
        )
