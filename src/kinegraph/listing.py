"""`kinegraph list benchmarks|graphs|models`: what the registries hold, as aligned plain text."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kinegraph.graphs.spec import GraphSpec


def aligned(rows: Sequence[Sequence[str]]) -> str:
    """One line per row, columns padded to their widest cell (no trailing spaces)."""
    if not rows:
        return ""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    ]
    return "\n".join(lines) + "\n"


def benchmarks() -> str:
    """Registered suites: name, primary metric, and whether the scorer is official."""
    from kinegraph.suites import suites

    rows = []
    for name in suites:
        suite = suites.get(name)
        rows.append([name, suite.primary, "official" if suite.official else "non-official"])
    return aligned(rows)


def graphs() -> str:
    """Registered graphs: name, what it needs beyond the benchmark's files, and what it does, then on an
    indented line its options as `name=default` (a user's own graph is `package.module:build`)."""
    from kinegraph.graphs import graphs as registry

    rows, options = [], []
    for name in registry:
        spec = registry.get(name)
        needs = ["model" if spec.needs_model else "no model"]
        needs += ["GPU when present"] * spec.needs_gpu + ["trajectory"] * spec.needs_trajectory
        needs += [f"column {field}" for field in spec.needs_fields]
        rows.append([name, ", ".join(needs), spec.description])
        options.append(option_defaults(spec))
    lines = aligned(rows).splitlines()
    return "".join(f"{line}\n    options: {opts}\n" for line, opts in zip(lines, options, strict=True))


def option_defaults(spec: GraphSpec) -> str:
    """`name=default, ...` as `-O` takes them (text unquoted; `name=(required)` without a default), read
    from the builder's source so that listing imports no graph library; `none` for a graph without."""
    import inspect

    from kinegraph.graphs.source_defaults import REQUIRED, source_options

    found = source_options(spec.target)
    if found is None:  # the builder's module is imported already, or it has no source: its signature
        empty = inspect.Parameter.empty
        found = [(o.name, REQUIRED if o.default is empty else o.default) for o in spec.options]
    shown = [
        f"{name}=" + ("(required)" if value is REQUIRED else value if isinstance(value, str) else repr(value))
        for name, value in found
    ]
    return ", ".join(shown) or "none"


def models() -> str:
    """Registered model providers (`--model PROVIDER:MODEL`)."""
    from kinegraph.agents.providers import providers

    return aligned([[name] for name in providers])


LISTINGS: dict[str, Callable[[], str]] = {"benchmarks": benchmarks, "graphs": graphs, "models": models}


def describe_benchmark(name: str) -> str:
    """One benchmark's card: paper, licence, upstream code, Hub dataset, its samples' context fields, and
    its primary metric and scorer (`kinegraph describe BENCHMARK`)."""
    from typing import get_type_hints

    from kinegraph.suites import suites

    suite = suites.get(name)
    card = suite.card
    lines = [f"{name}: {card.title if card else name}"]
    if card is not None:
        fields = ", ".join(get_type_hints(card.context)) if card.context is not dict else "any"
        hub = card.hub.repo_id if card.hub else "not on the Hub"
        hub += " (with nuScenes frames)" if card.hub and card.hub.needs_nuscenes else ""
        lines += [
            f"  paper:     {card.paper}",
            f"  licence:   {card.licence}",
            f"  upstream:  {card.upstream}",
            f"  hub:       {hub}",
            f"  context:   {fields}",
        ]
        if card.keyframe_rate_hz is not None:
            lines.append(f"  frames:    keyframes at {card.keyframe_rate_hz:g} Hz (a video is sampled at it)")
    lines += [f"  metric:    {suite.primary}", f"  scorer:    {suite.scorer}"]
    return "\n".join(lines) + "\n"


def describe(name: str) -> str:
    """One graph in full: what it does, the benchmark it answers, what it needs, its model roles and its
    options with their types and defaults (`kinegraph describe GRAPH`); a benchmark's name gives its card."""
    import inspect

    from kinegraph.graphs import graph_spec
    from kinegraph.suites import suites

    if name in suites:
        return describe_benchmark(name)

    spec = graph_spec(name)
    needs = ["a model (--model)" if spec.needs_model else "no model"]
    needs += ["a GPU when present"] * spec.needs_gpu + ["the clip's ego trajectory"] * spec.needs_trajectory
    needs += [f"data column {field}" for field in spec.needs_fields]
    lines = [
        f"{spec.name}: {spec.description}",
        f"  answers:  {spec.family + ' questions' if spec.family else 'any benchmark (a user graph)'}",
        f"  needs:    {', '.join(needs)}",
        f"  roles:    {', '.join(spec.model_roles) or 'none'}"
        + (f" (to name: {', '.join(spec.own_model_roles)})" if spec.own_model_roles else ""),
        f"  setting:  {'non-official (no paper ran it)' if spec.non_official else 'a paper setting'}",
        f"  builder:  {spec.target}",
        "  options (-O key=value):" if spec.options else "  options:  none",
    ]
    rows = [
        [
            o.name,
            o.type_name,
            "required" if o.default is inspect.Parameter.empty else f"default {o.default!r}",
        ]
        for o in spec.options
    ]
    lines += ["    " + line for line in aligned(rows).splitlines()] if rows else []
    return "\n".join(lines) + "\n"
