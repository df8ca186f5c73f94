"""A sweep's reports compare its runs as the sweep file's `pairs` says, with `compare --pairs`'s tables."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from kinegraph.report.sweep import write_sweep_reports

PAIRS_TITLE = "Every pair of runs: Δ task_average (b − a, paired bootstrap 95% CI), Holm over pairs"


@dataclass
class Finished:
    name: str
    benchmark: str
    graph: str
    out_dir: str
    status: str = "completed"
    options: dict = field(default_factory=dict)
    n_predictions: int = 60
    error: str | None = None


@pytest.mark.parametrize(("pairs", "has_pairs"), [("first", False), ("all", True)])
def test_the_sweep_report_shows_every_pair_only_when_asked(tad_pair, tmp_path, pairs, has_pairs):
    runs = [
        Finished("base", "tad", "tad.baseline", str(tad_pair[0])),
        Finished("tools", "tad", "tad.tcogmap", str(tad_pair[1])),
    ]
    write_sweep_reports(tmp_path / "sweep", runs, n_boot=200, pairs=pairs)
    report = (tmp_path / "sweep" / "report.md").read_text()
    assert (PAIRS_TITLE in report) is has_pairs
    assert (PAIRS_TITLE in (tmp_path / "sweep" / "tad" / "report.html").read_text()) is has_pairs
    if has_pairs:
        assert "| 1. tad.baseline | 2. tad.tcogmap | +0.400 [" in report  # (0.8 + 0) / 2 on task_average


def test_a_2x2_sweep_short_of_four_runs_with_predictions_says_so(tad_pair, tmp_path):
    runs = [
        Finished("base", "tad", "tad.baseline", str(tad_pair[0])),
        Finished(
            "a",
            "tad",
            "tad.agent",
            str(tmp_path / "never-ran"),
            status="failed",
            n_predictions=0,
            error="boom",
        ),
        Finished(
            "b", "tad", "tad.ego_pose", str(tmp_path / "never-ran-either"), status="failed", n_predictions=0
        ),
        Finished("both", "tad", "tad.tcogmap", str(tad_pair[1])),
    ]
    write_sweep_reports(tmp_path / "sweep", runs, n_boot=200, pairs="2x2")
    report = (tmp_path / "sweep" / "report.md").read_text()
    assert "2x2 design left out: 2 of its 4 runs have predictions; every pair instead." in report
    assert PAIRS_TITLE in report and "2x2 design on" not in report
    assert "2x2 design left out" in (tmp_path / "sweep" / "report.html").read_text()
    assert "| tad | a (non-official) | failed | 0 | boom |" in report  # the run of tad.agent, labelled


@pytest.mark.slow
def test_the_sweep_page_fits_1400_px_without_horizontal_overflow(tad_pair, tmp_path):
    """Long run names, options and errors wrap inside their cells (the page once overflowed at 1,400 px)."""
    from tests.support.browser import browser_page, screenshot

    long = {"encoding": "timeseries_with_a_very_long_setting_name", "window_frames": 64, "seed": 12345}
    runs = [
        Finished("base-" + "x" * 60, "tad", "tad.baseline", str(tad_pair[0]), options=long),
        Finished("tools-" + "y" * 60, "tad", "tad.tcogmap", str(tad_pair[1]), options=long),
        Finished("failed", "tad", "tad.tcogmap", "", status="failed", n_predictions=0, error="E" * 300),
    ]
    write_sweep_reports(tmp_path / "sweep", runs, n_boot=100, pairs="all")
    for page_path in (tmp_path / "sweep" / "report.html", tmp_path / "sweep" / "tad" / "report.html"):
        with browser_page(width=1400, height=900) as page:
            page.goto(page_path.as_uri())
            widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
            assert widths[0] <= widths[1], (page_path, widths)
            screenshot(page, tmp_path, f"{page_path.parent.name}-1400.png")
