"""A self-contained HTML report (figures inlined as PNG data URLs; no network needed to open it)."""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path

from kinegraph.atomic import write_atomic
from kinegraph.jsonfiles import without_float_noise
from kinegraph.report.ablation import sections
from kinegraph.report.compare import Comparison
from kinegraph.report.confusion import confusion_tables
from kinegraph.report.tables import item_rows, role_rows, rows, warning_lines

STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem;max-width:1200px;color:#222}
table{border-collapse:collapse;font-size:.85rem;margin:1rem 0;max-width:100%}
th,td{border:1px solid #ccc;padding:.3rem .5rem;text-align:right}
td.long{overflow-wrap:anywhere;text-align:left;min-width:12rem}
th:first-child,td:first-child{text-align:left}
th{background:#f3f1ff}
img{max-width:100%;margin:.5rem 0;border:1px solid #eee}
.note{color:#666;font-size:.85rem}
.confusions{display:flex;flex-wrap:wrap;gap:1rem;align-items:flex-start}
table.confusion{margin:0}
table.confusion caption{font-weight:600;padding:.2rem}
table.confusion td{text-align:center;min-width:2rem}
table.confusion th.axis{background:#fff;font-style:italic;text-align:center}
"""


def _img(png: bytes | None, alt: str) -> str:
    if png is None:
        return ""
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'


#: A cell longer than this wraps anywhere (paths, run names with options, errors); shorter ones stay whole.
LONG_CELL = 32


def _td(text: str) -> str:
    return (
        f"<td class=long>{html.escape(text)}</td>"
        if len(text) > LONG_CELL
        else f"<td>{html.escape(text)}</td>"
    )


def html_table(header: list[str], body: list[list[str]]) -> str:
    """A plain HTML table of escaped text cells; long cells wrap so the table fits the page."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    rows_html = "".join("<tr>" + "".join(map(_td, row)) + "</tr>" for row in body)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows_html}</tbody></table>"


def _scoring(comparison: Comparison) -> str:
    """The suite's scorer (official metric or kinegraph's own) and its notes on scoring."""
    notes = "".join(
        f"<li>{html.escape(key)}: {html.escape(value)}</li>" for key, value in comparison.notes.items()
    )
    return f"<p class=note>Scores: {html.escape(comparison.scorer)}.</p>" + (
        f"<ul class=note>{notes}</ul>" if notes else ""
    )


def render(comparison: Comparison) -> str:
    from kinegraph.report import plots  # matplotlib: only the HTML report draws figures

    header, body = rows(comparison)
    parts = [
        f"<h1>kinegraph · {html.escape(comparison.benchmark)}</h1>",
        "<p class=note>First run is the baseline. Δ = paired bootstrap over clips/videos, 95% percentile "
        "interval, for the primary metric and for each question / task; * marks an interval that "
        "excludes 0 (per item, not corrected for multiplicity). Errors are failed calls (not parse "
        "failures), shown separately and never rewritten into answers.</p>",
        _scoring(comparison),
        html_table(header, body),
        "<h2>Difference from the baseline</h2>",
        _img(plots.delta_forest(comparison), "deltas"),
        "<h2>Per question / task</h2>",
        html_table(*item_rows(comparison)) if comparison.item_names else "",
        _img(plots.breakdown_bars(comparison, comparison.primary), "breakdown"),
        _img(plots.item_forest(comparison), "item deltas"),
    ]
    for section in sections(comparison):
        parts += [f"<h2>{html.escape(section.title)}</h2>", html_table(section.header, section.body)]
    for run, confusions in zip(comparison.runs, comparison.confusions, strict=True):
        if confusions:
            parts += [
                f"<h2>Confusion matrices · {html.escape(run.label)}</h2>",
                confusion_tables(confusions),
            ]
    parts.append(
        "<h2>Runs</h2>"
        + html_table(
            ["run", "directory", "tokens in", "tokens out", "requests", "cached", "cost $"],
            [
                [
                    r.label,
                    str(r.path),
                    str(r.usage.input_tokens),
                    str(r.usage.output_tokens),
                    str(r.usage.requests),
                    str(r.usage.cached_requests),
                    f"{r.usage.cost_usd:.4f}",
                ]
                for r in comparison.runs
            ],
        )
    )
    header, body = role_rows(comparison)
    if body:
        parts.append("<h2>Cost by model role</h2>" + html_table(header, body))
    warnings = warning_lines(comparison)
    if warnings:
        items = "".join(f"<li>{html.escape(line)}</li>" for line in warnings)
        parts.append(f"<h2>Warnings</h2><ul class=warnings>{items}</ul>")
    body_html = "\n".join(p for p in parts if p)
    return (
        f"<!doctype html><html><head><meta charset=utf-8><title>kinegraph report</title>"
        f"<style>{STYLE}</style></head><body>{body_html}</body></html>"
    )


#: What `write_report` writes, by the file's suffix: the HTML page, markdown, or every number as JSON.
REPORT_SUFFIXES = (".html", ".md", ".json")


def write_report(comparison: Comparison, out: str | Path) -> Path:
    """Write the HTML report, or markdown when `out` ends in .md, or every number as JSON for .json."""
    from kinegraph.report.summary import as_dict
    from kinegraph.report.tables import markdown

    out = Path(out)
    if out.suffix not in REPORT_SUFFIXES:
        raise ValueError(f"{out}: a report is {', '.join(REPORT_SUFFIXES)}; name the file with one of them")
    if out.suffix == ".md":
        text = markdown(comparison)
    elif out.suffix == ".json":
        text = json.dumps(without_float_noise(as_dict(comparison)), indent=1) + "\n"
    else:
        text = render(comparison)
    return write_atomic(out, text)
