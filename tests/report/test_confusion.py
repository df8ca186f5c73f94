"""The HTML report's confusion matrices: labelled axes, class names on both, readable counts on every cell."""

from __future__ import annotations

import re
from html import unescape

import pytest

from kinegraph.report import compare, write_report
from kinegraph.report.confusion import DARK_TEXT, cell_colour, confusion_table, contrast, text_colour


@pytest.mark.parametrize("share", [i / 20 for i in range(21)])
def test_every_cell_colour_keeps_its_number_readable(share):
    background = cell_colour(share)
    text = tuple(int(text_colour(background)[i : i + 2], 16) for i in (1, 3, 5))
    assert contrast(background, text) >= 4.5  # WCAG AA for normal text
    assert min(cell_colour(0.0)) == 255 and text_colour(cell_colour(0.0)) == DARK_TEXT  # light, not navy


def test_a_matrix_names_true_and_predicted_and_every_class_on_both_axes():
    page = confusion_table("direction", ["left", "right", "none"], [[5, 1, 0], [0, 7, 2], [1, 0, 3]])
    assert "true ↓" in page and "predicted →" in page and "<caption>direction</caption>" in page
    for label in ("left", "right", "none"):
        assert f"<th scope=col>{label}</th>" in page and f"<th scope=row>{label}</th>" in page
    full = re.search(r'<td style="background:rgb\((\d+), (\d+), (\d+)\);color:(#\w+)">7</td>', page)
    assert full and full.group(4) == "#ffffff"  # the fullest cell is the darkest: white numbers on it


def test_the_html_report_shows_egodyn_confusions_as_labelled_tables(tmp_path):
    from tests.support.suite_runs import suite_run

    comparison = compare(suite_run("egodyn", tmp_path), n_boot=50)
    assert any(comparison.confusions)
    page = unescape(write_report(comparison, tmp_path / "r.html").read_text())
    assert "<h2>Confusion matrices · " in page and 'alt="confusions' not in page
    assert page.count("<table class=confusion>") == len(comparison.confusions[0])
    assert page.count("predicted →") == len(comparison.confusions[0])
