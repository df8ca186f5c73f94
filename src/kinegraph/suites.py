"""The benchmark registry: one `Suite` per benchmark (load, score, evaluate files, export, statistics).

`suites` is the one registry of benchmarks: the runner, the reports and `kinegraph evaluate|synth|list`
read it, and a suite also names its synthetic generator and the scorer's status (official or not).
`group_stats` turns a run into additive per-group statistics (one row per clip or video) and a finalizer
that computes the headline metric from summed rows. A paired bootstrap then only resamples rows, which is
exact for these metrics and fast (no re-scoring per resample). `item_stats` does the same for every entry
of the per-question / per-task `breakdown`, over the same groups.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from kinegraph.benchmarks.card import Card
from kinegraph.registry import Registry, UnknownEntryError, import_object
from kinegraph.types import Prediction, Sample

if TYPE_CHECKING:  # numpy is imported where statistics are computed: `kinegraph evaluate` needs none
    import numpy as np

Finalize = Callable[["np.ndarray"], "np.ndarray"]
Warn = Callable[[str], None]


class Generate(Protocol):
    """Write a synthetic set with known answers in the official layout; returns the path its loader reads."""

    def __call__(self, out_dir: Path, n: int, seed: int) -> Path: ...


@dataclass(frozen=True)
class LazyGenerate:
    """A generator named `package.module:function`, imported on its first call: the worlds import scipy
    and cv2, which scoring, listing and `--help` never need."""

    target: str

    def resolve(self) -> Any:
        """The generator function itself (imported now), with whatever further options it takes."""
        return import_object(self.target)

    def __call__(self, out_dir: Path, n: int, seed: int) -> Path:
        return self.resolve()(out_dir, n=n, seed=seed)


class EvaluateFiles(Protocol):
    """Score stored prediction files (no model); returns the report text: JSON, or the official CSV.

    `warn` receives what upstream would count silently; the keywords are the suite's `evaluate_flags`.
    """

    def __call__(self, predictions: Any, warn: Warn, **flags: Any) -> str: ...


@dataclass(frozen=True)
class Flag:
    """One parameter of `kinegraph evaluate <benchmark>`, passed to `evaluate_files` as keyword `name`.

    `default=...` makes it required; `spellings` default to `--<name with dashes>` (a bool is a plain
    on-switch); `positional` makes it an argument; `extra` holds further click settings (`dir_okay`).
    """

    name: str
    type: Any
    help: str
    default: Any = ...
    spellings: tuple[str, ...] = ()
    positional: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GroupStats:
    """Per-group additive statistics: `matrix[g]` for `groups[g]`; `finalize(sum over rows) -> metric`."""

    groups: list[str]
    matrix: np.ndarray
    finalize: Finalize

    def metric(self) -> float:
        return float(self.finalize(self.matrix.sum(axis=0)[None, :])[0])


@dataclass(frozen=True)
class Suite:
    """Everything kinegraph needs to run and compare a benchmark; its facts are on its `card`."""

    name: str
    load: Callable[..., list[Sample]]
    score: Callable[[Sequence[Sample], Sequence[Prediction]], dict[str, Any]]
    export: Callable[[Sequence[Sample], Sequence[Prediction], Path], list[Path]]
    headline: Callable[[dict[str, Any]], dict[str, float | None]]
    group_stats: Callable[[Sequence[Sample], Sequence[Prediction]], GroupStats]
    primary: str
    breakdown: Callable[[dict[str, Any]], dict[str, float | None]] = lambda metrics: {}
    confusions: Callable[[dict[str, Any]], dict[str, dict[str, Any]]] = lambda metrics: {}
    # breakdown key -> GroupStats whose metric() is that breakdown value (same groups as group_stats)
    item_stats: Callable[[Sequence[Sample], Sequence[Prediction]], dict[str, GroupStats]] = (
        lambda samples, predictions: {}
    )
    # True only where the scorer reproduces an official one (parity-tested); else it is kinegraph's own
    official: bool = False
    notes: dict[str, str] = field(default_factory=dict)
    generate: Generate | None = None
    evaluate_files: EvaluateFiles | None = None
    evaluate_flags: tuple[Flag, ...] = ()
    # `--subset` keys besides `ids`: key name -> the sample's value for it (see kinegraph.subsets)
    subset_keys: dict[str, Callable[[Sample], str | None]] = field(default_factory=dict)
    # the subset key `reproduce --limit N` spreads over (N groups per task / category): averages defined
    strata: str | None = None
    # the benchmark's card (paper, licence, upstream, Hub layout, context schema, ad-hoc questions)
    card: Card | None = None

    @property
    def scorer(self) -> str:
        """What the reports say about the scores: the official metric, or kinegraph's own scorer."""
        if self.official:
            return "official metric (parity with the upstream scorer)"
        return "kinegraph's own scorer (non-official)"


def samples_from_predictions(predictions: Sequence[Prediction]) -> list[Sample]:
    """What scoring needs of each sample, rebuilt from a run's predictions (reports need no data files)."""
    return [
        Sample(
            id=p.sample_id,
            benchmark=p.benchmark,
            group=p.group or p.sample_id,
            question_id=p.question_id,
            question="",
            answer=p.ground_truth,
            metadata=p.metadata,
        )
        for p in predictions
    ]


def _column_mean(sums: np.ndarray) -> np.ndarray:
    """Sum / count per resample (columns [sum, count]); NaN without a count."""
    import numpy as np

    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sums[:, 1] > 0, sums[:, 0] / np.maximum(sums[:, 1], 1), np.nan)


def class_recall_stats(pairs: Sequence[tuple[str, str, str]]) -> GroupStats:
    """Pooled balanced accuracy from (group, oracle, pred) triples: rows = [tp, support] per class."""
    import numpy as np

    classes = sorted({o for _, o, _ in pairs} | {p for _, _, p in pairs})
    index = {c: i for i, c in enumerate(classes)}
    k = len(classes)
    rows: dict[str, np.ndarray] = {}
    for group, oracle, pred in pairs:
        row = rows.setdefault(group, np.zeros(2 * k))
        row[k + index[oracle]] += 1
        if oracle == pred:
            row[index[oracle]] += 1
    groups = sorted(rows)

    def finalize(sums: np.ndarray) -> np.ndarray:
        tp, support = sums[:, :k], sums[:, k:]
        with np.errstate(invalid="ignore", divide="ignore"):
            recall = np.where(support > 0, tp / np.maximum(support, 1), np.nan)
        return np.nanmean(recall, axis=1) if k else np.full(len(sums), np.nan)

    matrix = np.array([rows[g] for g in groups]) if groups else np.zeros((0, 2 * k))
    return GroupStats(groups, matrix, finalize)


def mean_columns(
    groups: list[str], matrix: np.ndarray, names: Sequence[str], keep_empty: bool = True
) -> dict[str, GroupStats]:
    """One mean GroupStats per item from a groups x [sum, count per item] matrix (items in `names` order).

    Every item keeps all the groups, so one set of bootstrap draws serves every item. With
    `keep_empty=False` items without any count are left out (for breakdowns that omit unscored items).
    """
    if matrix.shape[1] != 2 * len(names):
        raise ValueError(f"expected {2 * len(names)} columns for {len(names)} items, got {matrix.shape[1]}")
    out = {}
    for k, name in enumerate(names):
        columns = matrix[:, 2 * k : 2 * k + 2]
        if keep_empty or columns[:, 1].sum() > 0:
            out[name] = GroupStats(groups, columns, _column_mean)
    return out


suites: Registry[Suite] = Registry("benchmark suite")
suites.register("egodyn", "kinegraph.evaluators.egodyn_suite:SUITE")
suites.register("quantiphy", "kinegraph.evaluators.quantiphy_suite:SUITE")
suites.register("tad", "kinegraph.evaluators.tad_suite:SUITE")
suites.register("stsbench", "kinegraph.evaluators.stsbench_suite:SUITE")
suites.register("dsi", "kinegraph.evaluators.dsi_suite:SUITE")
suites.register("autodridm", "kinegraph.evaluators.autodridm_suite:SUITE")


def synthetic_generator(name: str) -> Generate:
    """What `kinegraph synth NAME` runs: a benchmark's own generator, or a world that is no benchmark."""
    from kinegraph.benchmarks.synthetic import generators

    if name in suites and (generate := suites.get(name).generate) is not None:
        return generate.resolve() if isinstance(generate, LazyGenerate) else generate
    if name in generators:
        return generators.get(name)
    known = sorted([n for n in suites if suites.get(n).generate is not None] + generators.names())
    raise UnknownEntryError(f"unknown synthetic world {name!r}; known: {', '.join(known)}")


def card_of(name: str | None) -> Card | None:
    """The card of benchmark `name`, or None for a name that is no registered benchmark (a user's graph)."""
    if name is None or name not in suites:
        return None
    return suites.get(name).card
