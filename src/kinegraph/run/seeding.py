"""What a run's seed reaches: each model's sampling seed where its provider takes one, and the graph's
`seed` option (frame order, exemplar draw) where `-O seed=` set none. What it did not reach is recorded
in run.json (`seed_sent`) and said in one warning line at run start, never dropped silently."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from kinegraph.agents.providers import SEEDED_PROVIDERS
from kinegraph.run.plan import RunPlan, takes_seed
from kinegraph.types import RunConfig


def backend_options(plan: RunPlan, model: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """A backend's options with the run's seed added where its provider takes one (a `seed` model option
    given for that backend wins)."""
    config = plan.config
    if config.seed is None or plan.provider(model) not in SEEDED_PROVIDERS:
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


def seed_sent(plan: RunPlan) -> dict[str, bool]:
    """Per model role of the run: whether its requests carry a sampling seed."""
    config, sent = plan.config, {}
    for role, model in plan.role_models.items():
        named = config.roles.get(role)
        options = named.options if named is not None else config.model_options
        sent[role] = plan.provider(model) in SEEDED_PROVIDERS and (
            config.seed is not None or "seed" in options
        )
    return sent


def warn_unsent_seed(plan: RunPlan, sent: Mapping[str, bool]) -> None:
    """One line on stderr when the run's seed reaches neither a model nor the graph somewhere."""
    config, role_models = plan.config, plan.role_models
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
    elif not role_models and not takes_seed(plan.graph):
        print(
            f"warning: seed {config.seed} changes nothing here: graph {config.graph} runs no model and has "
            "no seed option",
            file=sys.stderr,
            flush=True,
        )
