"""QuantiPhy's home: the loader, the counterfactual priors and the synthetic world."""

from kinegraph.benchmarks.quantiphy.loader import (
    BACKGROUNDS,
    COLUMN_ALIASES,
    COUNTERFACTUAL_PRIOR,
    ID_COLUMNS,
    OPTIONAL_CONTEXT,
    PRIOR_KINDS,
    REQUIRED,
    TABLE_NAMES,
    category_of,
    codes,
    integer_ids,
    load,
    predictions_frame,
    resolve_video,
    write_submission,
)

__all__ = [
    "BACKGROUNDS",
    "COLUMN_ALIASES",
    "COUNTERFACTUAL_PRIOR",
    "ID_COLUMNS",
    "OPTIONAL_CONTEXT",
    "PRIOR_KINDS",
    "REQUIRED",
    "TABLE_NAMES",
    "category_of",
    "codes",
    "integer_ids",
    "load",
    "predictions_frame",
    "resolve_video",
    "write_submission",
]
