"""A graph's registry entry: what it answers, what it needs, and the options its builder takes.

The metadata lives on the entry, not on the builder function, so the runner, Ray, sweeps and the server
read one typed record; options are checked against the builder's signature here and nowhere else.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from kinegraph.errors import DataError
from kinegraph.graphs.source_defaults import literal_defaults
from kinegraph.registry import import_object
from kinegraph.types import DEFAULT_ROLE, RoleModel

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph

    from kinegraph.types import Sample

#: The role of a graph with one backend: the runtime context's default backend (`GraphContext.backend`).
MODEL_ROLE = DEFAULT_ROLE


@dataclass(frozen=True)
class OptionSpec:
    """One builder option: its annotation (`Any` when it has none that resolves) and its default
    (`inspect.Parameter.empty` when the builder has none, which makes the option required)."""

    name: str
    annotation: Any = Any
    default: Any = inspect.Parameter.empty

    @property
    def required(self) -> bool:
        return self.default is inspect.Parameter.empty

    @property
    def type_name(self) -> str:
        """The annotation as a user reads it: `int`, `int | None`, `Literal['summary', 'full']`."""
        if isinstance(self.annotation, type):
            return self.annotation.__name__
        return str(self.annotation).replace("typing.", "").replace("collections.abc.", "")

    @cached_property
    def _adapter(self) -> Any:
        from pydantic import ConfigDict, TypeAdapter

        return TypeAdapter(self.annotation, config=ConfigDict(arbitrary_types_allowed=True))

    def validate(self, value: Any) -> Any:
        """`value` checked strictly against the annotation (an int passes as a float, "3" is no int)."""
        from pydantic import ValidationError

        try:
            return self._adapter.validate_python(value, strict=True)
        except ValidationError:
            raise ValueError(f"expected {self.type_name}, got {value!r}") from None


def builder_options(builder: Callable[..., Any]) -> tuple[OptionSpec, ...]:
    """The options of a builder: its named parameters, their annotations and defaults."""
    try:
        hints = typing.get_type_hints(builder)
    except (NameError, TypeError):  # annotations that do not resolve: the options go untyped
        hints = {}
    return tuple(
        OptionSpec(name=p.name, annotation=hints.get(p.name, Any), default=p.default)
        for p in inspect.signature(builder).parameters.values()
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    )


@dataclass(frozen=True)
class GraphSpec:
    """A graph: its name, its builder (`module:function`, imported on first use), what it needs to run,
    and the options its builder takes.

    `family` is the benchmark whose samples it answers (None for a user's builder, which may run on any);
    `needs_model` False: deterministic tools answer, no backend is made; `needs_gpu`: on Ray, a GPU per
    worker when the cluster has one; `needs_trajectory`: it reads the clip's ego trajectory, so the
    server refuses a request without one (it would answer from an all-zero summary); `needs_fields`:
    data columns it reads from every sample's context, so a run refuses data without them up front.
    `ceiling`: it answers from the truth (an oracle), so reports label it a ceiling, never a rival.
    `takes_video`: a model that takes video natively (`video=native`) gets the clip's video whole.
    `model_roles`: the model roles its nodes ask (`backend` alone unless declared; none when
    `needs_model` is False); each runs on the run's `--model` unless `--role NAME=...` names another,
    except `own_model_roles`, which a run must name (they have no default). `non_official`: a setting no
    paper ran (e.g. the model calls tools of its choosing), so reports label its runs non-official;
    `official_options`: options under which such a graph is a paper's setting after all (e.g. the RAFT row),
    or, for a paper's graph, the options it must keep to stay one (a sweep ablating TCogMap's thresholds
    or Scene-CoT's caption style is labelled non-official).
    """

    name: str
    target: str
    description: str
    family: str | None = None
    needs_model: bool = True
    needs_gpu: bool = False
    needs_trajectory: bool = False
    needs_fields: tuple[str, ...] = ()
    takes_video: bool = False
    model_roles: tuple[str, ...] = (MODEL_ROLE,)
    own_model_roles: tuple[str, ...] = ()
    non_official: bool = False
    #: it answers from the truth or its exact inputs: an upper bound, labelled "ceiling" in every report
    ceiling: bool = False
    official_options: tuple[tuple[str, Any], ...] = ()

    def is_non_official(self, options: Mapping[str, Any]) -> bool:
        """Whether a run of this graph with `options` is a setting no paper ran."""
        missing = [k for k, _ in self.official_options if k not in options]
        defaults = self._defaults_of(missing) if missing else {}
        official = all(options.get(k, defaults.get(k)) == v for k, v in self.official_options)
        if not self.non_official:  # a paper's graph: non-official once an option leaves the paper's setting
            return not official
        return not (self.official_options and official)

    def _defaults_of(self, names: Sequence[str]) -> dict[str, Any]:
        """The defaults of options `names`: read from the builder's source while its module is not
        imported yet (a report needs no graph library), else from its signature."""
        found = literal_defaults(self.target)
        if found is not None and all(n in found for n in names):
            return found
        return {o.name: o.default for o in self.options}

    def __post_init__(self) -> None:
        if not self.needs_model:
            if self.model_roles not in ((), (MODEL_ROLE,)):
                raise ValueError(f"graph {self.name} needs no model but declares roles {self.model_roles}")
            object.__setattr__(self, "model_roles", ())
        elif not self.model_roles:
            raise ValueError(f"graph {self.name} needs a model but declares no model role")
        if not set(self.own_model_roles) <= set(self.model_roles):
            raise ValueError(f"graph {self.name}: own_model_roles must be among its model_roles")

    def resolve_roles(self, model: str | None, named: Mapping[str, RoleModel]) -> dict[str, str]:
        """Which model fills each of the graph's roles (`named` first, else `model`); a ValueError in
        one line for a role the graph does not use, or one it needs that nothing fills."""
        unknown = sorted(set(named) - set(self.model_roles))
        if unknown:
            roles = ", ".join(self.model_roles) or "none, it runs no model"
            raise ValueError(f"graph {self.name} has no model role {unknown[0]!r} (roles: {roles})")
        filled = {}
        for role in self.model_roles:
            if role in named:
                filled[role] = named[role].model
            elif role in self.own_model_roles:
                raise ValueError(
                    f"graph {self.name} needs --role {role}=PROVIDER:MODEL (the {role} has no default model)"
                )
            elif model is None:
                if self.model_roles == (MODEL_ROLE,):
                    raise ValueError(f"graph {self.name!r} needs a model: pass --model PROVIDER:MODEL")
                raise ValueError(
                    f"graph {self.name!r} needs a model for role {role!r}: "
                    f"pass --model PROVIDER:MODEL or --role {role}=PROVIDER:MODEL"
                )
            else:
                filled[role] = model
        return filled

    @property
    def builder(self) -> Callable[..., Any]:
        """The builder function (importing its module the first time)."""
        return import_object(self.target, self.name)  # type: ignore[return-value]

    @cached_property
    def options(self) -> tuple[OptionSpec, ...]:
        """The option schema, derived from the builder's signature."""
        return builder_options(self.builder)

    def check_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """`options` checked against the schema (values as typed by it); a ValueError in one line names
        what is wrong: an unknown option, a missing one, or a value of the wrong type."""
        names = [o.name for o in self.options]
        unknown = sorted(set(options) - set(names))
        if unknown:
            raise ValueError(
                f"graph {self.name} has no option {', '.join(map(repr, unknown))} "
                f"(options: {', '.join(names) or 'none'})"
            )
        missing = [o.name for o in self.options if o.required and o.name not in options]
        if missing:
            raise ValueError(f"graph {self.name} needs option {', '.join(map(repr, missing))}")
        checked = {}
        for option in self.options:
            if option.name in options:
                try:
                    checked[option.name] = option.validate(options[option.name])
                except ValueError as exc:
                    raise ValueError(f"graph {self.name} option {option.name}: {exc}") from None
        return checked

    def check_fields(self, samples: Sequence[Sample], source: str | None) -> None:
        """A DataError in one line naming `source` and the first of `needs_fields` the data lacks: absent
        from the samples' context, or empty in one of them (the loaders write None for what is not there)."""
        for field in self.needs_fields:
            if any(field not in s.context for s in samples):
                raise DataError(
                    f"column missing: graph {self.name} reads it from every row", path=source, field=field
                )
            empty = next((s for s in samples if _empty(s.context[field])), None)
            if empty is not None:
                raise DataError(
                    f"empty for {empty.id}: graph {self.name} reads it from every row",
                    path=source,
                    field=field,
                )

    def build(self, options: Mapping[str, Any]) -> CompiledStateGraph:
        """The compiled graph for `options`, once they pass `check_options`."""
        return self.builder(**self.check_options(options))


def _empty(value: Any) -> bool:
    """None, or a string, list or mapping with nothing in it."""
    if isinstance(value, str):
        return not value.strip()
    return value is None or (isinstance(value, list | tuple | dict) and not value)


def user_graph_spec(target: str) -> GraphSpec:
    """The spec of a user's own builder `package.module:build`. Its flags are the attributes it declares
    (`build.needs_model = False`, `needs_gpu`, `needs_trajectory`, `model_roles`, `own_model_roles`, and
    `family`: the benchmark whose samples it answers, whose card the doors then read): the documented way
    to mark them."""
    builder = import_object(target)  # a ValueError in one line when it cannot be imported
    if not callable(builder):
        raise ValueError(f"graph builder {target!r} is not a function")
    doc = inspect.getdoc(builder) or ""
    return GraphSpec(
        name=target,
        target=target,
        description=doc.splitlines()[0] if doc else "",
        family=getattr(builder, "family", None),
        needs_model=bool(getattr(builder, "needs_model", True)),
        needs_gpu=bool(getattr(builder, "needs_gpu", False)),
        needs_trajectory=bool(getattr(builder, "needs_trajectory", False)),
        model_roles=tuple(getattr(builder, "model_roles", (MODEL_ROLE,))),
        own_model_roles=tuple(getattr(builder, "own_model_roles", ())),
    )
