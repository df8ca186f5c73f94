"""A small editable price table (USD per million tokens) that turns token usage into cost.

The table ships as `prices.yaml` beside this module; `KINEGRAPH_PRICES=/path.yaml` or
`get_backend(..., prices=PATH)` replaces it. A model the table does not list costs 0.0 (documented
fallback: local and replayed models are free, and an unlisted API model is reported once as a warning).
"""

from __future__ import annotations

import fnmatch
import functools
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

from kinegraph.errors import DataError
from kinegraph.yaml_files import read_yaml

PRICES_ENV = "KINEGRAPH_PRICES"
DEFAULT_PRICES = Path(__file__).with_name("prices.yaml")
FREE_PROVIDERS = frozenset({"vllm", "transformers", "replay", "scripted", "reader"})


@dataclass(frozen=True)
class Price:
    input_usd_per_mtok: float
    output_usd_per_mtok: float


class PriceTable:
    """provider -> {model name or glob -> Price}; the exact name wins, then the longest matching glob."""

    def __init__(self, table: dict[str, dict[str, Price]], source: str = "<memory>") -> None:
        self.table = table
        self.source = source
        self._warned: set[str] = set()

    @classmethod
    def load(cls, path: str | Path | None = None) -> PriceTable:
        """Read `path`, else `$KINEGRAPH_PRICES`, else the packaged table."""
        chosen = Path(path or os.environ.get(PRICES_ENV) or DEFAULT_PRICES).resolve()
        mtime_ns = chosen.stat().st_mtime_ns if chosen.exists() else 0
        return _load_cached(str(chosen), mtime_ns)

    def price(self, provider: str, model: str) -> Price | None:
        models = self.table.get(provider, {})
        if model in models:
            return models[model]
        matches = [pattern for pattern in models if fnmatch.fnmatchcase(model, pattern)]
        return models[max(matches, key=len)] if matches else None

    def cost_usd(self, provider: str, model: str, input_tokens: int, output_tokens: int) -> float:
        if input_tokens < 0 or output_tokens < 0:
            raise ValueError(f"negative token counts ({input_tokens}, {output_tokens}) have no cost")
        price = self.price(provider, model)
        if price is None:
            if provider not in FREE_PROVIDERS and f"{provider}:{model}" not in self._warned:
                self._warned.add(f"{provider}:{model}")
                warnings.warn(
                    f"no price for {provider}:{model} in {self.source}; cost reported as 0", stacklevel=2
                )
            return 0.0
        return (input_tokens * price.input_usd_per_mtok + output_tokens * price.output_usd_per_mtok) / 1e6


@functools.lru_cache(maxsize=8)
def _load_cached(path: str, mtime_ns: int) -> PriceTable:
    raw = read_yaml(path)
    if not isinstance(raw, dict):
        raise DataError("expected a mapping provider -> {model: {input, output}}", path=path)
    table: dict[str, dict[str, Price]] = {}
    for provider, models in raw.items():
        if not isinstance(models, dict):
            raise DataError("expected a mapping of models", path=path, field=str(provider))
        table[str(provider)] = {}
        for model, entry in models.items():
            where = f"{provider}.{model}"
            if not isinstance(entry, dict) or not {"input", "output"} <= set(entry):
                raise DataError("expected {input: USD/Mtok, output: USD/Mtok}", path=path, field=where)
            try:
                table[str(provider)][str(model)] = Price(float(entry["input"]), float(entry["output"]))
            except (TypeError, ValueError):
                raise DataError("prices must be numbers", path=path, field=where) from None
    return PriceTable(table, source=path)
