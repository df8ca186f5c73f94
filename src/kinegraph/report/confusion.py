"""Confusion matrices as HTML tables: true labels down, predicted across, a light colour map whose
numbers keep a readable contrast with their cell (white on the darkest cells, black elsewhere; WCAG AA)."""

from __future__ import annotations

import html
from collections.abc import Sequence

#: The colour map's ends: white for an empty cell, a mid blue for the fullest one.
LOW_RGB = (255, 255, 255)
HIGH_RGB = (33, 102, 172)
DARK_TEXT = "#000000"
LIGHT_TEXT = "#ffffff"


def cell_colour(share: float) -> tuple[int, int, int]:
    """The background for a cell holding `share` (0..1) of the matrix's largest count."""
    share = min(max(share, 0.0), 1.0)
    return tuple(round(lo + (hi - lo) * share) for lo, hi in zip(LOW_RGB, HIGH_RGB, strict=True))


def luminance(rgb: Sequence[int]) -> float:
    """WCAG relative luminance of an sRGB colour (0 black .. 1 white)."""

    def channel(c: int) -> float:
        x = c / 255
        return x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4

    r, g, b = map(channel, rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: Sequence[int], b: Sequence[int]) -> float:
    """WCAG contrast ratio of two colours (1 .. 21)."""
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def text_colour(background: Sequence[int]) -> str:
    """The text colour (dark or white) with the higher contrast against `background`."""
    dark = _rgb(DARK_TEXT)
    return DARK_TEXT if contrast(background, dark) >= contrast(background, _rgb(LIGHT_TEXT)) else LIGHT_TEXT


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))


def confusion_table(name: str, labels: Sequence[str], matrix: Sequence[Sequence[float]]) -> str:
    """One question's matrix: rows are the true label, columns the predicted one, counts annotated."""
    top = max((v for row in matrix for v in row), default=0) or 1
    head = "".join(f"<th scope=col>{html.escape(str(label))}</th>" for label in labels)
    body = []
    for label, row in zip(labels, matrix, strict=True):
        cells = []
        for value in row:
            bg = cell_colour(value / top)
            style = f"background:rgb{bg};color:{text_colour(bg)}"
            cells.append(f'<td style="{style}">{int(value)}</td>')
        body.append(f"<tr><th scope=row>{html.escape(str(label))}</th>{''.join(cells)}</tr>")
    return (
        f"<table class=confusion><caption>{html.escape(name)}</caption>"
        f"<thead><tr><th class=axis rowspan=2>true ↓</th>"
        f"<th class=axis colspan={len(labels)}>predicted →</th></tr><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def confusion_tables(confusions: dict[str, dict]) -> str:
    """Every question's matrix, side by side where the page is wide enough."""
    tables = [
        confusion_table(q, confusions[q]["labels"], confusions[q]["matrix"]) for q in sorted(confusions)
    ]
    return f"<div class=confusions>{''.join(tables)}</div>"
