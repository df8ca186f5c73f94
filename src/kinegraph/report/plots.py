"""Report figures (matplotlib, rendered off-screen to PNG bytes)."""

from __future__ import annotations

import io
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from kinegraph.report.compare import Comparison  # noqa: E402


def _png(fig: plt.Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


def breakdown_bars(comparison: Comparison, title: str) -> bytes | None:
    """Grouped bars: one group per question / category, one bar per run."""
    items = comparison.item_names
    if not items:
        return None
    n = len(comparison.runs)
    width = 0.8 / n
    fig, ax = plt.subplots(figsize=(max(6.0, 0.6 * len(items) * max(1, n / 2)), 4.0))
    x = np.arange(len(items))
    for i, (run, breakdown) in enumerate(zip(comparison.runs, comparison.breakdowns, strict=True)):
        values = [breakdown.get(k) if breakdown.get(k) is not None else np.nan for k in items]
        ax.bar(x + (i - (n - 1) / 2) * width, values, width, label=run.label)
    ax.set_xticks(x, items, rotation=35, ha="right", fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel(title)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the bars, never on them
    ax.grid(axis="y", alpha=0.3)
    return _png(fig)


def delta_forest(comparison: Comparison) -> bytes | None:
    """Each run's difference from the first on the primary metric, with its 95% interval."""
    pairs = [(r.label, d) for r, d in zip(comparison.runs, comparison.deltas, strict=True) if d is not None]
    pairs = [(name, d) for name, d in pairs if not math.isnan(d.delta)]
    if not pairs:
        return None
    fig, ax = plt.subplots(figsize=(6.5, 0.6 * len(pairs) + 1.2))
    for y, (_, d) in enumerate(pairs):
        color = "tab:green" if d.low > 0 else "tab:red" if d.high < 0 else "tab:gray"
        ax.errorbar(d.delta, y, xerr=[[d.delta - d.low], [d.high - d.delta]], fmt="o", color=color, capsize=4)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(range(len(pairs)), [name for name, _ in pairs], fontsize=8)
    ax.set_xlabel(f"Δ {comparison.primary} vs {comparison.runs[0].label} (paired bootstrap 95% CI)")
    ax.grid(axis="x", alpha=0.3)
    return _png(fig)


def item_forest(comparison: Comparison) -> bytes | None:
    """Per item, each later run's difference from the first with its 95% interval (items down, Δ across).

    Filled markers: the interval excludes 0; hollow: it does not.
    """
    items = comparison.item_names
    later = [(r.label, d) for r, d in zip(comparison.runs[1:], comparison.item_deltas[1:], strict=True)]
    if not items or not any(not math.isnan(d.delta) for _, deltas in later for d in deltas.values()):
        return None
    n = len(later)
    step = 0.7 / max(n, 1)
    fig, ax = plt.subplots(figsize=(7.0, 0.35 * len(items) * max(1, n / 2) + 1.4))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for j, (name, deltas) in enumerate(later):
        color = colors[j % len(colors)]
        for y, item in enumerate(items):
            d = deltas.get(item)
            if d is None or math.isnan(d.delta) or math.isnan(d.low):
                continue
            pos = y + (j - (n - 1) / 2) * step
            xerr = [[d.delta - d.low], [d.high - d.delta]]
            face = color if d.significant else "white"
            ax.errorbar(d.delta, pos, xerr=xerr, fmt="o", color=color, mfc=face, capsize=3, ms=5)
        ax.plot([], [], "o", color=color, label=name)  # one legend entry per run
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(range(len(items)), items, fontsize=8)
    ax.set_ylim(len(items) - 0.5, -0.5)  # first item on top, as in the tables
    ax.set_xlabel(f"Δ vs {comparison.runs[0].label} (paired bootstrap 95% CI; filled = excludes 0)")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(axis="x", alpha=0.3)
    return _png(fig)
