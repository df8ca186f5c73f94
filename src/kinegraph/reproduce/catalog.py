"""The papers' tables as data: one YAML file per paper under `tables/`, read and checked here.

A table names its benchmark, the columns it prints with the suite's metric key each corresponds to (null
where the suite has none), and one arm per printed row: the paper's model (a label only), the setting,
the graph and options that reproduce it, or `status: not reproducible here` with the reason.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from kinegraph.errors import DataError, UsageError

TABLES_DIR = Path(__file__).parent / "tables"
REPRODUCIBLE = "reproducible"
NOT_HERE = "not reproducible here"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Source(_Strict):
    """Where the numbers are printed: the table's name and its line range in the paper's text."""

    table: str
    lines: str


class Arm(_Strict):
    """One printed row: what the paper ran (model label, setting) and how kinegraph runs it, if it can."""

    model: str
    setting: str = ""
    graph: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    status: Literal["reproducible", "not reproducible here"] = REPRODUCIBLE
    reason: str | None = None
    values: list[float | None]

    @model_validator(mode="after")
    def _status_is_explained(self) -> Arm:
        if self.status == REPRODUCIBLE and self.graph is None:
            raise ValueError(f"{self.label}: a reproducible arm names its graph")
        if self.status == NOT_HERE and (not self.reason or self.graph is not None):
            raise ValueError(f"{self.label}: an arm not reproducible here gives a reason and no graph")
        return self

    @property
    def label(self) -> str:
        return f"{self.model} · {self.setting}" if self.setting else self.model


class PaperTable(_Strict):
    """One table (or one half of a printed table) of a paper, with its published numbers."""

    id: str
    title: str
    benchmark: str
    source: Source
    columns: dict[str, str | None]
    unmapped: list[str] = Field(default_factory=list)
    notes: str = ""
    arms: list[Arm] = Field(min_length=1)
    paper: str = ""
    units: Literal["percent", "fraction"] = "percent"
    #: the paper's subset of the data, as `--subset` (QuantiPhy Table 2: the 2D questions); a user's
    #: `--subset` of the same key replaces it
    subset: dict[str, list[str]] = Field(default_factory=dict)
    #: the paper's model of each model role its graphs declare (labels; the paper's, not per table)
    roles: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_value_per_column(self) -> PaperTable:
        for arm in self.arms:
            if len(arm.values) != len(self.columns):
                raise ValueError(f"{arm.label}: {len(arm.values)} values for {len(self.columns)} columns")
        return self

    @property
    def key(self) -> str:
        return f"{self.paper}:{self.id}"

    @property
    def reproducible(self) -> list[Arm]:
        return [a for a in self.arms if a.status == REPRODUCIBLE]

    def published(self, arm: Arm) -> dict[str, float]:
        """The arm's printed numbers by metric key, as fractions (percent divided by 100)."""
        scale = 0.01 if self.units == "percent" else 1.0
        return {
            key: value * scale
            for key, value in zip(self.columns.values(), arm.values, strict=True)
            if key is not None and value is not None
        }


class Paper(_Strict):
    paper: str
    title: str
    seed: str
    units: Literal["percent", "fraction"] = "percent"
    notes: str = ""
    #: the paper's model of a model role (e.g. Scene-CoT's `answerer`): `reproduce` asks for the role
    roles: dict[str, str] = Field(default_factory=dict)
    tables: list[PaperTable]


def _load(path: Path) -> Paper:
    try:
        paper = Paper.model_validate(yaml.safe_load(path.read_text()))
    except ValidationError as exc:
        first = exc.errors()[0]
        raise DataError(first["msg"], path=path, field=".".join(map(str, first["loc"]))) from None
    for table in paper.tables:
        table.paper, table.units, table.roles = paper.paper, paper.units, paper.roles
    return paper


@functools.cache
def papers() -> dict[str, Paper]:
    """Every paper with published numbers, by short name (egodyn, quantiphy, tad, dsi, autodridm)."""
    loaded = [_load(path) for path in sorted(TABLES_DIR.glob("*.yaml"))]
    return {p.paper: p for p in loaded}


def all_tables() -> list[PaperTable]:
    return [t for p in papers().values() for t in p.tables]


def find_table(name: str) -> PaperTable:
    """`paper:table` (e.g. `tad:table4`); an unknown one is a UsageError naming what exists."""
    paper, sep, table = name.partition(":")
    if paper not in papers():
        raise UsageError(f"unknown paper {paper!r}; known: {', '.join(papers())}")
    tables = {t.id: t for t in papers()[paper].tables}
    if not sep or table not in tables:
        raise UsageError(f"unknown table {name!r}; {paper} has: {', '.join(tables)}")
    return tables[table]
